"""The one vocabulary of verdicts, and the one verdict type, of every path that judges a case.

A case is judged against a stored reference (the nightly: the model's baseline
or this GPU's own history) or against a git ref in the same run (a pull
request, `--kernelwatch-compare-ref`). Both give a `Verdict` with one of these labels:

| label | meaning | fails the test |
|---|---|---|
| slower | past the case's detectable change, and significant | yes |
| faster | past the detectable change the other way, and significant | no |
| same | within the detectable change, or not significant | no |
| accepted | slower, but `--kernelwatch-accept-slowdown REASON` accepted it (A/B) | no |
| unchanged | the same machine code and launch as the ref: not timed (A/B) | no |
| new | no reference case to compare with | no |
| removed | the case exists only in the ref (A/B) | no |
| other host | a wall-clock host routine, or a case with host copies, against another machine's reference: not judged | no |
| other GPU | the same, against another GPU of a host of the same name (a VM's "vm", say): not judged | no |
| few runs | a wall-clock host routine whose machine holds fewer runs of it than its spread needs: not judged | no |
| other timer | the reference was timed by another timer: not judged | no |
| throttled | NVML reported throttling on either side: not judged | no |
"""

from __future__ import annotations

from dataclasses import dataclass

SLOWER = "slower"
FASTER = "faster"
SAME = "same"
ACCEPTED = "accepted"
UNCHANGED = "unchanged"
NEW = "new"
REMOVED = "removed"
OTHER_HOST = "other host"
OTHER_GPU = "other GPU"
FEW_RUNS = "few runs"
OTHER_TIMER = "other timer"
THROTTLED = "throttled"

# the order of the reports and summary lines: what needs attention first
LABELS = (SLOWER, FASTER, ACCEPTED, THROTTLED, NEW, REMOVED, OTHER_HOST, OTHER_GPU, FEW_RUNS, OTHER_TIMER, SAME, UNCHANGED)
FAILING = frozenset({SLOWER})
# how a verdict names this GPU's own history as its reference: HISTORY_REFERENCE + the GPU's UUID
HISTORY_REFERENCE = "history of "
JUDGED = frozenset({SLOWER, FASTER, SAME, ACCEPTED})  # a ratio was tested against the detectable change


@dataclass(frozen=True)
class ReferenceRun:
    """One stored run a verdict's reference pooled: what a user needs to find it again."""

    name: str  # "history run 12" or a baseline file's name
    started_at: str | None = None  # ISO 8601, UTC
    commit: str | None = None
    sass: str | None = None  # the machine code the case ran there (kernelwatch.ab.identity)

    def as_dict(self) -> dict:
        return {"name": self.name, "started_at": self.started_at, "commit": self.commit, "sass": self.sass}

    @classmethod
    def from_dict(cls, data: dict) -> ReferenceRun:
        return cls(str(data.get("name")), data.get("started_at"), data.get("commit"), data.get("sass"))


@dataclass(frozen=True)
class Verdict:
    """One case judged against its reference. Times are in seconds.

    ``ratio`` is current median / reference median; ``detectable`` the smallest
    change (a fraction of the reference median) it was judged against;
    ``p_value`` the one-sided Mann-Whitney p of a stored-reference verdict,
    ``ci_low``/``ci_high`` the bootstrap interval of a same-run (A/B) verdict.
    A field that does not apply to the label is None. ``reference`` names what
    the case was compared with (a baseline file, "history of GPU-...", a git
    ref) and ``reference_runs`` how many stored runs it pools; ``references`` names those runs,
    oldest first (stored references only).
    """

    case: str
    label: str
    reference_median: float | None
    current_median: float | None
    ratio: float | None
    detectable: float | None
    reason: str
    p_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    reference: str | None = None
    reference_runs: int | None = None
    references: tuple[ReferenceRun, ...] = ()

    @property
    def newest_reference(self) -> ReferenceRun | None:
        return self.references[-1] if self.references else None

    @property
    def fails(self) -> bool:
        """True for the labels that fail the case's test (a slowdown nobody accepted)."""
        return self.label in FAILING

    @property
    def passed(self) -> bool:
        return not self.fails

    @property
    def against_own_history(self) -> bool:
        """True when the reference was this GPU's own history (--kernelwatch-history), not a baseline or a ref."""
        return (self.reference or "").startswith(HISTORY_REFERENCE)
