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
import ruptures
from scipy import stats

from harness.history import steps as steps_module
from harness.history.analysis import GPU_FLOORS, MOST_DETECTABLE, Analysis, detectable
from harness.history.series import Point, Series, SeriesKey
from harness.history.steps import CREEP, FASTER, SLOWER, STEP, PrefixSumL2, detect_steps, noise_scale
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


def test_an_analysis_is_frozen():
    """What `changes` and `site` read cannot be changed in place by one of them."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Analysis([], {}, {}, {}).series = []


# ---- harness/history/steps.py -------------------------------------------------------------------

LOGS = np.log([1.00, 1.02, 0.99, 1.05, 1.01, 0.97, 1.03, 1.00, 1.04, 0.98])


def test_the_noise_scale_is_1_4826_mads_of_the_successive_differences_over_root_two():
    """Module docstring, point 2: 1.4826 x MAD of the successive differences / sqrt 2."""
    diffs = np.diff(LOGS)
    mad = np.median(np.abs(diffs - np.median(diffs)))
    assert noise_scale(LOGS) == pytest.approx(1.4826 * mad / math.sqrt(2), rel=1e-12)


def test_the_prefix_sum_cost_is_ruptures_least_squares_cost():
    """PrefixSumL2 gives CostL2's error on every segment (it is the same cost, from prefix sums)."""
    ours, theirs = PrefixSumL2().fit(LOGS), ruptures.costs.CostL2().fit(LOGS)
    for start in range(len(LOGS) - 1):
        for end in range(start + 2, len(LOGS) + 1):
            assert ours.error(start, end) == pytest.approx(theirs.error(start, end), abs=1e-15)


def test_a_step_beside_few_runs_is_a_z_test_on_the_series_own_scale():
    """Below MIN_RUNS_FOR_WELCH a side: z = (mean after - mean before) / (scale sqrt(1/n_before + 1/n_after))."""
    logs, scale = np.log([1.0, 1.01, 0.99, 1.03, 1.04, 1.02, 1.05, 1.03]), 0.01  # 3 runs before, 5 after
    left, right = logs[:3], logs[3:]
    z = (right.mean() - left.mean()) / (scale * math.sqrt(1 / left.size + 1 / right.size))
    ratio, p = steps_module._judge(logs, 0, 3, logs.size, 30, scale)
    assert ratio == pytest.approx(math.exp(np.median(right) - np.median(left)))
    assert p == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-9)


def test_a_large_change_that_is_not_significant_is_dropped():
    """A candidate fails on its p-value alone: a 5% change in noise that makes p large is no step."""
    rng = np.random.default_rng(11)
    logs = np.r_[rng.normal(0, 0.1, 10), rng.normal(math.log(1.05), 0.1, 10)]
    ratio, p = steps_module._judge(logs, 0, 10, 20, 30, 0.1)
    assert p > 1e-3 and abs(ratio - 1) >= 0.015  # the premise: large enough, not significant
    assert steps_module._merge(logs, [10], 0.015, 1e-3, 30, 0.1) == []


def test_of_failing_change_points_equally_significant_the_smaller_change_goes_first():
    """The merge drops the weakest failing change point: highest p, then the smallest change."""
    logs = np.log(np.r_[np.full(10, 1.0), np.full(10, 1.016), np.full(10, 1.02)])
    judged = [steps_module._judge(logs, 0, 10, 20, 30, 1e-4), steps_module._judge(logs, 10, 20, 30, 30, 1e-4)]
    assert judged[0][1] == judged[1][1]  # the premise: a tie on p (flat levels)
    # dropping the later, smaller change leaves the 10-run level against the 20 after it: 1.8%, a step
    assert steps_module._merge(logs, [10, 20], 0.017, 1e-3, 30, 1e-4) == [10]


@pytest.mark.parametrize("sign", [1, -1], ids=["up", "down"])
def test_an_exact_hinge_is_found_at_its_bend_with_an_infinite_t(sign):
    """A noise-free flat line bent into a ramp: the fit is exact at the bend, its t infinite either way."""
    n, bend, slope = 32, 12, sign * 2.0**-10  # dyadic values: the exact fit leaves a residual of exactly 0
    logs = np.r_[np.zeros(bend), slope * np.arange(1, n - bend + 1)]
    found_bend, found_slope, se, tstat = steps_module._creep(logs, 0, n, 10)
    assert found_bend == bend - 1 and found_slope == pytest.approx(slope) and se == 0
    assert abs(tstat) == math.inf


