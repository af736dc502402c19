"""A plain model of the history's rules, written from docs/method.md ("The history store") and the README.

It answers, for a history of stored runs (`History`), what the real code answers by much cleverer means
(SQL, change-point detection, caches): which runs are a case's references on a GPU and which level it is
judged against (`references`), what window a slower case names (`window_base`), which steps a series has
(`steps`), what an acceptance covers (`accepted`, `step_accepted`), which of a series' runs fail now
(`failing`) and what `changes` reports as open (`open_changes`). It is slow and simple on purpose: lists,
loops, no cleverness, one documented rule per function. tests/history/test_model.py checks the real code
against it on histories that hypothesis makes (tests/history/model_histories.py).

The model knows where a series' levels are from the generated medians themselves: a history's levels are
flat (every run of a level has the same nominal median) and neighbouring levels differ by far more than any
detectable change, so a step is wherever the nominal median changes between two levels of at least
MIN_RUNS_AT_LEVEL runs each. That is the documented rule for such clean series, not the detector's method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

# docs/method.md, "The verdict against this GPU's history": three reference runs of a level at least, the
# newest five pooled, the newest 20 reference runs of the GPU read
HISTORY_MIN_RUNS = 3
REFERENCE_RUNS = 5
RUNS_READ = 20
# docs/method.md, "The commands": three runs at a level on each side of a step; `changes --newest` defaults to 3
MIN_RUNS_AT_LEVEL = 3
NEWEST = 3


@dataclass(frozen=True)
class CaseRun:
    """One case in one stored run, as its nightly stored it."""

    median_s: float  # the nominal median: every run of a level has the same one
    outcome: str = "passed"  # passed, failed (its test failed: slower, more energy or a slower phase), accepted
    accepted: str | None = None  # the Accept-Slowdown trailer's reason (outcome accepted)
    throttled: bool = False
    sass: str = "sass-1"
    fails_by: str = "time"  # what failed its test: time (then `window_base` is its window's base), energy, phase
    window_base: str | None = None


@dataclass(frozen=True)
class Run:
    """One stored run, on one GPU. `number` is the order it was stored in (the store's run id is number + 1):
    a late import is stored after runs that started later than it."""

    number: int
    started_at: datetime
    commit: str
    gpu: str
    cases: dict[str, CaseRun]
    other_failures: int | None = 0  # failed tests beside its cases; None: not known (an import without the count)

    @property
    def outcome(self) -> str:
        failing = self.other_failures != 0 or any(c.outcome == "failed" for c in self.cases.values())
        return "failed" if failing else "passed"

    @property
    def run_id(self) -> str:
        return str(self.number + 1)


@dataclass(frozen=True)
class History:
    """Runs in the order they were stored, and `acknowledge CASE RUN` calls in the order they were made."""

    runs: tuple[Run, ...]
    acknowledgements: tuple[tuple[str, int, str], ...] = field(default=())  # (case, run number, reason)

    def cases(self) -> list[str]:
        return sorted({case for run in self.runs for case in run.cases})

    def gpus(self) -> list[str]:
        return sorted({run.gpu for run in self.runs})


def in_time_order(runs) -> list[Run]:
    """Oldest first by the time a run started; runs that started at once in the order they were stored."""
    return sorted(runs, key=lambda run: (run.started_at, run.number))


def acceptance(history: History, case: str, run: Run) -> str | None:
    """Why a slowdown of `case` was accepted at `run`: the newest acknowledgement there, else its trailer."""
    reasons = [reason for c, number, reason in history.acknowledgements if c == case and number == run.number]
    if reasons:
        return reasons[-1]
    return run.cases[case].accepted


def failed(history: History, case: str, run: Run) -> bool:
    """The case's test failed at `run`, and nobody accepted it there."""
    return run.cases[case].outcome == "failed" and acceptance(history, case, run) is None


def failed_besides(run: Run) -> bool:
    """The run failed besides its cases (a correctness test), or it failed and how is not known."""
    return run.outcome == "failed" and run.other_failures != 0


def may_be_reference(history: History, case: str, run: Run) -> bool:
    """A case may be a reference unless it failed (and was not acknowledged), its run failed besides its
    cases, or it was throttled."""
    return not run.cases[case].throttled and not failed_besides(run) and not failed(history, case, run)


def references(history: History, case: str, gpu: str) -> list[Run] | None:
    """The runs `case` is judged against on `gpu`, oldest first; None: too few, the baseline is its reference.

    Of the newest RUNS_READ runs that may be a reference, only the newest level counts: it starts at the
    newest run where a slowdown was accepted (or acknowledged). Of that level, the runs of the newest run's
    machine code; at least HISTORY_MIN_RUNS of them, or the level's own first run where the level started
    with that code; the newest REFERENCE_RUNS of them are pooled.
    """
    usable = [run for run in in_time_order(history.runs)
              if run.gpu == gpu and case in run.cases and may_be_reference(history, case, run)]
    usable = usable[-RUNS_READ:]
    if not usable:
        return None
    level = usable
    for i, run in enumerate(usable):
        if acceptance(history, case, run) is not None:
            level = usable[i:]  # the last one found is the newest
    code = level[-1].cases[case].sass
    same_code = [run for run in level if run.cases[case].sass == code]
    starts_level = acceptance(history, case, level[0]) is not None and same_code[0] is level[0]
    if len(same_code) < HISTORY_MIN_RUNS and not starts_level:
        return None
    return same_code[-REFERENCE_RUNS:]


def window_base(history: History, case: str, gpu: str) -> str | None:
    """The commit a slower case's window starts after: its newest reference run's."""
    found = references(history, case, gpu)
    return found[-1].commit if found else None


def series(history: History, case: str, gpu: str) -> list[Run]:
    """The runs of `case` on `gpu` that `changes` reads, oldest first: every one but the throttled."""
    return [run for run in in_time_order(history.runs)
            if run.gpu == gpu and case in run.cases and not run.cases[case].throttled]


def levels(points: list[Run], case: str) -> list[list[int]]:
    """The positions of `points` grouped into levels: consecutive runs of one nominal median."""
    grouped: list[list[int]] = []
    for i, run in enumerate(points):
        if grouped and points[grouped[-1][0]].cases[case].median_s == run.cases[case].median_s:
            grouped[-1].append(i)
        else:
            grouped.append([i])
    return grouped


@dataclass(frozen=True)
class Step:
    """A step of a series: `index` is the position of its first run after; slower or faster."""

    index: int
    direction: str
    level: tuple[int, ...]  # the positions of its new level: from its first run after to the next step


def steps(points: list[Run], case: str) -> list[Step]:
    """A step is between two levels of at least MIN_RUNS_AT_LEVEL runs each; a newer level of fewer runs is
    no step yet (it is not placed a run early either), and a level of fewer runs between two long ones is
    what the histories here never hold."""
    grouped = [level for level in levels(points, case)]
    found = []
    for before, after in zip(grouped, grouped[1:], strict=False):
        if len(before) >= MIN_RUNS_AT_LEVEL and len(after) >= MIN_RUNS_AT_LEVEL:
            old, new = points[before[0]].cases[case].median_s, points[after[0]].cases[case].median_s
            found.append(Step(after[0], "slower" if new > old else "faster", ()))
    # a step's new level runs to the next step
    with_levels = []
    for k, step in enumerate(found):
        end = found[k + 1].index if k + 1 < len(found) else len(points)
        with_levels.append(Step(step.index, step.direction, tuple(range(step.index, end))))
    return with_levels


def step_accepted(history: History, case: str, points: list[Run], step: Step) -> bool:
    """A step is accepted by an acknowledgement at its first run after, or an acceptance (a trailer, an
    acknowledgement) at any run of its new level."""
    first = points[step.index]
    if any(c == case and number == first.number for c, number, _ in history.acknowledgements):
        return True
    return any(acceptance(history, case, points[i]) is not None for i in step.level)


@dataclass(frozen=True)
class Failing:
    """The newest runs of a series that failed and were not accepted."""

    first: int  # the position of the first of them
    runs: int
    step: Step | None  # the slower step whose new level holds the first of them


def failing(history: History, case: str, points: list[Run], found: list[Step]) -> Failing | None:
    """The failing stretch of a series, None where its newest run did not fail. A slower step holds it where the
    stretch's first run lies in that step's new level."""
    count = 0
    for run in reversed(points):
        if not failed(history, case, run):
            break
        count += 1
    if not count:
        return None
    first = len(points) - count
    holding = next((step for step in found if first in step.level), None)
    return Failing(first, count, holding if holding is not None and holding.direction == "slower" else None)


def failing_window(points: list[Run], case: str, stretch: Failing) -> str:
    """The commit range a failing stretch names: the window its first failed run stored, else the commits
    between the run before it and it."""
    first = points[stretch.first]
    base = first.cases[case].window_base
    if base is not None:
        return f"{base}..{first.commit}"
    before = points[stretch.first - 1].commit if stretch.first else "?"
    return f"{before}..{first.commit}"


def open_changes(history: History, newest: int = NEWEST) -> set[tuple[str, str, str]]:
    """What `changes` reports as open: ("step", case, first run after) for a slower step whose first run after is
    among its series' `newest` runs, or whose case still fails in the newest run within its level, that nothing
    accepted; ("failing", case, first failed run) for a failing stretch that no slower step holds."""
    found = set()
    for gpu in history.gpus():
        for case in history.cases():
            points = series(history, case, gpu)
            if not points:
                continue
            its_steps = steps(points, case)
            stretch = failing(history, case, points, its_steps)
            for step in its_steps:
                recent = step.index >= len(points) - newest
                held = stretch is not None and stretch.step == step
                if step.direction == "slower" and (recent or held) and not step_accepted(history, case, points, step):
                    found.add(("step", case, points[step.index].run_id))
            if stretch is not None and stretch.step is None:
                found.add(("failing", case, points[stretch.first].run_id))
    return found


def described(history: History) -> str:
    """One line per run, in time order: what a counterexample holds, readably."""
    lines = []
    for run in in_time_order(history.runs):
        cases = "; ".join(
            f"{case[-4:-1]} {one.median_s * 1e6:.1f}us {one.outcome}{'+' + one.fails_by if one.outcome == 'failed' else ''}"
            f"{' throttled' if one.throttled else ''} {one.sass}{' base ' + one.window_base[-4:] if one.window_base else ''}"
            for case, one in sorted(run.cases.items()))
        acks = [case[-4:-1] for case, number, _ in history.acknowledgements if number == run.number]
        lines.append(f"run {run.run_id} {run.gpu[4:8]} {run.started_at:%d %H}h {run.commit[-4:]} other {run.other_failures}: "
                     f"{cases}{' ack ' + ','.join(acks) if acks else ''}")
    return "\n".join(lines)
