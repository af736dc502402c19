"""The plain data of a case's history: one point per stored run, one series per key.

A series is what change-point detection (src/kernelwatch/history/steps.py) and the
dashboard (src/kernelwatch/history/site.py) read: one case, timed by one timer in one
profile, on one GPU model or one physical GPU (UUID), its runs oldest first.
A point and a series' key are the store's own types (src/kernelwatch/storage/history/rows.py:
`Point` and `SeriesKey`, what `case_series` gives); where the points come from (the
history store, a synthetic test history) is no concern of this module: it holds no
database code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernelwatch.storage.history.rows import Point, SeriesKey

__all__ = ["Point", "Series", "SeriesKey", "commit_range", "gpu_uuids", "series_from_rows"]


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
    optionally branch, outcome, verdict, accepted_reason, run_failed and energy_j). The store's None for an unknown
    timer, profile or commit reads "unknown"."""
    series_key = SeriesKey(gpu=key.gpu or "unknown GPU", case=key.case, timer=key.timer or "unknown",
                           profile=key.profile or "unknown")
    points = tuple(Point(run_id=str(row.run_id), started_at=row.started_at, commit=row.commit or "unknown",
                         branch=getattr(row, "branch", None), median_s=row.median_s,
                         low_s=min(row.low_s, row.median_s), high_s=max(row.high_s, row.median_s),
                         sample_count=row.sample_count, gpu_uuid=row.gpu_uuid,
                         outcome=getattr(row, "outcome", "passed"), verdict=getattr(row, "verdict", None),
                         accepted_reason=getattr(row, "accepted_reason", None),
                         run_failed=getattr(row, "run_failed", False),
                         energy_j=getattr(row, "energy_j", None)) for row in rows)
    return Series(series_key, points)


def states_text(points) -> str:
    """"7-9 failed, 10 accepted, 11-12 passed": the states of consecutive runs (a series' points, a check's
    stored accuracy), grouped."""
    groups: list[list] = []
    for point in points:
        if groups and groups[-1][0] == point.state:
            groups[-1][2] = point.run_id
        else:
            groups.append([point.state, point.run_id, point.run_id])
    return ", ".join(f"{first}{'' if first == last else f'-{last}'} {state}" for state, first, last in groups)
