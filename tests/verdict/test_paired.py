"""kernelwatch.verdict.paired: the interleaved A/B verdict, its bootstrap interval and its labels."""


import numpy as np
import pytest

from kernelwatch.timing import profile
from kernelwatch.timing.profile import MIN_PAIRS
from kernelwatch.verdict.labels import FASTER, NEW, REMOVED, SAME, SLOWER, UNCHANGED, Verdict
from kernelwatch.verdict.paired import bootstrap_ratio_interval, judge_paired, new, removed, unchanged

CASE = "test_matmul_time[warptile-1024x1024x1024]"
MEDIAN_TIME = 1.234e-3  # seconds, the scale of a mid-sized matmul on the H200


def interleaved_run(seed, pairs=30, ratio=1.0, noise=0.003, drift=0.0):
    """Base and head samples as an A,B,A,B run records them: a shared drift from the first pair
    to the last, log-normal noise of relative size `noise` per sample, and on 3% of samples a
    10% spike (a clock or neighbour hiccup), independently on each side."""
    rng = np.random.default_rng(seed)
    shared = 1 + drift * np.linspace(0, 1, pairs)
    base = MEDIAN_TIME * shared * np.exp(noise * rng.standard_normal(pairs))
    head = MEDIAN_TIME * ratio * shared * np.exp(noise * rng.standard_normal(pairs))
    for side in (base, head):
        side[rng.random(pairs) < 0.03] *= 1.1
    return base, head


def judged(base, head, detectable=0.02, **options):
    return judge_paired(CASE, base, head, detectable=detectable, **options)


def test_three_percent_slowdown_in_three_per_mille_noise_is_slower():
    verdict = judged(*interleaved_run(seed=1, ratio=1.03))
    assert verdict.label == SLOWER
    assert 1 < verdict.ci_low <= 1.03 <= verdict.ci_high
    assert not verdict.passed
    assert verdict.reason.startswith("3.")
    assert "slower than base" in verdict.reason


def test_three_percent_speedup_in_three_per_mille_noise_is_faster():
    verdict = judged(*interleaved_run(seed=1, ratio=1 / 1.03))
    assert verdict.label == FASTER
    assert verdict.ci_high < 1
    assert verdict.passed


@pytest.mark.parametrize("seed", range(10))
def test_identical_distributions_are_same(seed):
    assert judged(*interleaved_run(seed)).label == SAME


@pytest.mark.parametrize("seed", range(5))
def test_shared_drift_over_the_run_makes_no_verdict(seed):
    base, head = interleaved_run(seed, drift=0.05)
    assert np.median(base[-5:]) / np.median(base[:5]) > 1.03  # the drift is larger than the detectable change
    assert judged(base, head).label == SAME


@pytest.mark.parametrize("seed", range(8))
def test_three_percent_slowdown_under_a_ten_percent_shared_drift_is_still_slower(seed):
    """Resampling whole pairs keeps the drift out of the interval: resampling base and head
    independently puts 1 inside the interval for most of these seeds."""
    verdict = judged(*interleaved_run(seed, ratio=1.03, drift=0.10))
    assert verdict.label == SLOWER


def test_one_percent_change_under_two_percent_detectable_is_same_though_the_interval_excludes_one():
    verdict = judged(*interleaved_run(seed=2, ratio=1.01, noise=0.001), detectable=0.02)
    assert verdict.ci_low > 1  # the interval alone would call it: the ratio test must also hold
    assert verdict.label == SAME
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 2% detectable change")


def test_interval_contains_the_true_ratio_in_nearly_all_simulated_runs():
    true_ratio = 1.03
    covered = 0
    for seed in range(200):
        verdict = judged(*interleaved_run(seed + 1000, ratio=true_ratio))
        covered += verdict.ci_low <= true_ratio <= verdict.ci_high
    # a 99% interval; 95% leaves room for the bootstrap's undercoverage at 30 pairs (198 measured)
    assert covered >= 190


@pytest.mark.parametrize("pairs", [5, 30, 31, 200])
def test_bootstrap_matches_numpy_medians_of_the_same_resamples(pairs):
    """The bootstrap sorts ranks instead of times; it must give numpy's medians, ties included."""
    base, head = interleaved_run(seed=pairs, pairs=pairs, ratio=1.02, noise=0.01)
    base, head = np.round(base, 5), np.round(head, 5)  # 10 µs resolution: ties between samples
    assert np.unique(base).size < pairs
    picks = np.random.default_rng(7).integers(0, pairs, size=(500, pairs))
    ratios = np.median(head[picks], axis=1) / np.median(base[picks], axis=1)
    expected = np.quantile(ratios, [0.025, 0.975])
    assert bootstrap_ratio_interval(base, head, 0.95, 500, 7) == tuple(expected)


