"""harness.history.series: the plain data, and reading the history store's case_series rows into it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from harness.history.series import Point, Series, SeriesKey, commit_range, gpu_uuids, series_from_rows

START = datetime(2026, 12, 1, tzinfo=UTC)
KEY = SeriesKey("NVIDIA H200", "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-tiled32]", "cupti",
                "quick")


def _point(i: int, median: float = 1e-4, **changes) -> Point:
    fields = dict(run_id=f"r{i}", started_at=START + timedelta(days=i), commit=f"c{i}", branch="main",
                  median_s=median, low_s=median * 0.99, high_s=median * 1.01, sample_count=50, gpu_uuid="GPU-a")
    return Point(**(fields | changes))


def test_a_point_holds_its_median_inside_its_band():
    with pytest.raises(ValueError, match="band"):
        _point(1, low_s=2e-4)
    with pytest.raises(ValueError, match="positive"):
        _point(1, median=0.0)


def test_a_series_goes_oldest_first():
    with pytest.raises(ValueError, match="oldest first"):
        Series(KEY, (_point(2), _point(1)))
    series = Series(KEY, [_point(1), _point(2, gpu_uuid="GPU-b")])
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
