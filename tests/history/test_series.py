"""kernelwatch.history.series: the plain data, and reading the history store's case_series rows into it."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from kernelwatch.history.series import Series, SeriesKey, commit_range, gpu_uuids, series_from_rows
from tests.history.made_series import KEY, START, a_point


def test_a_point_holds_its_median_inside_its_band():
    with pytest.raises(ValueError, match="band"):
        a_point(1, low_s=2e-4)
    with pytest.raises(ValueError, match="positive"):
        a_point(1, median=0.0)


def test_a_series_goes_oldest_first():
    with pytest.raises(ValueError, match="oldest first"):
        Series(KEY, (a_point(2), a_point(1)))
    series = Series(KEY, [a_point(1), a_point(2, gpu_uuid="GPU-b")])
    assert len(series) == 2 and series.medians() == [1e-4, 1e-4]
    assert gpu_uuids([series]) == ["GPU-a", "GPU-b"]
    assert commit_range(*series.points) == "c1..c2"


def test_key_names_its_kernel_and_a_safe_unique_slug():
    assert KEY.kernel == "1024x1024x1024-tiled32"
    other = SeriesKey("GPU-b", KEY.case, KEY.timer, KEY.profile)
    assert KEY.slug() != other.slug() and all(c.isalnum() or c in "-_" for c in KEY.slug())


def test_series_from_the_stores_rows():
    key = SimpleNamespace(gpu="GPU-a", case=KEY.case, timer=None, profile="quick")
    rows = [SimpleNamespace(run_id=7, started_at=START, commit=None, gpu_uuid="GPU-a", sass="s", median_s=1e-4,
                            low_s=0.9e-4, high_s=1.1e-4, sample_count=20, throttled=False)]
    series = series_from_rows(key, rows)
    assert series.key == SeriesKey("GPU-a", KEY.case, "unknown", "quick")
    (point,) = series.points
    assert (point.run_id, point.commit, point.branch) == ("7", "unknown", None)


@pytest.mark.parametrize("value", [a_point(1), Series(KEY, (a_point(1),))], ids=["point", "series"])
def test_points_and_series_are_frozen(value):
    """A point or series read from the store cannot be changed in place."""
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, getattr(value, field))


@pytest.mark.parametrize("edge", ["low_s", "high_s"])
def test_a_band_may_end_at_the_median(edge):
    """The band holds the median inclusively: a run of one sample has low = median = high."""
    point = a_point(1, **{edge: 1e-4})
    assert getattr(point, edge) == point.median_s
    assert a_point(2, low_s=1e-4, high_s=1e-4).low_s == 1e-4


def test_two_runs_started_at_the_same_moment_are_in_order():
    """Oldest first means no later point started before an earlier one; equal times are in order."""
    same = a_point(2, started_at=START)
    assert len(Series(KEY, (a_point(0), same))) == 2


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
        a_point(1, median=-1e-4, low_s=-1e-4, high_s=-1e-4)