def exactly_scaled(factor, pairs=31):
    """Base times whose median is exactly 1.0 s and head times exactly `factor` times as long."""
    base = 1 + 0.001 * np.arange(-(pairs // 2), pairs // 2 + 1)
    return base, base * factor


def test_ratio_exactly_at_the_detectable_change_is_same():
    detectable = 2.0**-5  # 1 + detectable and the ratio are both exact in binary
    verdict = judged(*exactly_scaled(1 + detectable), detectable=detectable)
    assert verdict.ratio == 1 + detectable
    assert verdict.ci_low > 1
    assert verdict.label == SAME
    assert judged(*exactly_scaled(1 + detectable), detectable=0.03).label == SLOWER


def test_ratio_exactly_at_the_detectable_speedup_is_same():
    detectable = 2.0**-5
    verdict = judged(*exactly_scaled(1 - detectable), detectable=detectable)
    assert verdict.ratio == 1 - detectable
    assert verdict.ci_high < 1
    assert verdict.label == SAME
    assert judged(*exactly_scaled(1 - detectable), detectable=0.03).label == FASTER


def bimodal_head(slow_value, pairs=31, fast_count=14):
    """Base always 1 s; head 1 s in `fast_count` pairs and `slow_value` in the others, so the
    head median is `slow_value` but over a third of the resamples have a median of exactly 1."""
    base = np.ones(pairs)
    head = np.array([1.0] * fast_count + [slow_value] * (pairs - fast_count))
    return base, head


def test_interval_touching_one_is_not_a_slowdown_however_large_the_ratio():
    verdict = judged(*bimodal_head(2.0))
    assert verdict.ratio == 2.0
    assert verdict.ci_low == 1.0
    assert verdict.label == SAME
    assert "but the interval includes 1" in verdict.reason


def test_interval_touching_one_is_not_a_speedup_however_small_the_ratio():
    verdict = judged(*bimodal_head(0.5))
    assert verdict.ratio == 0.5
    assert verdict.ci_high == 1.0
    assert verdict.label == SAME


def test_confidence_is_honoured():
    base, head = interleaved_run(seed=5, ratio=1.03, noise=0.03)
    loose = judged(base, head, confidence=0.90)
    strict = judged(base, head, confidence=0.99)
    assert strict.ci_low < loose.ci_low <= loose.ci_high < strict.ci_high
    assert (loose.label, strict.label) == (SLOWER, SAME)
    assert "99% interval" in strict.reason


def test_same_samples_give_the_same_interval_and_another_seed_a_slightly_different_one():
    base, head = interleaved_run(seed=3, ratio=1.03)
    first, again = judged(base, head), judged(base, head)
    other_seed = judged(base, head, seed=1)
    assert first == again
    assert other_seed.ci_low != first.ci_low
    assert other_seed.label == first.label


def test_unequal_lengths_use_the_common_prefix():
    base, head = interleaved_run(seed=4, pairs=40, ratio=1.03)
    base_with_tail = np.concatenate([base, np.full(40, 10 * MEDIAN_TIME)])
    assert judged(base_with_tail, head) == judged(base, head)
    assert judged(base, head[:25]) == judged(base[:25], head[:25])


def test_five_pairs_are_enough_and_four_are_not():
    base, head = interleaved_run(seed=6, pairs=5)
    assert judged(base, head).label in (SAME, SLOWER, FASTER)
    with pytest.raises(ValueError, match="4 pairs of samples, at least 5"):
        judged(base[:4], head)


@pytest.mark.parametrize("bad, problem", [
    ([1e-3] * 9 + [float("nan")], "NaN or infinite"),
    ([1e-3] * 9 + [0.0], "zero or negative"),
    ([1e-3] * 9 + [-1e-3], "zero or negative"),
    ([[1e-3] * 5] * 2, "flat sequence"),
    (["fast"] * 10, "not numbers"),
])
def test_bad_samples_are_an_error_naming_the_side(bad, problem):
    good = [1e-3] * 10
    with pytest.raises(ValueError, match=f"head samples .*{problem}|head samples are {problem}"):
        judged(good, bad)
    with pytest.raises(ValueError, match=f"base samples .*{problem}|base samples are {problem}"):
        judged(bad, good)


@pytest.mark.parametrize("name, value", [
    ("detectable", 0), ("detectable", 1), ("detectable", -0.02), ("detectable", True),
    ("confidence", 0), ("confidence", 1.0), ("confidence", 99), ("confidence", "0.99"),
])
def test_fraction_outside_zero_one_is_an_error(name, value):
    base, head = interleaved_run(seed=0)
    options = {"detectable": 0.02, name: value}
    with pytest.raises(ValueError, match=f"{name} must be a fraction"):
        judge_paired(CASE, base, head, **options)


@pytest.mark.parametrize("resamples", [99, 0, 1000.0, True])
def test_too_few_or_non_integer_resamples_are_an_error(resamples):
    with pytest.raises(ValueError, match="resamples must be an integer of at least 100"):
        judged(*interleaved_run(seed=0), resamples=resamples)


def test_unchanged_is_not_timed_and_passes():
    verdict = unchanged(CASE)
    assert verdict == Verdict(CASE, UNCHANGED, None, None, None, None, verdict.reason)
    assert verdict.label == "unchanged"
    assert "same SASS" in verdict.reason
    assert verdict.passed


def test_new_case_reports_its_head_median_only():
    verdict = new(CASE, [2e-3, 1e-3, 3e-3])
    assert (verdict.label, verdict.current_median, verdict.reference_median, verdict.ratio) == (NEW, 2e-3, None, None)
    assert "2.00 ms" in verdict.reason
    assert verdict.passed


def test_new_case_without_samples_is_an_error():
    with pytest.raises(ValueError, match="head samples are empty"):
        new(CASE, [])


def test_removed_case_passes_with_a_reason():
    verdict = removed(CASE)
    assert verdict.label == REMOVED
    assert verdict.current_median is None and verdict.reference_median is None
    assert "base only" in verdict.reason
    assert verdict.passed


def distinct_run(pairs, ratio=1.0, seed=0):
    """Base and head samples with no two values alike (so every median is one sample's own)."""
    rng = np.random.default_rng(seed)
    base = 1e-3 * (1 + 0.01 * rng.standard_normal(pairs))
    head = ratio * 1e-3 * (1 + 0.01 * rng.standard_normal(pairs))
    assert np.unique(base).size == pairs and np.unique(head).size == pairs
    return base, head


def test_a_paired_verdict_needs_five_pairs():
    assert MIN_PAIRS == profile.MIN_PAIRS == 5
    base = [1e-3, 1.01e-3, 0.99e-3, 1.02e-3, 0.98e-3]
    with pytest.raises(ValueError, match="at least 5"):
        judge_paired("case", base[:4], base[:4], detectable=0.05)
    judge_paired("case", base, base, detectable=0.05)  # five pairs are enough


@pytest.mark.parametrize("pairs", [5, 31])
def test_the_bootstrap_median_of_an_odd_number_of_pairs_is_the_middle_sample(pairs):
    """The bootstrap's median of an odd count is the middle value, not a mean of it and its neighbour."""
    base, head = distinct_run(pairs, ratio=1.02)
    picks = np.random.default_rng(3).integers(0, pairs, size=(400, pairs))
    ratios = np.median(head[picks], axis=1) / np.median(base[picks], axis=1)
    assert bootstrap_ratio_interval(base, head, 0.9, 400, 3) == tuple(np.quantile(ratios, [0.05, 0.95]))


def test_one_hundred_resamples_are_enough():
    """The documented least resample count, 100, is accepted."""
    verdict = judge_paired(CASE, *distinct_run(30), detectable=0.02, resamples=100)
    assert verdict.ci_low is not None


def test_identical_sides_are_within_the_detectable_change_and_the_interval_is_one():
    """Equal samples give ratio 1 and an interval of exactly 1 to 1: the reason says 'within', not
    that the interval excludes 1."""
    base = 1e-3 * (1 + 0.01 * np.arange(11))
    verdict = judge_paired(CASE, base, base.copy(), detectable=0.02)
    assert (verdict.ratio, verdict.ci_low, verdict.ci_high) == (1.0, 1.0, 1.0)
    assert verdict.label == "same"
    assert verdict.reason.endswith("): within the 2% detectable change")


def test_the_reason_names_the_confidence_in_percent():
    verdict = judge_paired(CASE, *distinct_run(30), detectable=0.02, confidence=0.95)
    assert "; 95% interval " in verdict.reason


def test_the_bootstrap_ranks_more_pairs_than_sixteen_bits_can_count():
    """Over 32767 pairs the ranks need 32 bits: the medians are still numpy's."""
    pairs = 40_000
    base, head = distinct_run(pairs, ratio=1.01, seed=1)
    picks = np.random.default_rng(5).integers(0, pairs, size=(100, pairs))
    ratios = np.median(head[picks], axis=1) / np.median(base[picks], axis=1)
    # an even count's median is a mean of two: numpy's and the bootstrap's may differ in the last bit
    assert bootstrap_ratio_interval(base, head, 0.9, 100, 5) == pytest.approx(np.quantile(ratios, [0.05, 0.95]), rel=1e-12)


def test_a_significant_speedup_inside_the_detectable_change_is_same():
    """A 1% speed-up whose interval lies below 1 is SAME under a 2% detectable change."""
    verdict = judge_paired(CASE, *exactly_scaled(0.99), detectable=0.02)
    assert verdict.ci_high < 1
    assert verdict.label == "same"
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 2% detectable change")


def test_a_large_speedup_whose_interval_includes_one_says_so():
    """Head 0.5 s in most pairs and 1 s in the rest: beyond the detectable change, but not significant."""
    base = np.ones(31)
    head = np.array([1.0] * 14 + [0.5] * 17)
    verdict = judge_paired(CASE, base, head, detectable=0.02)
    assert (verdict.ratio, verdict.ci_high, verdict.label) == (0.5, 1.0, "same")
    assert verdict.reason.endswith("beyond the 2% detectable change, but the interval includes 1")


def test_a_small_change_whose_interval_straddles_one_is_within_the_detectable_change():
    """ratio within the detectable change and the interval across 1: the reason is plain 'within'."""
    verdict = judge_paired(CASE, *distinct_run(30, ratio=1.0, seed=2), detectable=0.02)
    assert verdict.ci_low < 1 < verdict.ci_high
    assert verdict.reason.endswith("): within the 2% detectable change")


def test_the_default_is_four_thousand_resamples():
    """The docstring's default: 4000 resamples (20 beyond each end of a 99% interval)."""
    base, head = distinct_run(30, ratio=1.01, seed=4)
    assert judge_paired(CASE, base, head, detectable=0.02) == judge_paired(CASE, base, head, detectable=0.02,
                                                                           resamples=4000)
    assert judge_paired(CASE, base, head, detectable=0.02) != judge_paired(CASE, base, head, detectable=0.02,
                                                                           resamples=3999)


def test_a_speedup_beyond_the_detectable_change_whose_interval_reaches_above_one_is_same():
    """A 5% speed-up in 10% noise over 8 pairs: beyond the change, but the interval includes 1."""
    rng = np.random.default_rng(11)
    base = 1e-3 * np.exp(0.1 * rng.standard_normal(8))
    head = 0.95e-3 * np.exp(0.1 * rng.standard_normal(8))
    verdict = judge_paired(CASE, base, head, detectable=0.02)
    assert verdict.ratio < 0.98 and verdict.ci_low < 1 < verdict.ci_high
    assert verdict.label == "same"
    assert verdict.reason.endswith("beyond the 2% detectable change, but the interval includes 1")


def test_a_speedup_exactly_at_the_detectable_change_is_within_it():
    """ratio == 1 - detectable (exact in binary) counts as within the detectable change."""
    detectable = 2.0**-5
    verdict = judge_paired(CASE, *exactly_scaled(1 - detectable), detectable=detectable)
    assert verdict.ratio == 1 - detectable and verdict.ci_high < 1
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 3.125% detectable change")


def test_a_slowdown_exactly_at_the_detectable_change_is_within_it():
    """ratio == 1 + detectable (exact in binary) counts as within the detectable change."""
    detectable = 2.0**-5
    verdict = judge_paired(CASE, *exactly_scaled(1 + detectable), detectable=detectable)
    assert verdict.ratio == 1 + detectable and verdict.ci_low > 1
    assert verdict.reason.endswith("the interval excludes 1, but the change is within the 3.125% detectable change")


def test_the_detectable_change_and_the_other_options_must_be_named():
    """Keyword-only: a bare fraction after the samples could as well be the confidence."""
    with pytest.raises(TypeError, match="positional"):
        judge_paired(CASE, *distinct_run(30), 0.02)
