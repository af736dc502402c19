"""Accuracy as a history: one correctness check's errors, and the `less accurate` / `more accurate` verdict.

Every correctness check (the suites' own through the `kernelwatch_accuracy` fixture, and the `kernelwatch`
fixture's reference check) makes one `AccuracyRecord`: the maximum and average error per element against the
float64 reference, the tolerance, and the identity of the inputs (shape, input kind, seed, the measure). The
records of a run go into its JSON document under ACCURACY_KEY (pytest-benchmark's `update_json` hook writes
them beside the timed cases: saved baselines, `--benchmark-json` files and the run the history store records
alike) and into the store's `accuracy` table (added by the store's migration 6).

`judge_accuracy` judges a record against the same case's records of this GPU's history (newest first, up to
the newest accepted one: an acceptance starts a new level), on the same inputs only:

* a history whose errors repeat bit for bit (a deterministic kernel on fixed inputs: the same float32
  operations in the same order give the same result, and the float64 reference is computed the same way)
  allows no growth at all beyond a relative slack of SLACK (1e-8): re-rounding the float64 reference (another
  BLAS build or thread count) moves an error of 1e-8 or more by at most about 2e-16 absolute, 2e-8 relative of
  the smallest float32 errors and usually far less, while one float32 rounding changed in one element of a
  16-million-element result moves the average error by about 1e-7 relative and the maximum by far more;
* a history whose errors vary (atomics, split reductions, a library's heuristics) gives a band learnt from it:
  its range [lo, hi] widened by its own width on each side, as the noise model widens time by its spread.
  `less accurate` past the top of the band, `more accurate` below its bottom.

Both rules need the same inputs every run: a record without a seed (the `kernelwatch` marker's or
`kernelwatch_accuracy.record`'s `seed=`) is kept but not judged against its history (UNSEEDED); under
`--kernelwatch-compare-ref` both sides are checked on the very same inputs, seeded or not.

`less accurate` fails the case's test as `slower` does; an `Accept-Slowdown` trailer naming the case
(`cases=PATTERN`) in the window since the newest reference, or `acknowledge`, accepts it (label `accepted`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from kernelwatch.verdict.labels import ACCEPTED, NEW, SAME

LESS_ACCURATE = "less accurate"
MORE_ACCURATE = "more accurate"
ACCURACY_LABELS = (LESS_ACCURATE, MORE_ACCURATE, ACCEPTED, NEW, SAME)
ACCURACY_KEY = "kernelwatch_accuracy"  # the run document's list of accuracy records
SLACK = 1e-8  # relative growth a bit-for-bit history still allows (see the module's docstring)
REFERENCE_CHECKS = 20  # at most this many of a case's newest stored checks (same inputs) make its reference band
MARGIN_FLAG = 0.1  # the index flags a case with less than this fraction of its tolerance left
# inputs drawn afresh each run (no seed) give other errors each run: two runs may even repeat a maximum error by
# chance (a float32 sum's is often exactly 2**-24), which the bit-for-bit rule would then hold the next run to
UNSEEDED = ("not judged against its history: its inputs carry no seed, so their errors need not repeat from run to "
            "run (draw them from a seed and give it as seed=)")


def finite_or_none(value) -> float | None:
    """A JSON-storable error: NaN and infinity (an element never written, a NaN result) are None."""
    return float(value) if value is not None and math.isfinite(value) else None


@dataclass
class AccuracyRecord:
    """One correctness check: its errors, tolerance and inputs, where it ran, and how it was judged."""

    case: str  # pytest node id of the check
    max_error: float | None  # None: not finite (NaN or infinity somewhere)
    avg_error: float | None
    tolerance_max: float | None = None
    tolerance_avg: float | None = None
    shape: str | None = None
    input_kind: str | None = None
    seed: int | None = None
    measure: str | None = None  # "relative" |out - ref| / |ref|, or "scaled" |out - ref| / scale
    kernel: str | None = None
    passed: bool = True  # within its tolerance
    gpu_uuid: str | None = None
    worker: str | None = None
    # the verdict against this GPU's history, where judged
    verdict: str | None = None
    verdict_reason: str | None = None
    reference_max: float | None = None
    reference_avg: float | None = None
    reference: str | None = None  # "history run 12" (the newest reference), or a git ref (A/B)
    reference_runs: int | None = None
    reference_commit: str | None = None
    window: dict | None = None  # the commits since the newest reference (a less accurate case's)
    accepted_reason: str | None = None
    references: list[dict] = field(default_factory=list)  # ReferenceRun.as_dict of the newest reference

    @property
    def identity(self) -> tuple:
        """The inputs: only records of the same inputs are compared."""
        return (self.shape, self.input_kind, self.seed, self.measure)

    @property
    def fails(self) -> bool:
        return self.verdict == LESS_ACCURATE

    @property
    def ratio(self) -> float | None:
        """Maximum error now over the reference's."""
        return _ratio(self.max_error, self.reference_max)

    @property
    def avg_ratio(self) -> float | None:
        return _ratio(self.avg_error, self.reference_avg)

    @property
    def margin(self) -> float | None:
        """The fraction of the tolerance left by the maximum error: 1 - max / tolerance (None without one)."""
        if self.max_error is None or not self.tolerance_max:
            return None
        return 1.0 - self.max_error / self.tolerance_max

    def outcome(self) -> str:
        """The stored outcome: failed (out of tolerance, or less accurate), accepted, passed."""
        if not self.passed or self.fails:
            return "failed"
        return "accepted" if self.verdict == ACCEPTED else "passed"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> AccuracyRecord:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


