"""Change-point detection on synthetic histories with the H200's run-to-run noise (maintainers/support/h200_histories.py)."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
import ruptures
from scipy import stats

from kernelwatch.history import steps as steps_module
from kernelwatch.history.steps import (
    CREEP,
    FASTER,
    MIN_RUNS_AT_LEVEL,
    SLOWER,
    STEP,
    PrefixSumL2,
    detect_all,
    detect_steps,
    newest_first,
    noise_scale,
    steps_in_newest,
)
from maintainers.support.h200_histories import case_profiles, gpu_timed_profiles, relative_medians, synthetic_series
from tests.history.made_series import QUIET, a_series

RUNS = 60
STEP_AT = 30
SAME_GPU_FLOOR = 0.015  # src/kernelwatch/noise.py: the detectable change against this GPU's own runs


def _series(index: int, seed: int, **shape):
    profiles = gpu_timed_profiles()
    noise = profiles[index % len(profiles)]
    return synthetic_series(noise, relative_medians(noise, RUNS, np.random.default_rng(seed), **shape))


def test_two_percent_step_found_at_its_run_in_95_of_100_series():
    found = 0
    for i in range(100):
        steps = detect_steps(_series(i, 1000 + i, step_at=STEP_AT, step=0.02), SAME_GPU_FLOOR)
        found += any(s.kind == STEP and s.direction == SLOWER and abs(s.index - STEP_AT) <= 1 for s in steps)
    assert found >= 95


@pytest.mark.slow  # 100 simulated series: CI's second pass (tox -e unit -- -m slow)
def test_two_percent_step_three_runs_before_the_newest_is_found_in_90_of_100_series():
    # measured 95 of 100 (docs/method.md#change-points); Welch's test alone on 3 runs found 33
    profiles = gpu_timed_profiles()
    found = 0
    for i in range(100):
        noise = profiles[i % len(profiles)]
        series = synthetic_series(noise, relative_medians(noise, 200, np.random.default_rng(1000 + i), step_at=197,
                                                          step=0.02))
        found += any(s.kind == STEP and abs(s.index - 197) <= 1 for s in detect_steps(series, SAME_GPU_FLOOR))
    assert found >= 90


def test_clean_series_give_a_false_change_in_at_most_2_of_100():
    false = sum(bool(detect_steps(_series(i, 2000 + i), SAME_GPU_FLOOR)) for i in range(100))
    assert false <= 2


def test_one_percent_creep_over_30_runs_is_reported():
    # measured 89 of 100 (docs/method.md#change-points): a creep reads 3-6 standard errors in 30 runs at 0.2-0.5% noise
    reported = sum(bool(detect_steps(_series(i, 3000 + i, creep_from=RUNS - 30, creep=0.01), SAME_GPU_FLOOR))
                   for i in range(100))
    assert reported >= 85


def test_creep_is_reported_as_a_slower_creep_from_its_bend():
    quietest = min(range(len(gpu_timed_profiles())), key=lambda i: gpu_timed_profiles()[i].sd)
    steps = detect_steps(_series(quietest, 3003, creep_from=RUNS - 30, creep=0.01), SAME_GPU_FLOOR)
    assert [(s.kind, s.direction) for s in steps] == [(CREEP, SLOWER)]
    creep = steps[0]
    assert abs(int(creep.before.run_id.removeprefix("run-")) - 1 - (RUNS - 30)) <= 8
    assert creep.after.run_id == f"run-{RUNS:04d}"
    assert creep.ratio_low < 1.01 < creep.ratio_high or abs(creep.ratio - 1.01) < 0.004


def test_a_step_names_its_runs_commits_magnitude_and_significance():
    series = _series(0, 42, step_at=STEP_AT, step=0.03)
    (step,) = detect_steps(series, SAME_GPU_FLOOR)
    assert step.kind == STEP and step.direction == SLOWER and step.index == STEP_AT
    assert step.before is series.points[STEP_AT - 1] and step.after is series.points[STEP_AT]
    assert (step.before.commit, step.after.commit) == ("c0030", "c0031")
    assert step.commit_range == "c0030..c0031"
    assert step.ratio_low < 1.03 < step.ratio_high
    assert 1.02 < step.ratio < 1.04 and step.p_value < 1e-6
    assert (step.runs_before, step.runs_after) == (30, 30)


def test_a_faster_step_is_faster():
    (step,) = detect_steps(_series(5, 43, step_at=20, step=-0.04), SAME_GPU_FLOOR)
    assert step.direction == FASTER and step.ratio < 0.97 and step.index == 20


def test_steps_smaller_than_the_detectable_change_are_not_reported():
    assert detect_steps(_series(0, 44, step_at=STEP_AT, step=0.02), 0.03) == []


def test_two_steps_are_both_found():
    noise = gpu_timed_profiles()[1]
    relative = relative_medians(noise, RUNS, np.random.default_rng(47), step_at=20, step=0.03)
    relative[40:] *= 1.03
    steps = detect_steps(synthetic_series(noise, relative), SAME_GPU_FLOOR)
    assert [(s.kind, s.index) for s in steps] == [(STEP, 20), (STEP, 40)]


@pytest.mark.parametrize("runs", [0, 1, 3])
def test_short_series_have_no_steps(runs):
    noise = gpu_timed_profiles()[0]
    series = synthetic_series(noise, relative_medians(noise, runs, np.random.default_rng(1)))
    assert detect_steps(series, SAME_GPU_FLOOR) == []


def test_identical_medians_have_no_steps_and_a_clean_jump_is_one_step():
    noise = gpu_timed_profiles()[0]
    assert detect_steps(synthetic_series(noise, np.ones(40)), SAME_GPU_FLOOR) == []
    (step,) = detect_steps(synthetic_series(noise, np.r_[np.ones(20), np.full(20, 1.05)]), SAME_GPU_FLOOR)
    assert step.index == 20 and step.ratio == pytest.approx(1.05)


def test_detectable_must_be_a_fraction():
    with pytest.raises(ValueError, match="detectable"):
        detect_steps(_series(0, 1), 1.5)


def test_newest_first_and_steps_in_newest():
    a = _series(0, 50, step_at=50, step=0.03)
    b = _series(1, 51, step_at=20, step=0.03)
    found = detect_all([a, b], SAME_GPU_FLOOR)
    ordered = newest_first([s for steps in found.values() for s in steps])
    assert [s.index for s in ordered] == [50, 20]
    assert steps_in_newest(found[a.key], a, 10) == found[a.key]
    assert steps_in_newest(found[b.key], b, 10) == []


@pytest.mark.slow  # a timing of 90 series: alone, not beside the other worker's load: CI's second pass (tox -e unit -- -m slow)
def test_detection_over_200_runs_of_90_cases_takes_under_10_s():
    profiles = case_profiles()
    rng = np.random.default_rng(7)
    series = [synthetic_series(profiles[i % len(profiles)], relative_medians(
        profiles[i % len(profiles)], 200, rng, step_at=120 if i % 10 == 0 else None, step=0.03),
        gpu=f"GPU-synthetic-{i // len(profiles)}") for i in range(90)]
    # CPU time, not the wall clock: the detection's own cost, which a loaded machine does not inflate (the wall
    # clock read over 10 s once with two mutation replays and a helper's tests on two CPUs)
    started = time.process_time()
    found = detect_all(series, lambda one: SAME_GPU_FLOOR)
    assert time.process_time() - started < 10
    assert len(found) == 90


def test_a_step_is_judged_on_at_most_a_window_of_runs_either_side():
    noise = gpu_timed_profiles()[0]
    series = synthetic_series(noise, relative_medians(noise, 100, np.random.default_rng(48), step_at=40, step=0.03))
    (step,) = detect_steps(series, SAME_GPU_FLOOR, window=30)
    assert (step.index, step.runs_before, step.runs_after) == (40, 30, 30)  # 60 runs follow the step, 40 precede it
    logs = np.log(series.medians())  # the ratio of the medians of those 30 runs after to the 30 before, no others
    assert step.ratio == pytest.approx(math.exp(np.median(logs[40:70]) - np.median(logs[10:40])), rel=1e-12)
    assert detect_steps(series, SAME_GPU_FLOOR) == [step]  # the default window: 30 runs (detect_steps' signature)


def test_the_best_hinge_of_a_straight_rise_is_at_its_first_run():
    from kernelwatch.history.steps import _creep

    logs = np.log(1.001 ** np.arange(40))  # a rise from the first run on: the hinge at 0 fits it exactly
    bend, slope, _, tstat = _creep(logs, 0, logs.size, min_runs=10)
    assert bend == 0 and slope == pytest.approx(np.log(1.001)) and tstat > 1e9  # residuals of rounding only


@pytest.mark.parametrize(("left_runs", "p_below"), [(7, 1e-6), (8, None)])
def test_a_side_of_fewer_than_8_runs_is_judged_by_the_series_noise_scale_not_its_own_spread(left_runs, p_below):
    from kernelwatch.history.steps import _judge

    wobble = np.array([0.0, 0.02, -0.02, 0.01, -0.01, 0.015, -0.015, 0.005])  # its own spread: about 1.4%
    logs = np.r_[wobble[:left_runs], 0.01 + np.resize(wobble, 30)]  # 1% higher after the change
    _, p = _judge(logs, 0, left_runs, logs.size, window=30, scale=0.001)  # the series' scale: 0.1%
    if p_below is not None:
        assert p < p_below  # 1% over a 0.1% scale: certain
    else:
        assert p > 0.01  # 1% within the sides' own 1.4%: Welch's test cannot tell


LOGS = np.log([1.00, 1.02, 0.99, 1.05, 1.01, 0.97, 1.03, 1.00, 1.04, 0.98])


def _creep_after_a_step(runs_before: int = 20):
    """`runs_before` runs, a 5% step, 10 runs at the new level, then a 1.2% creep over 30 runs."""
    rng = np.random.default_rng(21)
    level = np.r_[np.zeros(runs_before), np.full(40, math.log(1.05))]
    level[runs_before + 10:] += np.linspace(0, math.log(1.012), 31)[1:]
    return a_series(*list(1e-3 * np.exp(level + rng.normal(0, 2.5e-3, runs_before + 40))))


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
    return (ramp_rss - step_rss) / (8.0 * step_rss / (n - 2))  # STEP_OVER_CREEP: 8 residual variances (docs/method.md#change-points)


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
    assert steps_module._merge(logs, [10], 0.015, 1e-3, 30, 0.1, 1) == []


@pytest.mark.parametrize("sign", [1, -1], ids=["slower", "faster"])
def test_of_failing_change_points_equally_significant_the_smaller_change_goes_first(sign):
    """The merge drops the weakest failing change point: highest p, then the smallest change (|ratio - 1|, so
    also for ratios below 1: 0.996 is a smaller change than 0.984)."""
    logs = sign * np.log(np.r_[np.full(10, 1.0), np.full(10, 1.016), np.full(10, 1.02)])
    judged = [steps_module._judge(logs, 0, 10, 20, 30, 1e-4), steps_module._judge(logs, 10, 20, 30, 30, 1e-4)]
    assert judged[0][1] == judged[1][1]  # the premise: a tie on p (flat levels)
    # dropping the later, smaller change leaves the 10-run level against the 20 after it: 1.8%, a step
    assert steps_module._merge(logs, [10, 20], 0.017, 1e-3, 30, 1e-4, 1) == [10]


@pytest.mark.parametrize("slope", [2.0**-10, -(2.0**-10), -1.0], ids=["up", "down", "down-by-e-a-run"])
def test_an_exact_hinge_is_found_at_its_bend_with_an_infinite_t(slope):
    """A noise-free flat line bent into a ramp: the fit is exact at the bend, its t infinite either way."""
    n, bend = 32, 12  # dyadic values: the exact fit leaves a residual of exactly 0
    logs = np.r_[np.zeros(bend), slope * np.arange(1, n - bend + 1)]
    found_bend, found_slope, se, tstat = steps_module._creep(logs, 0, n, 10)
    assert found_bend == bend - 1 and found_slope == pytest.approx(slope) and se == 0
    assert abs(tstat) == math.inf


def test_a_creep_smaller_than_its_detectable_rise_is_not_reported():
    """`creep_detectable`: a steady 0.3% rise is no creep at the default 0.5%, though one at 0.2%."""
    rng = np.random.default_rng(3)
    medians = 1e-3 * np.exp(np.r_[np.zeros(20), np.linspace(0, math.log(1.003), 21)[1:]] + rng.normal(0, 5e-5, 40))
    series = a_series(*list(medians))
    assert [s.kind for s in detect_steps(series, 0.015, creep_detectable=0.002)] == [CREEP]
    assert detect_steps(series, 0.015) == []



def test_a_creep_takes_a_ramp_of_ten_runs_after_its_bend_and_nine_are_too_few():
    """The default creep_min_runs: a steady 0.2% a run is a creep over 11 runs (its bend and 10 after it),
    not over 10 (9 after the bend), however clean the rise."""
    def rising(runs):
        noise = np.random.default_rng(7).normal(0, 5e-5, runs)
        return a_series(*list(1e-3 * np.exp(math.log(1.002) * np.arange(runs) + noise)))

    (creep,) = detect_steps(rising(11), SAME_GPU_FLOOR)
    assert (creep.kind, creep.direction, creep.runs_after) == (CREEP, SLOWER, 10)
    assert creep.ratio == pytest.approx(1.002**10, rel=2e-3)
    assert detect_steps(rising(10), SAME_GPU_FLOOR) == []

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
    assert [(s.kind, s.direction) for s in detect_steps(a_series(*list(medians)), 0.015)] == [(CREEP, FASTER)]


@pytest.mark.parametrize("min_size", [1, 2])
def test_a_level_of_min_size_runs_can_be_a_candidate(min_size):
    """`min_size` is the fewest runs at a level, also for PELT's cost: with 2, a 2-run level is cut out, with 1 a
    single run (the cost itself asks for no more than one run a segment, as ruptures' CostL2)."""
    logs = np.r_[np.zeros(6), np.ones(min_size), np.zeros(6)]
    assert steps_module._candidates(logs, 0.01, min_size) == [6, 6 + min_size]


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


@pytest.mark.parametrize("limit", [0.0, 1.0, -0.01])
def test_the_detectable_change_is_a_fraction_strictly_between_0_and_1(limit):
    """0 would report any change, 1 no change at all, a negative one is no size of change: all are refused."""
    with pytest.raises(ValueError, match="detectable"):
        detect_steps(a_series(*QUIET), limit)


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_a_steps_interval_is_the_central_part_of_the_bootstrap_at_its_confidence(confidence, monkeypatch):
    """The interval leaves (1 - confidence) / 2 of the resampled ratios out on each side."""
    asked = []
    quantile = np.quantile
    monkeypatch.setattr(steps_module.np, "quantile", lambda a, q, **kw: asked.append(list(q)) or quantile(a, q, **kw))
    (step,) = detect_steps(a_series(*[1e-3] * 20 + [1.05e-3] * 20), 0.015, confidence=confidence)
    assert step.kind == STEP
    assert asked == [pytest.approx([(1 - confidence) / 2, (1 + confidence) / 2])]


def test_a_step_is_frozen():
    """A step found is a result: `changes` and `site` read it and cannot change it in place."""
    (step,) = detect_steps(a_series(*[1e-3] * 20 + [1.05e-3] * 20), 0.015)
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.ratio = 1.0


def test_a_steps_change_is_its_ratio_less_one():
    """`change` is the relative change: +0.05 for a ratio of 1.05."""
    (step,) = detect_steps(a_series(*[1e-3] * 20 + [1.05e-3] * 20), 0.015)
    assert step.change == pytest.approx(step.ratio - 1) and step.change == pytest.approx(0.05)


@pytest.mark.parametrize("runs", [steps_module.MIN_RUNS_FOR_WELCH, steps_module.MIN_RUNS_FOR_WELCH + 4])
def test_from_min_runs_for_welch_a_side_a_step_is_judged_by_welchs_test(runs):
    """With MIN_RUNS_FOR_WELCH runs or more on each side, the p-value is Welch's t-test on the log medians."""
    rng = np.random.default_rng(runs)
    logs = np.r_[rng.normal(0, 0.01, runs), rng.normal(0.01, 0.01, runs)]
    _, p = steps_module._judge(logs, 0, runs, 2 * runs, 30, 0.01)
    assert p == pytest.approx(stats.ttest_ind(logs[runs:], logs[:runs], equal_var=False).pvalue, rel=1e-9, abs=0)


@pytest.mark.parametrize(("runs", "median", "ratio"), [
    (steps_module.MIN_RUNS_FOR_WELCH, 1.0, 1.03),
    (11, 1.234e-3, 1.03),  # a real median's log: Welch's test would see a rounding spread, not none
    (11, 1.234e-3, 1 / 1.03),  # faster
])
def test_two_flat_sides_at_different_levels_are_certainly_a_change_and_at_one_level_none(runs, median, ratio):
    from kernelwatch.history.steps import _judge

    n = runs
    apart = np.log([median] * n + [median * ratio] * n)
    found, p = _judge(apart, 0, n, 2 * n, n, 0.01)
    assert found == pytest.approx(ratio) and p == 0.0
    assert _judge(np.log([median] * (2 * n)), 0, n, 2 * n, n, 0.01) == (1.0, 1.0)


@pytest.mark.parametrize("flat", ["before", "after"])
def test_one_flat_side_beside_a_varying_one_is_judged_by_welchs_test(flat):
    """Only two constant sides are certainly apart: one constant side beside one that varies is Welch's test,
    here of a change of 0.2% within the other side's 1% spread (no change to speak of)."""
    n = steps_module.MIN_RUNS_FOR_WELCH
    varying, level = np.random.default_rng(9).normal(0.002, 0.01, n), np.zeros(n)
    left, right = (level, varying) if flat == "before" else (varying, level)
    _, p = steps_module._judge(np.r_[left, right], 0, n, 2 * n, 30, 0.01)
    assert p == pytest.approx(stats.ttest_ind(right, left, equal_var=False).pvalue, rel=1e-9) and p > 0.05


def test_pelt_finds_no_candidate_in_pure_noise_at_the_penalty_of_3_log_n():
    # the penalty grows with the series (PENALTY x log n): 20 quiet series of 300 runs give PELT no break
    # to propose (at 3 + log n, one of them already gives two)
    from kernelwatch.history.steps import _candidates

    found = 0
    for seed in range(20):
        logs = 0.01 * np.random.default_rng(seed).standard_normal(300)
        found += len(_candidates(logs, noise_scale(logs), 3))
    assert found == 0


@pytest.mark.parametrize(("gain", "cut"), [(3.2, True), (2.8, False)])
def test_a_clean_step_is_a_candidate_when_it_lowers_the_cost_by_more_than_3_log_n(gain, cut):
    """PELT's penalty is PENALTY x log(n) (module docstring, point 3; 3 from docs/method.md#change-points): a split of
    20 runs into 10 and 10 apart by h (in units of the scale) lowers the least-squares cost by 10 x 10 / 20 x h^2."""
    n = 20
    height = math.sqrt(gain * math.log(n) / 5)
    assert steps_module._candidates(np.r_[np.zeros(10), np.full(10, height)], 1.0, 3) == ([10] if cut else [])


def test_a_rise_of_less_than_4_standard_errors_is_no_creep():
    """CREEP_T = 4 (set on synthetic clean histories, docs/method.md#change-points): a 0.7% rise over 20 runs whose slope reads 3.4
    standard errors, a better fit than any one step, is not reported."""
    rng = np.random.default_rng(53)
    logs = np.r_[np.zeros(20), np.linspace(0, math.log(1.01), 21)[1:]] + rng.normal(0, 4e-3, 40)
    bend, slope, _, tstat = steps_module._creep(logs, 0, 40, 10)
    assert 3 < tstat < 4 and math.exp(slope * (39 - bend)) > 1.005  # the premise: all but its t makes a creep
    assert detect_steps(a_series(*list(1e-3 * np.exp(logs))), SAME_GPU_FLOOR) == []


def test_a_creep_needs_a_t_of_at_least_creep_t_and_a_rise_of_at_least_creep_detectable(monkeypatch):
    """Module docstring, point 5: "a t-statistic of at least CREEP_T", "a total rise of at least creep_detectable":
    a creep exactly at either threshold is reported, one a float above it is not."""
    series = _creep_after_a_step()
    step, creep = detect_steps(series, 0.015)
    rise = abs(creep.ratio - 1)
    assert detect_steps(series, 0.015, creep_detectable=rise) == [step, creep]
    assert detect_steps(series, 0.015, creep_detectable=np.nextafter(rise, 1)) == [step]
    *_, tstat = steps_module._creep(np.log(series.medians()), step.index, len(series), 10)
    monkeypatch.setattr(steps_module, "CREEP_T", abs(tstat))
    assert detect_steps(series, 0.015) == [step, creep]
    monkeypatch.setattr(steps_module, "CREEP_T", np.nextafter(abs(tstat), math.inf))
    assert detect_steps(series, 0.015) == [step]


def test_a_creep_after_a_step_is_found_when_the_level_before_it_is_too_short_for_one():
    """Every stretch between steps is searched for a creep, also after one too short to hold any (8 runs)."""
    found = detect_steps(_creep_after_a_step(runs_before=8), 0.015)
    assert [(s.kind, s.direction, s.index) for s in found] == [(STEP, SLOWER, 8), (CREEP, SLOWER, 47)]


@pytest.mark.parametrize(("min_size", "medians", "index"), [
    (3, [1e-3] * 3 + [1.05e-3] * 3, 3),  # six runs: three at each level, the fewest that hold a step
    (1, [1e-3, 1.05e-3], 1),  # at min_size 1, two runs
])
def test_a_step_with_min_size_runs_either_side_is_found(min_size, medians, index):
    (step,) = detect_steps(a_series(*medians), SAME_GPU_FLOOR, min_size=min_size)
    assert (step.kind, step.index, step.runs_before, step.runs_after) == (STEP, index, index, len(medians) - index)
    assert detect_steps(a_series(*medians[:-1]), SAME_GPU_FLOOR, min_size=min_size) == []  # one run fewer: none


def test_at_min_size_1_a_change_in_the_newest_run_alone_is_a_step():
    """`min_size`: the fewest runs at a level. At the default 3 a newest run 5% slow is not told from a slow run;
    at 1 it is a step of its own."""
    medians = list(1e-3 * np.exp(np.random.default_rng(5).normal(0, 1e-3, 20))) + [1.05e-3]
    assert detect_steps(a_series(*medians), SAME_GPU_FLOOR) == []
    (step,) = detect_steps(a_series(*medians), SAME_GPU_FLOOR, min_size=1)
    assert (step.kind, step.direction, step.index, step.runs_after) == (STEP, SLOWER, 20, 1)


@pytest.mark.parametrize("side", ["newest", "oldest"])
def test_a_level_of_fewer_runs_than_min_size_gives_no_step_until_it_has_them_then_the_step_is_at_its_own_run(side):
    """Two runs 3% slower after six: PELT at min_size 3 can only cut one run early, where a step would name the
    commits of a run that was not slower. No step until the third slower run; then it stands at the first."""
    noise = np.exp(np.random.default_rng(11).normal(0, 2e-3, 9))
    for slower in (2, 3):
        medians = list(1e-4 * noise[:6 + slower] * np.r_[np.ones(6), np.full(slower, 1.03)])
        at = 6
        if side == "oldest":  # the same runs backwards in time: the short level comes first
            medians, at = medians[::-1], slower
        found = [s.index for s in detect_steps(a_series(*medians), SAME_GPU_FLOOR) if s.kind == STEP]
        assert found == ([] if slower < MIN_RUNS_AT_LEVEL else [at]), (slower, found)


def test_the_first_change_point_is_judged_on_the_runs_from_the_first():
    """The stretch before the first change point starts at run 0: 3 runs before a change of 2.85 scales give
    |z| = 3.49 (p < 1e-3, a step); without the first run, 2 would give 3.12 (p > 1e-3)."""
    logs = np.r_[np.zeros(3), np.full(3, 0.0285)]
    assert steps_module._merge(logs, [3], 0.015, 1e-3, 30, 0.01, 1) == [3]


def test_a_step_needs_a_p_value_below_alpha_and_a_change_of_at_least_the_detectable_one():
    """Module docstring, point 4: a p-value "not below alpha" or a ratio "not at least detectable away from 1" is
    dropped: a step at p = alpha is not reported, one whose change is exactly the detectable one is."""
    series = _series(0, 42, step_at=STEP_AT, step=0.03)
    (step,) = detect_steps(series, SAME_GPU_FLOOR)
    assert 0 < step.p_value < 1e-6
    assert detect_steps(series, SAME_GPU_FLOOR, alpha=step.p_value) == []
    assert detect_steps(series, SAME_GPU_FLOOR, alpha=np.nextafter(step.p_value, 1)) == [step]
    assert detect_steps(series, abs(step.ratio - 1)) == [step]
    assert detect_steps(series, np.nextafter(abs(step.ratio - 1), 1)) == []


def test_by_default_a_step_needs_a_p_value_below_1_in_1000():
    """detect_steps' default alpha, 1e-3: a 3% step in 2.5% noise with p = 0.0016 is reported only when asked."""
    rng = np.random.default_rng(22)
    logs = np.r_[np.zeros(20), np.full(20, math.log(1.03))] + rng.normal(0, 0.025, 40)
    series = a_series(*list(1e-3 * np.exp(logs)))
    (step,) = detect_steps(series, SAME_GPU_FLOOR, alpha=0.01)
    assert step.index == 20 and 1e-3 < step.p_value < 0.01
    assert detect_steps(series, SAME_GPU_FLOOR) == []


def test_detect_steps_takes_its_options_by_keyword_only():
    """alpha, window, ... are keywords (detect_all hands them on as such): a third positional argument is refused."""
    with pytest.raises(TypeError):
        detect_steps(a_series(*QUIET), SAME_GPU_FLOOR, 0.5)


@pytest.mark.parametrize(("runs", "creep_min_runs"), [(2, 1), (30, 10)])
def test_identical_medians_are_no_creep_even_when_any_rise_counts(runs, creep_min_runs):
    """A flat fit has slope 0 and no error: its t is 0, so no creep even at creep_detectable 0 (any rise), and at
    creep_min_runs 1 on two runs."""
    assert detect_steps(a_series(*[1e-3] * runs), SAME_GPU_FLOOR, creep_min_runs=creep_min_runs,
                        creep_detectable=0.0) == []


def test_a_creep_over_three_runs_has_its_interval_and_p_on_one_degree_of_freedom():
    """creep_min_runs 2 on three runs: the bend at the first and a straight line through them (n - 2 = 1 degree
    of freedom for the slope's standard error, its t interval and its p-value)."""
    series = a_series(1e-3, 1.01e-3, 1.0205e-3)
    (creep,) = detect_steps(series, SAME_GPU_FLOOR, creep_min_runs=2)
    assert (creep.kind, creep.before, creep.after) == (CREEP, series.points[0], series.points[2])
    (_, slope), (rss,), *_ = np.linalg.lstsq(np.c_[np.ones(3), np.arange(3.0)], np.log(series.medians()), rcond=None)
    se, tcrit = math.sqrt(rss / 1 / 2), stats.t.ppf(0.975, 1)  # 2: the sum of squares of the runs 0, 1, 2 centred
    assert creep.ratio == pytest.approx(math.exp(2 * slope), rel=1e-9)
    assert creep.ratio_low == pytest.approx(math.exp(2 * (slope - tcrit * se)), rel=1e-9)
    assert creep.ratio_high == pytest.approx(math.exp(2 * (slope + tcrit * se)), rel=1e-9)
    assert creep.p_value == pytest.approx(2 * stats.t.sf(slope / se, 1), rel=1e-6)


@pytest.mark.parametrize(("at", "exact"), [(3, True), (7, True), (2, False), (8, False)])
def test_the_best_step_under_a_ramp_leaves_min_runs_at_each_level(at, exact):
    """The one step a creep is weighed against has at least `min_size` runs each side (10 runs, 3 a side: steps
    at runs 3 to 7): a clean step there fits exactly, one nearer an end is fitted at the nearest allowed run."""
    residual = steps_module._best_step_residual(np.r_[np.zeros(at), np.ones(10 - at)], 3)
    assert (residual == 0) == exact and residual >= 0