def test_a_creep_smaller_than_its_detectable_rise_is_not_reported():
    """`creep_detectable`: a steady 0.3% rise is no creep at the default 0.5%, though one at 0.2%."""
    rng = np.random.default_rng(3)
    medians = 1e-3 * np.exp(np.r_[np.zeros(20), np.linspace(0, math.log(1.003), 21)[1:]] + rng.normal(0, 5e-5, 40))
    series = _series(list(medians))
    assert [s.kind for s in detect_steps(series, 0.015, creep_detectable=0.002)] == [CREEP]
    assert detect_steps(series, 0.015) == []


def _creep_after_a_step():
    rng = np.random.default_rng(21)
    level = np.r_[np.zeros(20), np.full(40, math.log(1.05))]
    level[30:] += np.linspace(0, math.log(1.012), 31)[1:]
    return _series(list(1e-3 * np.exp(level + rng.normal(0, 2.5e-3, 60))))


def test_a_creep_names_its_bend_its_runs_and_the_fitted_lines_rise():
    """kind CREEP: before = the bend, after = the ramp's last run, ratio = the fitted line's end over its start,
    runs_before counted from the level's first run, a t interval and p on n - 2 degrees of freedom."""
    series = _creep_after_a_step()
    found = detect_steps(series, 0.015)
    assert [(s.kind, s.direction) for s in found] == [(STEP, SLOWER), (CREEP, SLOWER)]
    step, creep = found
    start, end = step.index, len(series)
    logs = np.log(series.medians())
    bend = series.points.index(creep.before)
    assert creep.after is series.points[-1] and creep.index == end - 1
    hinge = np.c_[np.ones(end - start), np.maximum(0, np.arange(start, end) - bend)]
    (_, slope), *_ = np.linalg.lstsq(hinge, logs[start:end], rcond=None)
    runs = end - 1 - bend
    assert creep.ratio == pytest.approx(math.exp(slope * runs), rel=1e-9)
    assert (creep.runs_before, creep.runs_after) == (bend - start + 1, runs)
    residual = logs[start:end] - hinge @ np.linalg.lstsq(hinge, logs[start:end], rcond=None)[0]
    dof = end - start - 2
    se = math.sqrt(residual @ residual / dof / np.sum((hinge[:, 1] - hinge[:, 1].mean()) ** 2))
    tcrit = stats.t.ppf(0.975, dof)
    assert creep.ratio_low == pytest.approx(math.exp((slope - tcrit * se) * runs), rel=1e-9)
    assert creep.ratio_high == pytest.approx(math.exp((slope + tcrit * se) * runs), rel=1e-9)
    assert 0 < creep.p_value == pytest.approx(2 * stats.t.sf(abs(slope / se), dof), rel=1e-6, abs=0)


def test_a_falling_creep_is_faster():
    """A creep down is FASTER (the direction of a creep is that of its ratio)."""
    rng = np.random.default_rng(4)
    medians = 1e-3 * np.exp(np.r_[np.zeros(20), np.linspace(0, math.log(0.98), 21)[1:]] + rng.normal(0, 1e-3, 40))
    assert [(s.kind, s.direction) for s in detect_steps(_series(list(medians)), 0.015)] == [(CREEP, FASTER)]


def test_a_level_of_min_size_runs_can_be_a_candidate():
    """`min_size` is the fewest runs at a level, also for PELT's cost: with 2, a 2-run level is cut out."""
    logs = np.r_[np.zeros(6), np.ones(2), np.zeros(6)]
    assert steps_module._candidates(logs, 0.01, 2) == [6, 8]


def _rss(design, y):
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return float(((y - design @ coef) ** 2).sum()), coef


def _step_over_creep(y, min_runs):
    """(RSS of the bent line at its best bend - RSS of the best step) over STEP_OVER_CREEP step variances."""
    n, t = y.size, np.arange(y.size, dtype=float)
    best_t, ramp_rss = -1.0, None
    for bend in range(0, n - min_runs):
        z = np.maximum(0, t - bend)
        rss, (_, slope) = _rss(np.c_[np.ones(n), z], y)
        tstat = abs(slope) / math.sqrt(rss / (n - 2) / ((z - z.mean()) ** 2).sum())
        if tstat > best_t:
            best_t, ramp_rss = tstat, rss
    step_rss = min(((y[:at] - y[:at].mean()) ** 2).sum() + ((y[at:] - y[at:].mean()) ** 2).sum()
                   for at in range(min_runs, n - min_runs + 1))
    return (ramp_rss - step_rss) / (steps_module.STEP_OVER_CREEP * step_rss / (n - 2))


