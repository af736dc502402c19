"""Claims that surviving mutants showed no test pinned (issue 22, third cosmic-ray pass, history).

Modules: harness/history/series.py, harness/history/steps.py, harness/history/analysis.py. Each
test fails when the part of the product it names is changed by one step (checked against each
mutant), and passes on the product as it is.
"""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from harness.history.analysis import GPU_FLOORS, MOST_DETECTABLE, detectable
from harness.history.series import Point, Series, SeriesKey
from harness.history.steps import detect_steps, noise_scale
from harness.verdict.against_baseline import REFERENCE_RUNS, WALL_CLOCK_FLOORS
from harness.verdict.noise import MIN_VALUES_FOR_SPREAD
from harness.verdict.record import TIMER_CUPTI, TIMER_WALL

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


# ---- harness/history/analysis.py ----------------------------------------------------------------

def _series(medians, *, timer: str = TIMER_CUPTI, uuids=None) -> Series:
    uuids = uuids or ["GPU-a"] * len(medians)
    points = [_point(i, m, gpu_uuid=u) for i, (m, u) in enumerate(zip(medians, uuids, strict=True))]
    return Series(SeriesKey("NVIDIA H200", CASE, timer, "quick"), points)


QUIET = [1e-3] * 20  # one millisecond, no spread: only the relative floor counts


def test_a_wall_clock_series_read_from_the_store_takes_the_wall_clock_floor():
    """A host routine's series is judged at the wall clock's 30%, the timer's name compared by value."""
    timer = "".join(list(TIMER_WALL))  # as read back from the store: equal, not the same object
    assert timer == TIMER_WALL and timer is not TIMER_WALL
    assert detectable(_series(QUIET, timer=timer)).fraction == WALL_CLOCK_FLOORS.same_gpu


@pytest.mark.parametrize(("uuids", "floor"), [(["GPU-a"] * 20, GPU_FLOORS.same_gpu),
                                              (["GPU-a", "GPU-b"] * 10, GPU_FLOORS.other_gpu),
                                              (["GPU-a"] * 19 + [None], GPU_FLOORS.other_gpu)],
                         ids=["one GPU", "two GPUs", "one unknown"])
def test_only_a_series_of_one_known_gpu_takes_the_same_gpu_floor(uuids, floor):
    """Two UUIDs, or a run without one, is a series of several or unknown GPUs: the 5% floor."""
    assert detectable(_series(QUIET, uuids=uuids)).fraction == floor


def test_a_series_without_runs_names_no_gpu():
    """No run, no GPU: the floor is that of several or unknown GPUs, not the one-GPU floor."""
    found = detectable(Series(SeriesKey("NVIDIA H200", CASE, TIMER_CUPTI, "quick"), ()))
    assert found.fraction == GPU_FLOORS.other_gpu and "unknown" in found.because


def test_a_microsecond_case_takes_the_absolute_floor_over_its_median_in_microseconds():
    """0.3 µs over a 1 µs median is 30%: the absolute floor sets the limit, and its words give it in µs."""
    found = detectable(_series([1e-6] * 20))
    assert found.fraction == pytest.approx(GPU_FLOORS.absolute_s / 1e-6)
    assert "absolute floor" in found.because
    assert float(found.because.split()[0]) * 1e-6 == pytest.approx(GPU_FLOORS.absolute_s)


def test_a_noisy_series_takes_z_root_one_plus_one_over_k_times_its_own_spread():
    """The spread term: z x sqrt(1 + 1/k) x noise_scale of the log medians (k = REFERENCE_RUNS), in percent."""
    medians = list(1e-3 * np.exp(np.random.default_rng(5).normal(0, 0.03, 20)))
    spread = noise_scale(np.log(np.asarray(medians)))
    found = detectable(_series(medians))
    assert found.fraction == pytest.approx(GPU_FLOORS.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread)
    assert float(re.search(r"spread ([0-9.]+)%", found.because).group(1)) == pytest.approx(spread * 100, abs=0.005)


def test_the_detectable_change_of_any_series_is_a_fraction_detect_steps_takes():
    """However noisy a series is, its limit stays below 1, so that detect_steps judges it."""
    series = _series(list(1e-3 * np.exp(np.random.default_rng(6).normal(0, 1.0, 20))))  # a factor e run to run
    found = detectable(series)
    assert found.fraction == MOST_DETECTABLE and 0 < found.fraction < 1
    assert isinstance(detect_steps(series, found.fraction), list)


def test_the_spread_counts_from_the_fewest_medians_that_show_one():
    """With exactly MIN_VALUES_FOR_SPREAD medians the series' own spread already sets the limit."""
    medians = [1e-3 * (1.1 if i % 2 else 1.0) for i in range(MIN_VALUES_FOR_SPREAD)]
    spread = noise_scale(np.log(np.asarray(medians)))
    found = detectable(_series(medians))
    assert "spread" in found.because
    assert found.fraction == pytest.approx(GPU_FLOORS.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread)
