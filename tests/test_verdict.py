"""CPU tests for harness.verdict on sample sets drawn with fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.verdict import (
    FASTER,
    NO_BASELINE,
    REGRESSED,
    SAME,
    THRESHOLD_ENV,
    THROTTLED,
    Verdict,
    format_duration,
    judge,
    threshold_from_env,
)

CASE = "suites/test_perf_matmul.py::test_matmul_time[tiled32-1024x1024x1024]"
BASE_SECONDS = 1.0e-3


def draw(seed, scale=1.0, spread=0.01, n=60):
    """Per-sample times around BASE_SECONDS * scale with lognormal spread."""
    rng = np.random.default_rng(seed)
    return (BASE_SECONDS * scale * rng.lognormal(0.0, spread, n)).tolist()


def test_identical_sample_sets_are_same():
    samples = draw(1)
    verdict = judge(CASE, samples, list(samples))
    assert verdict.label == SAME
    assert verdict.ratio == pytest.approx(1.0)
    assert verdict.p_value > 0.4
    assert verdict.passed


def test_twenty_percent_slower_with_low_noise_is_regressed():
    verdict = judge(CASE, draw(1), draw(2, scale=1.2))
    assert verdict.label == REGRESSED
    assert verdict.ratio == pytest.approx(1.2, rel=0.01)
    assert verdict.p_value < 1e-6
    assert not verdict.passed
    assert "slower" in verdict.reason and "5% threshold" in verdict.reason


def test_three_percent_slower_is_same_below_the_threshold():
    baseline, current = draw(1, spread=0.002), draw(2, scale=1.03, spread=0.002)
    verdict = judge(CASE, baseline, current)
    assert verdict.p_value < 0.01, "the shift is significant, only the threshold saves it"
    assert verdict.label == SAME
    assert "within the 5% threshold" in verdict.reason


def test_twenty_percent_slower_inside_wider_noise_is_same():
    baseline, current = draw(1, spread=0.4), draw(2, scale=1.2, spread=0.4)
    verdict = judge(CASE, baseline, current)
    assert verdict.ratio > 1.05, "precondition: the medians moved past the threshold"
    assert verdict.label == SAME
    assert "noise" in verdict.reason


def test_twenty_percent_faster_with_low_noise_is_faster():
    verdict = judge(CASE, draw(1), draw(2, scale=0.8))
    assert verdict.label == FASTER
    assert verdict.ratio == pytest.approx(0.8, rel=0.01)
    assert verdict.p_value < 1e-6
    assert verdict.passed
    assert "faster" in verdict.reason


def test_throttled_run_is_not_compared_and_passes():
    verdict = judge(CASE, draw(1), draw(2, scale=1.5), throttled=True)
    assert verdict.label == THROTTLED
    assert verdict.passed
    assert verdict.p_value is None
    assert "NVML" in verdict.reason and "throttling" in verdict.reason


def test_missing_baseline_gives_no_baseline_with_the_current_median():
    current = [3e-3, 1e-3, 2e-3]
    verdict = judge(CASE, None, current)
    assert verdict.label == NO_BASELINE
    assert verdict.passed
    assert verdict.baseline_median is None and verdict.ratio is None
    assert verdict.current_median == pytest.approx(2e-3)


def test_two_samples_each_are_judged_on_ratio_and_noise_without_a_p_value():
    verdict = judge(CASE, [1.00e-3, 1.01e-3], [1.20e-3, 1.21e-3])
    assert verdict.label == REGRESSED
    assert verdict.p_value is None
    assert "too few samples" in verdict.reason


def test_three_samples_each_cannot_reach_significance_and_stay_same():
    verdict = judge(CASE, [1.00e-3, 1.01e-3, 1.02e-3], [1.20e-3, 1.21e-3, 1.22e-3])
    assert verdict.p_value == pytest.approx(0.05)
    assert verdict.label == SAME
    assert "not significant" in verdict.reason


def test_a_looser_threshold_turns_a_regression_into_same():
    baseline, current = draw(1), draw(2, scale=1.2)
    assert judge(CASE, baseline, current, threshold=0.25).label == SAME


def test_verdict_is_frozen():
    verdict = judge(CASE, draw(1), draw(2))
    with pytest.raises(AttributeError):
        verdict.label = REGRESSED


def test_only_regressed_verdicts_fail():
    labels = {SAME: True, FASTER: True, THROTTLED: True, NO_BASELINE: True, REGRESSED: False}
    for label, passed in labels.items():
        assert Verdict(CASE, label, 1e-3, 1e-3, 1.0, None, "x").passed is passed


@pytest.mark.parametrize("baseline, current, kwargs, problem", [
    ([1e-3], [], {}, "current samples are empty"),
    ([], [1e-3], {}, "baseline samples are empty"),
    ([1e-3], [float("nan")], {}, "NaN or infinite"),
    ([float("inf")], [1e-3], {}, "NaN or infinite"),
    ([1e-3], [0.0], {}, "zero or negative"),
    ([-1e-3], [1e-3], {}, "zero or negative"),
    ([1e-3], [1e-3], {"threshold": 0.0}, "threshold"),
    ([1e-3], [1e-3], {"threshold": 1.0}, "threshold"),
    ([1e-3], [1e-3], {"threshold": 5}, "threshold"),
    ([1e-3], [1e-3], {"alpha": 0}, "alpha"),
    (None, [], {}, "current samples are empty"),
])
def test_bad_input_is_a_value_error_naming_the_problem(baseline, current, kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        judge(CASE, baseline, current, **kwargs)


@pytest.mark.parametrize("raw, expected", [
    ("0.05", 0.05), ("0.1", 0.1), ("5%", 0.05), (" 12.5 % ", 0.125), ("", 0.07),
])
def test_threshold_from_env_accepts_fractions_and_percentages(monkeypatch, raw, expected):
    monkeypatch.setenv(THRESHOLD_ENV, raw)
    assert threshold_from_env(default=0.07) == pytest.approx(expected)


def test_threshold_from_env_uses_the_default_when_unset(monkeypatch):
    monkeypatch.delenv(THRESHOLD_ENV, raising=False)
    assert threshold_from_env(default=0.08) == 0.08


@pytest.mark.parametrize("raw", ["five", "5", "0", "-0.1", "100%", "nan", "%"])
def test_threshold_from_env_rejects_invalid_values_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv(THRESHOLD_ENV, raw)
    with pytest.raises(ValueError, match=THRESHOLD_ENV):
        threshold_from_env()


@pytest.mark.parametrize("seconds, text", [
    (1.234e-9, "1.23 ns"), (4.56e-6, "4.56 µs"), (1.234e-4, "123 µs"),
    (0.9999, "1.00 s"), (0.0123, "12.3 ms"), (2.5, "2.50 s"),
])
def test_format_duration_uses_three_significant_figures_and_a_fitting_unit(seconds, text):
    assert format_duration(seconds) == text


def test_reason_reports_the_percentage_of_the_change():
    verdict = judge(CASE, [1.0e-3] * 2, [1.5e-3] * 2)
    assert verdict.label == REGRESSED
    assert verdict.reason.startswith("50.0% slower")
    assert math.isclose(verdict.ratio, 1.5)
