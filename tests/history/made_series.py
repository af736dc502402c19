"""Points, series and steps made by hand, for the tests of what reads a series: analysis, steps, site, changes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from kernelwatch.history.series import Point, Series, SeriesKey
from kernelwatch.history.steps import SLOWER, STEP, Step
from kernelwatch.verdict.record import TIMER_CUPTI

START = datetime(2026, 12, 1, tzinfo=UTC)
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-tiled32]"
KEY = SeriesKey("NVIDIA H200", CASE, TIMER_CUPTI, "quick")
COMMIT = "0123456789abcdef0123456789abcdef01234567"
QUIET = [1e-3] * 20  # one millisecond, no spread: only the relative floor counts


def a_point(i: int, median: float = 1e-4, **changes) -> Point:
    """Run i on GPU-a, started i days after START, its band 1% either side of its median."""
    fields = dict(run_id=f"r{i}", started_at=START + timedelta(days=i), commit=f"c{i}", branch="main",
                  median_s=median, low_s=median * 0.99, high_s=median * 1.01, sample_count=50, gpu_uuid="GPU-a")
    return Point(**(fields | changes))


def a_series(*medians: float, key: SeriesKey = KEY, timer: str | None = None, uuids=None) -> Series:
    """One run per median, oldest first, each at a commit of its own; on GPU-a unless `uuids` names each run's GPU."""
    key = dataclasses.replace(key, timer=timer) if timer else key
    uuids = uuids or ["GPU-a"] * len(medians)
    return Series(key, tuple(a_point(i, m, gpu_uuid=u, commit=f"{i:08d}{COMMIT[8:]}")
                             for i, (m, u) in enumerate(zip(medians, uuids, strict=True))))


def with_points(one: Series, **changes_by_index) -> Series:
    """`one` with the points named `p<i>` replaced by their changes (a dict of Point fields)."""
    points = list(one.points)
    for name, changes in changes_by_index.items():
        i = int(name[1:])
        points[i] = dataclasses.replace(points[i], **changes)
    return dataclasses.replace(one, points=tuple(points))


def a_step(one: Series, before: int, after: int, kind: str = STEP, direction: str = SLOWER) -> Step:
    """A significant 5% change of `one` between its runs `before` and `after`."""
    return Step(key=one.key, kind=kind, direction=direction, index=after, before=one.points[before],
                after=one.points[after], ratio=1.05, ratio_low=1.03, ratio_high=1.07, p_value=1e-4,
                runs_before=after, runs_after=len(one) - after)