def _ratio(now, then) -> float | None:
    if now is None or then is None:
        return None
    if then == 0:
        return 1.0 if now == 0 else math.inf
    return now / then


@dataclass(frozen=True)
class StoredAccuracy:
    """One stored record of a case, as its history reads it (newest first)."""

    run_id: int
    commit: str | None
    started_at: str | None
    record: AccuracyRecord
    outcome: str  # passed, failed, accepted
    accepted_reason: str | None = None  # its own, or an acknowledgement's
    profile: str | None = None
    branch: str | None = None
    gpu_model: str | None = None

    @property
    def state(self) -> str:
        """How `changes` and the dashboard mark it: failed, accepted or passed."""
        if self.outcome == "failed" and self.accepted_reason is None:
            return "failed"
        return "accepted" if self.accepted_reason is not None or self.outcome == "accepted" else "passed"


@dataclass(frozen=True)
class AccuracyVerdict:
    label: str | None  # None: not judged (inputs without a seed)
    reason: str
    reference_max: float | None = None
    reference_avg: float | None = None
    references: tuple[StoredAccuracy, ...] = ()

    @property
    def newest(self) -> StoredAccuracy | None:
        return self.references[0] if self.references else None


def references_of(record: AccuracyRecord, history: list[StoredAccuracy]) -> list[StoredAccuracy]:
    """The history that may be the record's reference: the same inputs, not failed (unless accepted), newest
    first, up to and including the newest accepted one (an acceptance starts the new level)."""
    chosen = []
    for stored in history:
        if stored.record.identity != record.identity:
            continue
        if stored.state == "failed":
            continue
        if stored.record.max_error is None or stored.record.avg_error is None:
            continue
        chosen.append(stored)
        if stored.state == "accepted":
            break
        if len(chosen) >= REFERENCE_CHECKS:
            break
    return chosen


def band(values: list[float]) -> tuple[float, float, bool]:
    """(lowest, highest) an error may read, and whether the history repeated bit for bit."""
    low, high = min(values), max(values)
    if low == high:
        return low * (1 - SLACK), high * (1 + SLACK), True
    width = high - low
    return max(low - width, 0.0), high + width, False


def judge_accuracy(record: AccuracyRecord, history: list[StoredAccuracy]) -> AccuracyVerdict:
    """The record against its history (module docstring); a check whose inputs carry no seed is not judged."""
    if record.seed is None:
        return AccuracyVerdict(None, UNSEEDED)
    return _against(record, history)


