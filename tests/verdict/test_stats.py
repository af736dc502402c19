"""CPU tests for kernelwatch.verdict.stats, alone and with the noise model, on recorded and built sample sets."""

from __future__ import annotations

import math
import re

import pytest
from scipy.stats import mannwhitneyu

from kernelwatch.verdict import stats
from kernelwatch.verdict.labels import FASTER, NEW, SAME, SLOWER, THROTTLED, Verdict
from kernelwatch.verdict.noise import (
    detectable_change,
)
from kernelwatch.verdict.stats import format_duration, judge, parse_fraction
from tests.support.sample_sets import ADD_8192_VEC4, SPREAD, recorded, spread_samples

ADD_1024_VEC4 = "suites/test_perf_elementwise.py::test_add_time[1024x1024-vector_add_vec4]"
WARPTILE_4096 = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-tiled32]"


def rerun_halves(case):
    """The recorded set split into two runs of one host: first half, second half."""
    samples = recorded(case)
    return samples[: len(samples) // 2], samples[len(samples) // 2:]


def slowed(samples, factor):
    return [s * factor for s in samples]


def judged(baseline, current, *, same_gpu=True, history=(), **kwargs):
    """judge() against the noise model's detectable change, as the suite does."""
    detectable = detectable_change(baseline, current, same_gpu=same_gpu, history=history)
    return judge(CASE, baseline, current, detectable=detectable.fraction, because=detectable.because, **kwargs)


@pytest.mark.parametrize("case", [ADD_8192_VEC4, WARPTILE_4096])
def test_a_3_percent_slowdown_against_this_gpu_is_regressed(case):
    baseline, rerun = rerun_halves(case)
    verdict = judged(baseline, slowed(rerun, 1.03), same_gpu=True)
    assert verdict.label == SLOWER
    assert verdict.detectable == 0.015
    assert re.fullmatch(r"3\.\d% slower than the reference \(p=[0-9.e-]+\); "
                        r"detectable change 1\.5% \(1\.5% floor, same GPU\)", verdict.reason), verdict.reason


def test_a_3_percent_slowdown_built_at_50_microseconds_with_half_a_percent_noise_is_regressed():
    baseline, current = spread_samples(50e-6, 0.005, 21), spread_samples(50e-6 * 1.03, 0.005, 21, seed=1)
    assert judged(baseline, current, same_gpu=True).label == SLOWER


@pytest.mark.parametrize("case", [ADD_8192_VEC4, WARPTILE_4096])
def test_a_3_percent_slowdown_against_another_gpu_is_same(case):
    baseline, rerun = rerun_halves(case)
    verdict = judged(baseline, slowed(rerun, 1.03), same_gpu=False)
    assert verdict.p_value < 0.01, "precondition: the shift is significant, only the floor keeps it same"
    assert verdict.label == SAME
    assert verdict.reason.endswith("detectable change 5.0% (5% floor, other or unknown GPU), not exceeded")


@pytest.mark.parametrize("case", [ADD_8192_VEC4, ADD_1024_VEC4, WARPTILE_4096])
@pytest.mark.parametrize("same_gpu", [True, False])
def test_two_runs_of_one_host_are_same(case, same_gpu):
    baseline, rerun = rerun_halves(case)
    assert judged(baseline, rerun, same_gpu=same_gpu).label == SAME


def test_identical_sample_sets_are_same():
    samples = spread_samples(183e-6, 0.003, 20)
    verdict = judged(samples, list(samples))
    assert verdict.label == SAME
    assert verdict.ratio == 1.0
    assert verdict.p_value > 0.4


def test_a_3_percent_speedup_against_this_gpu_is_faster():
    baseline, rerun = rerun_halves(ADD_8192_VEC4)
    verdict = judged(baseline, slowed(rerun, 0.97), same_gpu=True)
    assert verdict.label == FASTER
    assert verdict.reason.startswith("3.0% faster than the reference")


def test_the_spread_of_stored_runs_keeps_a_3_percent_slowdown_same():
    # stored medians of five runs on this GPU: 1.2% spread, so 3 x noise is 3 x sqrt(2) x 1.2% = 5.2%
    history = [183e-6, 186e-6, 180.5e-6, 184e-6, 181e-6]
    baseline, rerun = rerun_halves(ADD_8192_VEC4)
    verdict = judged(baseline, slowed(rerun, 1.03), same_gpu=True, history=history)
    assert verdict.p_value < 0.01, "precondition: the shift is significant, only the noise term keeps it same"
    assert verdict.label == SAME
    assert verdict.detectable == pytest.approx(0.052, abs=0.001)
    assert "3 x noise (samples 0.1%, stored runs 1.2%)" in verdict.reason


def test_a_5_percent_slowdown_of_a_5_microsecond_kernel_is_within_its_absolute_floor():
    baseline, current = spread_samples(5e-6, 0.02, 10), spread_samples(5e-6 * 1.05, 0.02, 10, seed=1)
    verdict = judged(baseline, current, same_gpu=True)
    assert verdict.p_value < 0.01, "precondition: the shift is significant, only the 0.3 µs floor keeps it same"
    assert verdict.label == SAME
    assert "(0.3 µs absolute floor)" in verdict.reason


def test_a_10_percent_slowdown_of_a_5_microsecond_kernel_is_regressed():
    baseline, current = spread_samples(5e-6, 0.02, 10), spread_samples(5e-6 * 1.10, 0.02, 10, seed=1)
    assert judged(baseline, current, same_gpu=True).label == SLOWER


def test_significance_is_judged_at_alpha_0_01():
    # 4 samples a side, fully separated: the smallest one-sided p is 1/70 = 0.014
    baseline, current = [1.00e-3, 1.01e-3, 1.02e-3, 1.03e-3], [1.10e-3, 1.11e-3, 1.12e-3, 1.13e-3]
    verdict = judge(CASE, baseline, current, detectable=0.02)
    assert verdict.p_value == pytest.approx(1 / 70)
    assert verdict.label == SAME
    assert verdict.reason.endswith("exceeded but not significant at alpha=0.01")
    assert judge(CASE, baseline, current, detectable=0.02, alpha=0.05).label == SLOWER


# Medians of power-of-two times scaled by 1.25 and 0.75 are exact in binary floating point.
EXACT = spread_samples(2.0**-13, 0.003, 21)


@pytest.mark.parametrize("factor, beyond", [(1.25, SLOWER), (0.75, FASTER)])
def test_a_change_exactly_at_the_detectable_change_is_same(factor, beyond):
    current = slowed(EXACT, factor)
    assert judge(CASE, EXACT, current, detectable=0.25).label == SAME
    assert judge(CASE, EXACT, current, detectable=0.2499).label == beyond


def test_a_detectable_change_above_1_is_allowed_for_tiny_kernels():
    verdict = judge(CASE, EXACT, slowed(EXACT, 1.25), detectable=2.0)
    assert verdict.label == SAME
    assert verdict.detectable == 2.0


def test_throttled_run_is_not_compared():
    verdict = judge(CASE, EXACT, slowed(EXACT, 1.5), detectable=0.02, throttled=True)
    assert verdict.label == THROTTLED
    assert verdict.p_value is None
    assert verdict.ratio == pytest.approx(1.5)
    assert "NVML" in verdict.reason and "throttling" in verdict.reason


def test_missing_baseline_gives_no_baseline_with_the_current_median():
    verdict = judge(CASE, None, [3e-3, 1e-3, 2e-3], detectable=None)
    assert verdict.label == NEW
    assert verdict.reference_median is None and verdict.ratio is None and verdict.detectable is None
    assert verdict.current_median == pytest.approx(2e-3)


def test_two_samples_each_are_judged_on_the_ratio_alone():
    verdict = judge(CASE, [1.00e-3, 1.01e-3], [1.20e-3, 1.21e-3], detectable=0.02)
    assert verdict.label == SLOWER
    assert verdict.p_value is None
    assert "too few samples" in verdict.reason
    assert judge(CASE, [1.00e-3, 1.01e-3], [1.01e-3, 1.02e-3], detectable=0.02).label == SAME


def test_three_samples_each_are_tested_and_cannot_reach_significance():
    verdict = judge(CASE, [1.00e-3, 1.01e-3, 1.02e-3], [1.20e-3, 1.21e-3, 1.22e-3], detectable=0.02)
    assert verdict.p_value == pytest.approx(0.05)
    assert verdict.label == SAME


def test_reason_states_the_change_p_and_the_detectable_change():
    verdict = judge(CASE, [1.0e-3] * 2, [1.5e-3] * 2, detectable=0.02, because="2% floor, same GPU")
    assert verdict.reason == ("50.0% slower than the reference (too few samples for a significance test); "
                              "detectable change 2.0% (2% floor, same GPU)")
    assert math.isclose(verdict.ratio, 1.5)
    assert judge(CASE, [1.0e-3] * 2, [1.5e-3] * 2, detectable=0.02).reason.endswith("detectable change 2.0%")


def test_verdict_is_frozen():
    verdict = judge(CASE, EXACT, EXACT, detectable=0.02)
    with pytest.raises(AttributeError):
        verdict.label = SLOWER


@pytest.mark.parametrize("baseline, current, kwargs, problem", [
    ([1e-3], [], {}, "current samples are empty"),
    ([], [1e-3], {}, "baseline samples are empty"),
    ([1e-3], [float("nan")], {}, "NaN or infinite"),
    ([float("inf")], [1e-3], {}, "NaN or infinite"),
    ([1e-3], [0.0], {}, "zero or negative"),
    ([-1e-3], [1e-3], {}, "zero or negative"),
    ([[1e-3]], [1e-3], {}, "flat sequence"),
    (["fast"], [1e-3], {}, "not numbers"),
    ([1e-3], [1e-3], {"detectable": 0.0}, "detectable"),
    ([1e-3], [1e-3], {"detectable": None}, "detectable"),
    ([1e-3], [1e-3], {"detectable": float("inf")}, "detectable"),
    ([1e-3], [1e-3], {"alpha": 0}, "alpha"),
    ([1e-3], [1e-3], {"alpha": 1.0}, "alpha"),
    (None, [], {}, "current samples are empty"),
])
def test_bad_input_is_a_value_error_naming_the_problem(baseline, current, kwargs, problem):
    kwargs = {"detectable": 0.02, **kwargs}
    with pytest.raises(ValueError, match=problem):
        judge(CASE, baseline, current, **kwargs)


@pytest.mark.parametrize("raw, expected", [
    ("0.05", 0.05), ("0.1", 0.1), ("5%", 0.05), (" 12.5 % ", 0.125), ("0.999", 0.999),
])
def test_parse_fraction_accepts_fractions_and_percentages(raw, expected):
    assert parse_fraction(raw, "--kernelwatch-threshold") == pytest.approx(expected)


@pytest.mark.parametrize("raw", ["five", "", "5", "0", "-0.1", "1", "100%", "nan", "inf", "%", 0.05])
def test_parse_fraction_rejects_anything_else_naming_what(raw):
    with pytest.raises(ValueError, match="--kernelwatch-threshold"):
        parse_fraction(raw, "--kernelwatch-threshold")


@pytest.mark.parametrize("seconds, text", [
    (1.234e-9, "1.23 ns"), (4.56e-6, "4.56 µs"), (1.234e-4, "123 µs"),
    (0.9999, "1.00 s"), (0.0123, "12.3 ms"), (2.5, "2.50 s"),
])
def test_format_duration_uses_three_significant_figures_and_a_fitting_unit(seconds, text):
    assert format_duration(seconds) == text


def test_verdict_fields_are_in_the_documented_order():
    verdict = Verdict(CASE, SAME, 1e-3, 1e-3, 1.0, 0.02, "same", p_value=0.5)
    assert (verdict.p_value, verdict.detectable, verdict.reason) == (0.5, 0.02, "same")


def test_the_significance_test_runs_from_three_samples_on_each_side():
    slower = stats.judge("case", [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], detectable=0.05, alpha=0.2)
    assert slower.p_value is not None
    too_few = stats.judge("case", [1.0, 1.0], [2.0, 2.0], detectable=0.05, alpha=0.2)
    assert too_few.p_value is None


def test_a_single_number_is_not_a_sample_set():
    with pytest.raises(ValueError, match="flat sequence"):
        stats.checked_samples("current", 1e-3)


# 165146 a side: scipy's tie correction of one all-tied group rounds below zero and Mann-Whitney's p is NaN
@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
@pytest.mark.parametrize("count", [8, 165_146])
def test_samples_with_no_spread_at_all_read_as_p_one(count):
    verdict = stats.judge("c", [1e-3] * count, [1e-3] * count, detectable=0.015)
    assert verdict.p_value == 1.0 and "p=1" in verdict.reason


@pytest.mark.parametrize("alpha", [-0.5, 1.5])
def test_an_alpha_outside_zero_to_one_is_an_error(alpha):
    with pytest.raises(ValueError, match="alpha must be a fraction"):
        stats.judge("c", SPREAD, SPREAD, detectable=0.015, alpha=alpha)


def test_a_negative_detectable_change_is_an_error():
    with pytest.raises(ValueError, match="detectable must be a positive fraction"):
        stats.judge("c", SPREAD, SPREAD, detectable=-0.015)


def test_equal_medians_are_tested_for_a_slowdown():
    baseline = [1e-3, 2e-3, 3e-3, 3.1e-3, 3.2e-3]
    current = [2.9e-3, 3e-3, 3e-3, 3e-3, 10e-3, 11e-3, 12e-3]
    verdict = stats.judge("c", baseline, current, detectable=0.015)
    assert verdict.ratio == 1.0
    assert verdict.p_value == pytest.approx(mannwhitneyu(current, baseline, alternative="greater").pvalue)


def test_a_significant_speedup_inside_the_detectable_change_is_same():
    faster = [value * 0.97 for value in SPREAD]
    verdict = stats.judge("c", SPREAD, faster, detectable=0.05)
    assert verdict.p_value < 0.01 and verdict.label == SAME


def test_a_p_value_equal_to_alpha_is_not_significant():
    # three samples a side, fully apart: the exact one-sided p is 1/20
    verdict = stats.judge("c", [1e-3, 1.01e-3, 1.02e-3], [2e-3, 2.01e-3, 2.02e-3], detectable=0.015, alpha=0.05)
    assert verdict.p_value == 0.05 and verdict.label == SAME


def test_the_reason_names_the_detectable_change_in_percent():
    assert "detectable change 50.0%" in stats.judge("c", SPREAD, SPREAD, detectable=0.5).reason


def test_the_detectable_change_and_the_other_options_must_be_named():
    """Keyword-only: a bare fraction after the samples could as well be alpha."""
    with pytest.raises(TypeError, match="positional"):
        judge(CASE, SPREAD, SPREAD, 0.015)
