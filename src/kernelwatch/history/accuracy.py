"""Accuracy steps: where a case's stored errors left the level its own history held (`changes`, `site`).

A case's checks on one GPU (and profile), oldest first, are replayed through the nightly's own rule
(src/kernelwatch/verdict/accuracy.py: `judge_accuracy` of each check against the ones before it): a check judged
`less accurate` or `more accurate` there is a step, from the check before it to it, with the commits between
them. The replay reads acceptances as the nightly does (an accepted or acknowledged check starts a new
level), so a step accepted by a trailer or `acknowledge` is printed as acknowledged, and a less accurate step
is open while it is not acknowledged and its case still fails in the newest check, or it lies in the newest N.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, StoredAccuracy, inputs_text, judge_accuracy

from .series import states_text


@dataclass(frozen=True)
class AccuracyKey:
    gpu: str | None
    case: str
    profile: str | None


@dataclass(frozen=True)
class AccuracyStep:
    key: AccuracyKey
    direction: str  # less accurate / more accurate
    before: StoredAccuracy
    after: StoredAccuracy
    level: tuple[StoredAccuracy, ...]  # the checks at the new level, the first run after included
    reason: str

    @property
    def ratio(self) -> float | None:
        then, now = self.before.record.max_error, self.after.record.max_error
        return None if not then or now is None else now / then

    @property
    def commit_range(self) -> str:
        return f"{self.before.commit or '?'}..{self.after.commit or '?'}"

    @property
    def acknowledged(self) -> str | None:
        return next((check.accepted_reason for check in self.level if check.accepted_reason), None)


def accuracy_series(history: dict[str, list[StoredAccuracy]]) -> dict[AccuracyKey, list[StoredAccuracy]]:
    """The store's checks (HistoryStore.accuracy_history: per case, newest first) per GPU, case and profile,
    oldest first."""
    series: dict[AccuracyKey, list[StoredAccuracy]] = {}
    for case, checks in history.items():
        for check in reversed(checks):
            series.setdefault(AccuracyKey(check.record.gpu_uuid, case, check.profile), []).append(check)
    return series


def accuracy_steps(points: list[StoredAccuracy], key: AccuracyKey) -> list[AccuracyStep]:
    """The steps of one series (oldest first), oldest first."""
    steps = []
    for index, point in enumerate(points):
        earlier = list(reversed(points[:index]))
        verdict = judge_accuracy(point.record, earlier)
        if verdict.label in (LESS_ACCURATE, MORE_ACCURATE):
            before = verdict.newest or points[index - 1]
            if steps and steps[-1].before == before and steps[-1].direction == verdict.label:
                continue  # a later check of the same step's level (its reference failed at the step, say)
            steps.append(AccuracyStep(key, verdict.label, before, point, (), verdict.reason))
    # each step's level: its run and the runs after it up to the next step
    ends = [points.index(step.after) for step in steps] + [len(points)]
    return [dataclasses.replace(step, level=tuple(points[ends[i]:ends[i + 1]])) for i, step in enumerate(steps)]


def is_open(step: AccuracyStep, points: list[StoredAccuracy], newest: int) -> bool:
    """A less accurate step nobody accepted, in the newest `newest` checks or still failing in the newest one."""
    if step.direction != LESS_ACCURATE or step.acknowledged is not None:
        return False
    position = points.index(step.after)
    return position >= len(points) - newest or points[-1].state == "failed"


def describe_step(step: AccuracyStep, points: list[StoredAccuracy], newest: int) -> list[str]:
    before, after = step.before, step.after
    ratio = step.ratio
    lines = [f"{step.direction} step" + (f" x{ratio:.3g} (max error)" if ratio is not None else "")
             + f": {step.key.case}",
             f"  GPU {step.key.gpu or 'no UUID'}, profile {step.key.profile or 'not given'}; "
             f"{inputs_text(after.record)}",
             f"  errors before: max {before.record.max_error:.6g}, avg {before.record.avg_error:.6g}; after: max "
             f"{after.record.max_error:.6g}, avg {after.record.avg_error:.6g}"
             + (f"; tolerance {after.record.tolerance_max:.3g}, margin left {100 * after.record.margin:.1f}%"
                if after.record.margin is not None else ""),
             f"  last run before: run {before.run_id}, {before.started_at} UTC, commit {before.commit or '?'}",
             f"  first run after: run {after.run_id}, {after.started_at} UTC, commit {after.commit or '?'}",
             f"  runs after: {states_text(step.level)}",
             f"  commits: {step.commit_range}"]
    if step.acknowledged is not None:
        lines.append(f"  acknowledged: {step.acknowledged}")
    elif is_open(step, points, newest):
        lines.append(f"  OPEN: if intended: python -m kernelwatch.history acknowledge '{step.key.case}' "
                     f"{after.run_id} --reason TEXT (or a commit with 'Accept-Slowdown: cases=PATTERN REASON' "
                     f"naming it before the next nightly)")
    return lines