def _against(record: AccuracyRecord, history: list[StoredAccuracy]) -> AccuracyVerdict:
    if record.max_error is None or record.avg_error is None:
        return AccuracyVerdict(NEW, "not judged: an error is not finite (the check failed)")
    refs = references_of(record, history)
    if not refs:
        return AccuracyVerdict(NEW, "no stored check of this case on these inputs on this GPU")
    newest = refs[0].record
    worse, better = [], []
    for name, now in (("max", record.max_error), ("avg", record.avg_error)):
        values = [getattr(stored.record, f"{name}_error") for stored in refs]
        low, high, exact = band(values)
        how = (f"{len(values)} run(s) bit for bit {values[0]:.6g}" if exact else
               f"{len(values)} run(s) from {min(values):.6g} to {max(values):.6g}, band {low:.6g}..{high:.6g}")
        if now > high:
            worse.append(f"{name} error {now:.6g} above {how}")
        elif now < low:
            better.append(f"{name} error {now:.6g} below {how}")
    kwargs = dict(reference_max=newest.max_error, reference_avg=newest.avg_error, references=tuple(refs))
    if worse:
        return AccuracyVerdict(LESS_ACCURATE, "; ".join(worse), **kwargs)
    if better:
        return AccuracyVerdict(MORE_ACCURATE, "; ".join(better), **kwargs)
    return AccuracyVerdict(SAME, f"within the history of {len(refs)} run(s)", **kwargs)


def judged(record: AccuracyRecord, verdict: AccuracyVerdict) -> AccuracyRecord:
    newest = verdict.newest
    return dataclasses.replace(
        record, verdict=verdict.label, verdict_reason=verdict.reason, reference_max=verdict.reference_max,
        reference_avg=verdict.reference_avg, reference=f"history run {newest.run_id}" if newest else None,
        reference_runs=len(verdict.references) or None, reference_commit=newest.commit if newest else None,
        references=[{"name": f"history run {newest.run_id}", "started_at": newest.started_at,
                     "commit": newest.commit, "sass": None}] if newest else [])


def judge_pair(head: AccuracyRecord, base: AccuracyRecord, ref: str) -> AccuracyRecord:
    """A/B (`--kernelwatch-compare-ref`): head's errors against base's on the same inputs in the same run;
    a deterministic pair is compared exactly (with SLACK), as a history of one run."""
    stored = StoredAccuracy(0, None, None, base, "passed")
    verdict = _against(head, [stored])  # one set of inputs for both sides, seeded or not
    return dataclasses.replace(head, verdict=verdict.label, verdict_reason=verdict.reason,
                               reference_max=base.max_error, reference_avg=base.avg_error, reference=ref,
                               reference_runs=1)


def format_error(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def margin_words(margin: float | None) -> str:
    """What a margin left to the tolerance calls for: "" (none recorded, or a tenth or more left), "under a tenth
    left", or "past its tolerance" (a failed check's margin is below zero)."""
    if margin is None or margin >= MARGIN_FLAG:
        return ""
    return "past its tolerance" if margin < 0 else "under a tenth left"


def inputs_text(record) -> str:
    """A check's inputs in words, each part that was not recorded said so: "inputs 64x64, normal, seed 1"."""
    seed = "not given" if record.seed is None else record.seed
    return f"inputs {record.shape or '?'}, {record.input_kind or 'kind not given'}, seed {seed}"


def row_words(record: AccuracyRecord) -> str:
    """One line: both errors, the reference's, the ratio and the margin left to the tolerance."""
    ratio = record.ratio
    margin = record.margin
    parts = [f"max {format_error(record.max_error)}, avg {format_error(record.avg_error)}"]
    if record.reference_max is not None:
        parts.append(f"reference max {format_error(record.reference_max)}, avg {format_error(record.reference_avg)}")
    if ratio is not None:
        parts.append(f"{ratio:.3g}x")
    if margin is not None:
        parts.append(f"margin {100 * margin:.1f}% of tolerance {format_error(record.tolerance_max)}")
    return "; ".join(parts)
