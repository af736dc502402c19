"""The plain data of a case's history: one point per stored run, one series per key.

A series is what change-point detection (harness/history/steps.py) and the
dashboard (harness/history/site.py) read: one case, timed by one timer in one
profile, on one GPU model or one physical GPU (UUID), its runs oldest first.
Where the points come from (the history store, stored pytest-benchmark files,
a synthetic test history) is no concern of this module: it holds no database
code.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Point:
    """One case's result in one run: its median and the spread band around it (seconds)."""

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
    """What one series is the history of."""

    gpu: str  # a GPU model ("NVIDIA H200") or one physical GPU's UUID
    case: str  # pytest node id
    timer: str  # short timer name (harness.record.normalized_timer)
    profile: str  # "full", "quick", ...

    @property
    def kernel(self) -> str:
        """The case's parameters in brackets, or its test name: what the dashboard filters on."""
        name = self.case.rsplit("::", 1)[-1]
        return name[name.index("[") + 1:-1] if "[" in name and name.endswith("]") else name

    def slug(self) -> str:
        """A file name for this series: safe characters only, unique per key."""
        text = "|".join((self.gpu, self.case, self.timer, self.profile))
        readable = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.case.rsplit("::", 1)[-1])[:60]
        return f"{readable}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Series:
    """A key and its points, oldest first."""

    key: SeriesKey
    points: tuple[Point, ...]

    def __post_init__(self):
        object.__setattr__(self, "points", tuple(self.points))
        for earlier, later in zip(self.points, self.points[1:], strict=False):
            if later.started_at < earlier.started_at:
                raise ValueError(f"series {self.key.case}: run {later.run_id} started before {earlier.run_id}; "
                                 f"points go oldest first")

    def __len__(self) -> int:
        return len(self.points)

    def medians(self) -> list[float]:
        return [point.median_s for point in self.points]


def commit_range(before: Point, after: Point) -> str:
    """The git range of the commits that may have moved a case between two runs: "OLD..NEW"."""
    return f"{before.commit}..{after.commit}"


def gpu_uuids(series: Sequence[Series]) -> list[str]:
    """Every GPU UUID the series' points name, sorted."""
    return sorted({point.gpu_uuid for one in series for point in one.points if point.gpu_uuid})


def series_from_rows(key, rows: Sequence) -> Series:
    """A Series from the history store's `case_series` item: a key with gpu, case, timer and profile, and
    its points with run_id, started_at, commit, median_s, low_s, high_s, sample_count, gpu_uuid (and
    optionally branch, outcome, verdict, accepted_reason and run_failed). The store's None for an unknown
    timer, profile or commit reads "unknown"."""
    series_key = SeriesKey(gpu=key.gpu or "unknown GPU", case=key.case, timer=key.timer or "unknown",
                           profile=key.profile or "unknown")
    points = tuple(Point(run_id=str(row.run_id), started_at=row.started_at, commit=row.commit or "unknown",
                         branch=getattr(row, "branch", None), median_s=row.median_s,
                         low_s=min(row.low_s, row.median_s), high_s=max(row.high_s, row.median_s),
                         sample_count=row.sample_count, gpu_uuid=row.gpu_uuid,
                         outcome=getattr(row, "outcome", "passed"), verdict=getattr(row, "verdict", None),
                         accepted_reason=getattr(row, "accepted_reason", None),
                         run_failed=getattr(row, "run_failed", False)) for row in rows)
    return Series(series_key, points)
