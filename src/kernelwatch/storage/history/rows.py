"""The rows the store's queries give back: a run as listed, and a case as a point of a series and its key.

A case as a reference is the verdict's own type, kernelwatch.verdict.noise.StoredResult
(`HistoryStore.reference_history` gives those).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class RunSummary:
    """One stored run, as the listing shows it."""

    id: int
    started_at: datetime
    commit: str | None
    branch: str | None
    dirty: bool | None
    profile: str | None
    gpu_model: str | None
    gpu_uuids: tuple[str, ...]
    host: str | None
    outcome: str
    label: str | None
    source: str | None
    case_count: int


@dataclass(frozen=True)
class Removal:
    """A run removed from the store (`remove_run`), as its log keeps it: ``run`` holds what the run was (its
    time, commit, branch, profile, GPU, host, outcome, label, source, case count, and how many acknowledgements
    went with it)."""

    id: int
    run_id: int
    content_hash: str
    reason: str
    who: str
    removed_at: datetime
    run: dict


@dataclass(frozen=True)
class Point:
    """One case's result in one run, as a series reads it: its median and the spread band around it
    (seconds; the store's band is the middle half of the samples), its outcome and verdict there."""

    run_id: str
    started_at: datetime
    commit: str
    branch: str | None
    median_s: float
    low_s: float  # lower edge of the spread band (e.g. the first quartile of the samples)
    high_s: float  # upper edge
    sample_count: int
    gpu_uuid: str | None  # None: a run recorded before UUIDs were stored
    outcome: str = "passed"  # the case's own in its run: passed, failed (slower), accepted
    verdict: str | None = None  # the label its run judged it with (None: not judged)
    accepted_reason: str | None = None  # a slowdown accepted at this run (a trailer, or an acknowledgement)
    run_failed: bool = False  # its run failed besides its slower cases (a correctness test)
    sass: str | None = None  # the machine code it ran (kernelwatch.ab.identity)
    throttled: bool = False  # NVML reported throttling while it was timed: no series reads it
    energy_j: float | None = None  # joules per launch where its energy was measured (added by migration 4)

    @property
    def failed(self) -> bool:
        """Its test failed (slower), and nobody accepted it at this run."""
        return self.outcome == "failed" and self.accepted_reason is None

    @property
    def state(self) -> str:
        """How the dashboard and `changes` mark it: failed, accepted, run failed, or passed."""
        if self.failed:
            return "failed"
        if self.accepted_reason is not None:
            return "accepted"
        return "run failed" if self.run_failed else "passed"

    def __post_init__(self):
        for name in ("median_s", "low_s", "high_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"Point {self.run_id}: {name} must be a positive number of seconds, got {value!r}")
        if not self.low_s <= self.median_s <= self.high_s:
            raise ValueError(f"Point {self.run_id}: the band {self.low_s!r}..{self.high_s!r} "
                             f"does not hold the median {self.median_s!r}")


@dataclass(frozen=True)
class SeriesKey:
    """What one series is the history of: one case, timed by one timer in one profile, on one GPU model or one
    physical GPU. The store's `case_series` keys hold None for what a run did not record; a series made of them
    (kernelwatch.history.series.series_from_rows) reads "unknown" there instead."""

    gpu: str | None  # a GPU model ("NVIDIA H200") or one physical GPU's UUID, whichever the series are keyed by
    case: str  # pytest node id
    timer: str | None  # short timer name (kernelwatch.storage.schema.short_timer_name)
    profile: str | None  # "full", "quick", ...

    @property
    def kernel(self) -> str:
        """The case's parameters in brackets, or its test name: what the dashboard filters on."""
        name = self.case.rsplit("::", 1)[-1]
        return name[name.index("[") + 1:-1] if "[" in name and name.endswith("]") else name

    def slug(self) -> str:
        """A file name for this series: safe characters only, unique per key."""
        text = "|".join(str(part) for part in (self.gpu, self.case, self.timer, self.profile))
        readable = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.case.rsplit("::", 1)[-1])[:60]
        return f"{readable}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
