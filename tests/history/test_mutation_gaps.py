"""Claims that surviving mutants showed no test pinned (issue 22, third cosmic-ray pass, history).

Modules: harness/history/series.py, harness/history/steps.py, harness/history/analysis.py. Each
test fails when the part of the product it names is changed by one step (checked against each
mutant), and passes on the product as it is.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from harness.history.series import Point, Series, SeriesKey

START = datetime(2026, 12, 1, tzinfo=UTC)
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-tiled32]"
KEY = SeriesKey("GPU-a", CASE, "cupti", "quick")


def _point(i: int, median: float = 1e-4, **changes) -> Point:
    fields = dict(run_id=f"r{i}", started_at=START + timedelta(days=i), commit=f"c{i}", branch="main",
                  median_s=median, low_s=median * 0.99, high_s=median * 1.01, sample_count=50, gpu_uuid="GPU-a")
    return Point(**(fields | changes))


# ---- harness/history/series.py ------------------------------------------------------------------

@pytest.mark.parametrize("value", [_point(1), Series(KEY, (_point(1),))], ids=["point", "series"])
def test_points_and_series_are_frozen(value):
    """A point or series read from the store cannot be changed in place."""
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, getattr(value, field))


@pytest.mark.parametrize("edge", ["low_s", "high_s"])
def test_a_band_may_end_at_the_median(edge):
    """The band holds the median inclusively: a run of one sample has low = median = high."""
    point = _point(1, **{edge: 1e-4})
    assert getattr(point, edge) == point.median_s
    assert _point(2, low_s=1e-4, high_s=1e-4).low_s == 1e-4


def test_two_runs_started_at_the_same_moment_are_in_order():
    """Oldest first means no later point started before an earlier one; equal times are in order."""
    same = _point(2, started_at=START)
    assert len(Series(KEY, (_point(0), same))) == 2


@pytest.mark.parametrize(("case", "kernel"), [("test_bare", "test_bare"), ("t.py::test_x[a-b]", "a-b"),
                                             ("t.py::test_x[a", "test_x[a"), ("t.py::test_x]", "test_x]")])
def test_the_kernel_is_the_bracketed_parameters_or_the_whole_test_name(case, kernel):
    """`kernel` reads the brackets only when the test name has them at its end; a bare name is itself."""
    assert SeriesKey("GPU-a", case, "cupti", "quick").kernel == kernel


@pytest.mark.parametrize(("case", "readable"), [("test_bare", "test_bare"), ("t.py::test_x[a-b]", "test_x_a-b_"),
                                               ("a/t.py::Cls::test_y", "test_y")])
def test_the_slug_begins_with_the_test_name_alone(case, readable):
    """The slug's readable part is the last node name of the case (not its file), made safe."""
    slug = SeriesKey("GPU-a", case, "cupti", "quick").slug()
    assert slug.rsplit("-", 1)[0] == readable


def test_a_negative_median_is_no_number_of_seconds():
    """Durations are positive: a negative median (with a band around it) is refused as such."""
    with pytest.raises(ValueError, match="positive"):
        _point(1, median=-1e-4, low_s=-1e-4, high_s=-1e-4)