def test_a_ramp_is_no_creep_when_one_step_fits_better_by_more_than_eight_residual_variances():
    """Module docstring, point 5 (and STEP_OVER_CREEP): over a family from a pure ramp to a pure step, _creep
    gives up exactly where the best step's residual sum of squares is smaller by more than 8 of its variances
    (n - 2 degrees of freedom). Checked over the family and on both sides of the boundary, within 0.5% of it."""
    n, min_runs = 40, 10
    noise = np.random.default_rng(8).normal(0, 0.002, n)
    ramp, step = np.maximum(0, np.arange(n) - 15) * 0.001, np.where(np.arange(n) >= 28, 0.012, 0.0)

    def member(a):
        return a * step + (1 - a) * ramp + noise

    def agrees(a):
        return (steps_module._creep(member(a), 0, n, min_runs) is None) == (_step_over_creep(member(a), min_runs) > 1)

    grid = np.linspace(0, 1, 41)
    assert all(agrees(a) for a in grid)
    below = max(a for a in grid if _step_over_creep(member(a), min_runs) <= 1)
    above = min(a for a in grid if a > below)
    for _ in range(30):  # bisection on a, until both sides are within 0.5% of the boundary (not at it: rounding)
        if _step_over_creep(member(below), min_runs) > 0.995 and _step_over_creep(member(above), min_runs) < 1.005:
            break
        middle = (below + above) / 2
        below, above = (middle, above) if _step_over_creep(member(middle), min_runs) <= 1 else (below, middle)
    assert 0.995 < _step_over_creep(member(below), min_runs) <= 1 < _step_over_creep(member(above), min_runs) < 1.005
    assert agrees(below) and agrees(above)


@pytest.mark.parametrize("limit", [0.0, 1.0])
def test_the_detectable_change_is_a_fraction_strictly_between_0_and_1(limit):
    """0 would report any change, 1 no change at all: both are refused."""
    with pytest.raises(ValueError, match="detectable"):
        detect_steps(_series(QUIET), limit)


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_a_steps_interval_is_the_central_part_of_the_bootstrap_at_its_confidence(confidence, monkeypatch):
    """The interval leaves (1 - confidence) / 2 of the resampled ratios out on each side."""
    asked = []
    quantile = np.quantile
    monkeypatch.setattr(steps_module.np, "quantile", lambda a, q, **kw: asked.append(list(q)) or quantile(a, q, **kw))
    (step,) = detect_steps(_series([1e-3] * 20 + [1.05e-3] * 20), 0.015, confidence=confidence)
    assert step.kind == STEP
    assert asked == [pytest.approx([(1 - confidence) / 2, (1 + confidence) / 2])]


def test_a_step_is_frozen():
    """A step found is a result: `changes` and `site` read it and cannot change it in place."""
    (step,) = detect_steps(_series([1e-3] * 20 + [1.05e-3] * 20), 0.015)
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.ratio = 1.0


def test_a_steps_change_is_its_ratio_less_one():
    """`change` is the relative change: +0.05 for a ratio of 1.05."""
    (step,) = detect_steps(_series([1e-3] * 20 + [1.05e-3] * 20), 0.015)
    assert step.change == pytest.approx(step.ratio - 1) and step.change == pytest.approx(0.05)


@pytest.mark.parametrize("runs", [steps_module.MIN_RUNS_FOR_WELCH, steps_module.MIN_RUNS_FOR_WELCH + 4])
def test_from_min_runs_for_welch_a_side_a_step_is_judged_by_welchs_test(runs):
    """With MIN_RUNS_FOR_WELCH runs or more on each side, the p-value is Welch's t-test on the log medians."""
    rng = np.random.default_rng(runs)
    logs = np.r_[rng.normal(0, 0.01, runs), rng.normal(0.01, 0.01, runs)]
    _, p = steps_module._judge(logs, 0, runs, 2 * runs, 30, 0.01)
    assert p == pytest.approx(stats.ttest_ind(logs[runs:], logs[:runs], equal_var=False).pvalue, rel=1e-9, abs=0)
