"""kernelwatch.verdict.energy: joules per launch with an interval, the record's energy block, the energy verdicts."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

import kernelwatch.verdict.energy as energy_verdict
from kernelwatch.timing.energy import EnergyMeasurement
from kernelwatch.timing.power_trace import PowerWindow
from kernelwatch.verdict.energy import (
    ENERGY_FLOOR,
    LESS_ENERGY,
    MORE_ENERGY,
    REFERENCE_RUNS,
    RUN_TO_RUN_DOF,
    RUN_TO_RUN_SD,
    TARGET_HALF_WIDTH,
    Z,
    energy_block,
    energy_reference,
    interval_text,
    judge_energy,
    judge_energy_paired,
    mean_interval,
    precise_enough,
    run_to_run,
)
from kernelwatch.verdict.labels import NEW, SAME
from kernelwatch.verdict.noise import StoredResult

GPU = "GPU-a"


def windows(per_launch: float, n: int = 6, spread: float = 0.002, seed: int = 0) -> list[float]:
    return list(per_launch * (1 + spread * np.random.default_rng(seed).standard_normal(n)))


def run(i: int, per_launch: float = 1.0, **fields) -> StoredResult:
    values = dict(gpu_uuid=GPU, timer="cupti kernel", median=1e-3, run=f"history run {i}", sass="s1",
                  started_at=f"2026-12-0{i}T00:00:00", energy=tuple(windows(per_launch, seed=i)))
    return StoredResult(**(values | fields))


def test_the_interval_is_students_t_of_the_windows_mean():
    values = [1.0, 1.01, 0.99, 1.02, 0.98]
    mean, low, high = mean_interval(values)
    half = stats.t.ppf(0.975, 4) * np.std(values, ddof=1) / math.sqrt(5)
    assert (mean, low, high) == pytest.approx((1.0, 1.0 - half, 1.0 + half))
    assert mean_interval([2.0]) == (2.0, 2.0, 2.0)


@pytest.mark.parametrize("values", [[], [1.0, float("nan")], [1.0, -1.0], [0.0]])
def test_joules_per_launch_that_are_no_energies_are_refused(values):
    with pytest.raises(ValueError, match="finite positive"):
        mean_interval(values)


def measurement(idle=250.0) -> EnergyMeasurement:
    found = tuple(PowerWindow(i * 0.5, (i + 1) * 0.5, 300.0 * (1 + 0.001 * i), 1000.0, 301.0, 299.0) for i in range(6))
    return EnergyMeasurement(found, "a CUDA graph of 10 launches", idle, (40.0, 43.0), 700.0, (1980, 1975))


def test_the_block_holds_the_mean_its_interval_the_powers_and_the_work_per_joule():
    block = energy_block(measurement(), flops=2e9)
    per_launch = [0.3 * (1 + 0.001 * i) for i in range(6)]
    assert block["window_joules_per_launch"] == pytest.approx(per_launch)
    assert block["joules_per_launch"] == pytest.approx(np.mean(per_launch))
    assert block["joules_per_launch_low"] < block["joules_per_launch"] < block["joules_per_launch_high"]
    assert block["active_watts_mean"] == pytest.approx(sum(300.0 * (1 + 0.001 * i) for i in range(6)) / 3.0)
    assert block["active_watts_peak"] == pytest.approx(600.0 * 1.005)
    assert block["launch_seconds"] == pytest.approx(0.5e-3)
    assert block["active_joules_per_launch_above_idle"] == pytest.approx((block["active_watts_mean"] - 250) * 0.5e-3)
    assert (block["work_per_joule"], block["work_per_joule_unit"]) == (pytest.approx(2 / block["joules_per_launch"]),
                                                                       "GFLOP/J")
    assert block["work_per_joule"] == pytest.approx(2 / block["joules_per_launch"], rel=1e-12)  # 1e9 FLOP a GFLOP
    assert (block["instant_watts_mean"], block["sampled_watts_mean"]) == (301.0, 299.0)
    assert (block["sm_clock_mhz_min"], block["sm_clock_mhz_max"], block["temperature_c_after"]) == (1975, 1980, 43.0)
    assert energy_block(measurement(idle=None), bytes_moved=3e9)["work_per_joule_unit"] == "GB/J"
    assert energy_block(measurement(idle=None))["active_joules_per_launch_above_idle"] is None


def test_the_interval_between_runs_adds_the_spread_between_runs_to_the_windows_error():
    block = energy_block(measurement())
    mean, low, high = (block[k] for k in ("joules_per_launch", "joules_per_launch_low", "joules_per_launch_high"))
    se = (high - mean) / mean / stats.t.ppf(0.975, 5)
    half = stats.t.ppf(0.975, RUN_TO_RUN_DOF) * math.hypot(se, RUN_TO_RUN_SD)
    assert block["between_runs_high"] == pytest.approx(mean * math.exp(half))
    assert block["between_runs_low"] == pytest.approx(mean * math.exp(-half))
    assert (block["run_to_run_sd"], block["run_to_run_source"]) == (RUN_TO_RUN_SD, "the H200 prior")
    wide = energy_block(measurement(), reference_runs=[run(1, 1.0), run(2, 1.05), run(3, 0.95)])
    assert wide["between_runs_high"] > block["between_runs_high"] and "3 stored runs" in wide["run_to_run_source"]


def test_a_measurement_is_precise_enough_once_its_95_percent_interval_is_within_1_percent():
    assert TARGET_HALF_WIDTH == 0.01
    tight = [1.0, 1.004, 0.996, 1.002, 0.998, 1.0]
    assert precise_enough(tight)
    one_high = [1.0, 1.0, 1.0, 1.0, 1.0, 1.07]  # ±3.0%: a window 7% high among six
    assert not precise_enough(one_high)
    assert precise_enough(one_high + [1.0] * 18)  # the same window among 24: ±0.6%
    assert not precise_enough([0.99, 1.01] * 3)  # ±1.15%: 2.571 x 0.01095 / sqrt(6)
    assert precise_enough([0.995, 1.005] * 3)  # ±0.57%
    assert not precise_enough([1.0]) and not precise_enough([])  # one window gives no interval


def test_the_block_says_how_many_windows_the_precision_rule_added():
    assert energy_block(measurement())["windows_added"] == 0
    assert energy_block(dataclasses.replace(measurement(), windows_added=6))["windows_added"] == 6


def test_a_measurement_without_windows_is_refused():
    with pytest.raises(ValueError, match="no energy window"):
        energy_block(EnergyMeasurement((), "", None, (None, None), None))


def test_the_interval_text_picks_a_unit_and_gives_the_half_width():
    block = {"joules_per_launch": 2.1e-3, "joules_per_launch_low": 2.0e-3, "joules_per_launch_high": 2.2e-3,
             "confidence": 0.95}
    assert interval_text(block) == "2.1 mJ (95% 2-2.2, ±4.8% this run)"
    block |= {"between_runs_low": 1.9e-3, "between_runs_high": 2.3e-3}
    assert interval_text(block) == "2.1 mJ (95% 2-2.2, ±4.8% this run; ±9.5% between runs)"


def test_the_spread_between_runs_is_the_prior_pooled_with_the_cases_own_runs():
    assert run_to_run([]) == (RUN_TO_RUN_SD, RUN_TO_RUN_DOF, "the H200 prior")
    assert run_to_run([run(1)])[0] == RUN_TO_RUN_SD  # one run has no spread of its own
    steady = run_to_run([run(i) for i in range(1, 4)])  # run means 0.1% apart
    apart = run_to_run([run(1, 1.0), run(2, 1.05), run(3, 0.95)])
    assert steady[0] < RUN_TO_RUN_SD < apart[0] and steady[1] == apart[1] == RUN_TO_RUN_DOF + 2
    assert "3 stored runs" in apart[2]


def test_the_reference_is_this_gpus_newest_runs_of_the_same_code_back_to_the_newest_level():
    history = [run(1), run(2, gpu_uuid="GPU-b"), run(3, throttled=True), run(4, outcome="failed"), run(5, sass="s2"),
               run(6), run(7, accepted_reason="meant"), run(8), run(9, energy=())]
    assert [r.run for r in energy_reference(history, GPU, "s1")] == ["history run 8", "history run 7"]
    assert [r.run for r in energy_reference(history[:6], GPU, "s1")] == ["history run 6", "history run 1"]
    assert len(energy_reference([run(i) for i in range(1, 9)], GPU, "s1")) == REFERENCE_RUNS
    newest = ["history run 8", "history run 7", "history run 6"]  # the newest three
    assert [r.run for r in energy_reference([run(i) for i in range(1, 9)], GPU, "s1")] == newest
    assert energy_reference(history, None, "s1") == []


def test_without_a_reference_the_energy_is_new():
    assert judge_energy("c", windows(1.0), []).label == NEW
    # the stored verdict of a new case still says which history was looked in
    assert judge_energy("c", windows(1.0), [], reference="history of GPU-a").reference == "history of GPU-a"


@pytest.mark.parametrize(("factor", "label"), [(1.0, SAME), (1.01, SAME), (1.04, MORE_ENERGY), (0.96, LESS_ENERGY)])
def test_a_change_past_the_floor_and_significant_is_more_or_less_energy(factor, label):
    verdict = judge_energy("c", windows(factor, seed=9), [run(i) for i in range(1, 4)])
    assert verdict.label == label and verdict.ratio == pytest.approx(factor, rel=3e-3)
    # the detectable change: the floor, or 3 x the noise where the spread between runs (the H200
    # prior pooled with these runs') makes that wider
    noise = Z * math.sqrt(1 + 1 / 3) * run_to_run([run(i) for i in range(1, 4)])[0]
    assert verdict.detectable == pytest.approx(max(ENERGY_FLOOR, noise), rel=0.05) and verdict.reference_runs == 3


def test_noisy_windows_widen_the_detectable_change_past_the_floor():
    noisy = [run(i, energy=tuple(windows(1.0, spread=0.03, seed=i))) for i in range(1, 4)]
    verdict = judge_energy("c", windows(1.04, spread=0.03, seed=9), noisy)
    assert verdict.detectable > ENERGY_FLOOR and verdict.label == SAME and "noise" in verdict.reason


@pytest.mark.parametrize(("factor", "label"), [(1.0, SAME), (1.03, MORE_ENERGY), (0.97, LESS_ENERGY),
                                               (1.01, SAME)])
def test_an_energy_ab_judges_the_pairs_log_ratios(factor, label):
    base = windows(1.0, n=5, spread=0.003, seed=1)
    head = [b * factor * (1 + e) for b, e in zip(base, 0.002 * np.random.default_rng(2).standard_normal(5),
                                                  strict=True)]
    verdict = judge_energy_paired("c", base, head)
    assert verdict.label == label
    assert verdict.ci_low < verdict.ratio < verdict.ci_high


def test_an_energy_abs_interval_is_the_99_percent_t_interval_of_the_mean_log_ratio_with_the_sample_deviation():
    logs = [0.03, 0.04, 0.05, 0.06, 0.07]  # mean 0.05; sample standard deviation sqrt(0.001 / 4)
    verdict = judge_energy_paired("c", [2.0] * 5, [2.0 * math.exp(x) for x in logs])
    half = stats.t.ppf(0.995, 4) * math.sqrt(0.001 / 4) / math.sqrt(5)
    assert verdict.ratio == pytest.approx(math.exp(0.05))
    assert (verdict.ci_low, verdict.ci_high) == pytest.approx((math.exp(0.05 - half), math.exp(0.05 + half)))


def test_an_energy_ab_needs_three_pairs_of_equal_length():
    with pytest.raises(ValueError, match="three pairs"):
        judge_energy_paired("c", [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="three pairs"):
        judge_energy_paired("c", [1.0] * 4, [1.0] * 3)


def test_the_block_names_the_counters_sampling_rate_and_an_ab_needs_pairs():
    assert energy_block(measurement())["sampling_rate_hz"] == pytest.approx(10.0)  # a change every 100 ms
    with pytest.raises(ValueError, match="three pairs or more"):
        judge_energy_paired("c", [1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0])  # head longer than base: not pairs


def test_an_energy_abs_reason_gives_its_ratio_interval_and_floor_in_percent():
    base = windows(1.0, n=5, spread=0.003, seed=1)
    head = [b * 1.05 for b in base]
    verdict = judge_energy_paired("c", base, head, floor=0.02)
    assert verdict.label == MORE_ENERGY and verdict.detectable == 0.02
    assert verdict.reason == (f"{MORE_ENERGY}: 1.050x the joules per launch of the base over 5 interleaved pairs "
                              f"(99% {verdict.ci_low:.3f}-{verdict.ci_high:.3f}; floor 2%)")


def test_two_windows_within_1_percent_are_precise_enough_and_one_window_never_is():
    # two windows 0.05% apart: 12.706 x 0.000354 / sqrt(2) = ±0.32%
    assert precise_enough([1.0, 1.0005])
    assert not precise_enough([1.0])  # one window has no interval to judge


def _stored(i: int, energy: tuple, **fields) -> StoredResult:
    return run(i, energy=energy, **fields)


def test_the_spread_between_runs_pools_the_log_means_sample_variance_with_the_prior_by_degrees_of_freedom():
    # run means 1, 2, 4 (a run without energy is left out): log means 0, ln 2, 2 ln 2, sample variance (ln 2)^2
    runs = [_stored(1, (0.5, 1.5)), _stored(2, (2.0,)), _stored(3, (4.0,)), _stored(4, ())]
    sd, dof, source = run_to_run(runs)
    assert dof == 14 and source == "the H200 prior pooled with 3 stored runs"
    assert sd == pytest.approx(math.sqrt((12 * 0.0062**2 + 2 * math.log(2) ** 2) / 14), rel=1e-12)
    # means 2 and 4: log means ln 2 and 2 ln 2, sample variance (ln 2)^2 / 2 with one degree of freedom
    two = run_to_run(runs[1:])
    assert two[1:] == (13, "the H200 prior pooled with 2 stored runs")
    assert two[0] == pytest.approx(math.sqrt((12 * 0.0062**2 + math.log(2) ** 2 / 2) / 13), rel=1e-12)
    assert run_to_run([runs[1], runs[3]]) == (0.0062, 12, "the H200 prior")  # one run with energy


# reference: three runs of windows 0.9375 and 1.0625 (mean 1 exactly), this run's about 1.25 or 0.75
REFERENCE = [0.9375, 1.0625]


def _reference_runs() -> list[StoredResult]:
    return [_stored(i, tuple(REFERENCE)) for i in range(1, 4)]


def test_more_energy_needs_the_ratio_strictly_past_the_floor():
    current = [1.1875, 1.3125] * 3  # mean 1.25: ratio 1.25 exactly
    at = judge_energy("c", current, _reference_runs(), floor=0.25)
    assert at.label == SAME and at.ratio == 1.25 and at.detectable == 0.25
    past = judge_energy("c", current, _reference_runs(), floor=0.2499, reference="history of GPU-a")
    p = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="greater").pvalue
    assert past.label == MORE_ENERGY and past.p_value == pytest.approx(p) and p < 0.01
    assert past.reason == (f"more energy: 1.250x the joules per launch of 3 stored runs (detectable 25.0%, "
                           f"24.99% floor; Welch p={p:.2g})")
    assert (past.reference_median, past.current_median, past.reference, past.reference_runs) == (
        1.0, 1.25, "history of GPU-a", 3)
    assert at.reason.startswith("within the detectable change or not significant: 1.250x")


def test_less_energy_needs_the_ratio_strictly_under_one_minus_the_floor():
    current = [0.6875, 0.8125] * 3  # mean 0.75
    assert judge_energy("c", current, _reference_runs(), floor=0.25).label == SAME
    less = judge_energy("c", current, _reference_runs(), floor=0.2499)
    p = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="less").pvalue
    assert less.label == LESS_ENERGY and less.p_value == pytest.approx(p)
    assert less.reason.startswith("less energy: 0.750x the joules per launch of 3 stored runs (detectable 25.0%")


def test_a_ratio_past_the_floor_without_a_significant_welch_test_is_the_same():
    # one window has no Welch test (p = 1): 1.5 x the reference is not more energy on it alone
    verdict = judge_energy("c", [1.5], _reference_runs())
    assert verdict.label == SAME and verdict.p_value == 1.0 and verdict.ratio == 1.5
    constant = judge_energy("c", [1.0, 1.0], [_stored(1, (1.0, 1.0))])  # no variance: no p either
    assert constant.label == SAME and constant.p_value == 1.0
    # nor is half the reference less energy on one window alone
    half = judge_energy("c", [0.5], _reference_runs())
    assert half.label == SAME and half.p_value == 1.0 and half.ratio == 0.5


def test_the_detectable_change_is_3_times_the_noise_of_both_means_and_the_spread_between_runs():
    current = [1.1875, 1.3125] * 3
    verdict = judge_energy("c", current, _reference_runs(), floor=0.01)
    se_now = np.std(current, ddof=1) / math.sqrt(6) / 1.25
    se_ref = np.std(REFERENCE * 3, ddof=1) / math.sqrt(6)
    spread = math.sqrt(12 * 0.0062**2 / 14)  # the three runs' means are equal: no variance of their own
    noise = 3 * math.sqrt(se_now**2 + se_ref**2 + (1 + 1 / 3) * spread**2)
    assert verdict.detectable == pytest.approx(noise, rel=1e-9) and verdict.label == MORE_ENERGY
    assert f"(detectable {noise * 100:.1f}%, 3 x noise;" in verdict.reason


def test_a_case_without_stored_energy_is_new_with_its_mean():
    verdict = judge_energy("c", [1.0, 2.0], [])
    assert (verdict.label, verdict.current_median, verdict.reference_median, verdict.ratio, verdict.detectable) == (
        NEW, 1.5, None, None, None)
    assert verdict.reason == "no stored energy of this code on this GPU"


def test_the_reference_stops_at_a_usable_level_start_and_takes_runs_without_machine_code():
    history = [run(1), run(2, accepted_reason="meant"), run(3, gpu_uuid="GPU-b", accepted_reason="meant"),
               run(4, sass=None)]
    assert [r.run for r in energy_reference(history, GPU, "s1")] == ["history run 4", "history run 2"]
    assert [r.run for r in energy_reference(history, GPU, None)] == ["history run 4", "history run 2"]


def test_an_ab_past_the_floor_whose_interval_holds_one_is_the_same():
    logs = [0.0, 0.1, 0.2]  # ratio e^0.1, 99% interval e^(0.1 ± 9.925 x 0.1 / sqrt 3): it holds 1
    verdict = judge_energy_paired("c", [1.0] * 3, [math.exp(x) for x in logs])
    assert verdict.label == SAME and verdict.ci_low < 1 < verdict.ratio
    assert verdict.reason.startswith(f"{SAME}: 1.105x the joules per launch of the base over 3 interleaved pairs")
    down = judge_energy_paired("c", [1.0] * 3, [math.exp(-x) for x in logs])
    assert down.label == SAME and down.ratio < 1 < down.ci_high


def test_an_ab_of_less_energy_reports_the_means_and_the_default_floor():
    logs = [-0.051, -0.05, -0.049]
    base = [2.0, 4.0, 2.0]
    verdict = judge_energy_paired("c", base, [b * math.exp(x) for b, x in zip(base, logs, strict=True)],
                                  reference="base abc")
    half = stats.t.ppf(0.995, 2) * 0.001 / math.sqrt(3)
    assert verdict.label == LESS_ENERGY and verdict.detectable == 0.015 and verdict.reference == "base abc"
    assert verdict.reference_median == pytest.approx(8 / 3)
    assert verdict.current_median == pytest.approx(sum(b * math.exp(x) for b, x in zip(base, logs, strict=True)) / 3)
    assert verdict.reason == (f"{LESS_ENERGY}: {math.exp(-0.05):.3f}x the joules per launch of the base over 3 "
                              f"interleaved pairs (99% {math.exp(-0.05 - half):.3f}-{math.exp(-0.05 + half):.3f}; "
                              f"floor 1.5%)")
    # just inside the floor: 0.986x with a tight interval is the same
    tight = judge_energy_paired("c", [1.0] * 3, [math.exp(math.log(0.986) + d) for d in (-1e-4, 0, 1e-4)])
    assert tight.label == SAME and tight.ci_high < 1


def test_the_block_totals_the_windows_and_keeps_the_conditions():
    found = (PowerWindow(0.0, 0.5, 150.0, 500.0), PowerWindow(0.5, 1.25, 300.0, 1000.0, instant_w=400.0))
    block = energy_block(EnergyMeasurement(found, "replay", None, (40.0, None), 700.0, (), ("sw power cap",), 0.25))
    assert (block["total_joules"], block["measured_seconds"], block["launches"]) == (450.0, 1.25, 1500.0)
    assert block["window_seconds"] == [0.5, 0.75] and block["active_watts_mean"] == 360.0
    assert block["active_watts_peak"] == 400.0 and block["launch_seconds"] == pytest.approx(1.25 / 1500)
    assert (block["instant_watts_mean"], block["sampled_watts_mean"]) == (400.0, None)
    assert (block["sm_clock_mhz_min"], block["sm_clock_mhz_max"]) == (None, None)
    assert block["throttle_reasons"] == ["sw power cap"] and block["gpu_starved_seconds"] == 0.25
    assert (block["temperature_c_before"], block["temperature_c_after"], block["power_limit_watts"]) == (40.0, None, 700.0)
    assert (block["work_per_joule"], block["work_per_joule_unit"]) == (None, None)
    assert block["confidence"] == 0.95 and block["replay"] == "replay"
    assert block["method"] == ("NVML total energy counter over windows cut at its updates, launches counted by "
                               "CUDA events")
    assert block["joules_per_launch"] == 0.3  # both windows 0.3 J a launch: no spread
    assert block["joules_per_launch_low"] == block["joules_per_launch_high"] == 0.3


def test_one_windows_block_spreads_between_runs_by_the_prior_alone():
    block = energy_block(EnergyMeasurement((PowerWindow(0.0, 1.0, 100.0, 400.0),), "r", None, (None, None), None))
    spread = stats.t.ppf(0.975, 12) * 0.0062
    assert block["joules_per_launch"] == 0.25
    assert block["between_runs_low"] == pytest.approx(0.25 * math.exp(-spread), rel=1e-12)
    assert block["between_runs_high"] == pytest.approx(0.25 * math.exp(spread), rel=1e-12)
    assert block["work_per_joule"] is None


def test_the_interval_text_in_joules_without_between_runs():
    block = {"joules_per_launch": 2.0, "joules_per_launch_low": 1.9, "joules_per_launch_high": 2.1,
             "confidence": 0.99, "between_runs_high": None}
    assert interval_text(block) == "2 J (99% 1.9-2.1, ±5.0% this run)"


def test_two_windows_give_the_interval_the_between_runs_spread_and_its_text():
    # 0.30 and 0.32 J a launch: mean 0.31, sample sd 0.01 x sqrt 2, standard error 0.01
    found = (PowerWindow(0.0, 0.5, 150.0, 500.0), PowerWindow(0.5, 1.0, 160.0, 500.0))
    block = energy_block(EnergyMeasurement(found, "r", None, (None, None), None))
    half = stats.t.ppf(0.975, 1) * 0.01
    assert block["joules_per_launch"] == pytest.approx(0.31, rel=1e-12)
    assert (block["joules_per_launch_low"], block["joules_per_launch_high"]) == pytest.approx((0.31 - half, 0.31 + half))
    spread = stats.t.ppf(0.975, RUN_TO_RUN_DOF) * math.hypot(0.01 / 0.31, RUN_TO_RUN_SD)
    assert block["between_runs_low"] == pytest.approx(0.31 * math.exp(-spread), rel=1e-12)
    assert block["between_runs_high"] == pytest.approx(0.31 * math.exp(spread), rel=1e-12)
    # 12.706 x 0.01 = ±41.0% of 0.31 this run; sinh(2.179 x hypot(3.23%, 0.62%)) = ±7.2% between runs
    assert interval_text(block) == "0.31 J (95% 0.1829-0.4371, ±41.0% this run; ±7.2% between runs)"


def test_an_interval_exactly_as_narrow_as_the_target_is_precise_enough(monkeypatch):
    values = [0.99, 1.01] * 3
    mean, low, high = mean_interval(values)
    monkeypatch.setattr(energy_verdict, "TARGET_HALF_WIDTH", (high - low) / 2 / mean)
    assert precise_enough(values)
    monkeypatch.setattr(energy_verdict, "TARGET_HALF_WIDTH", math.nextafter((high - low) / 2 / mean, 0.0))
    assert not precise_enough(values)


def test_the_measurement_and_the_verdicts_inputs_can_be_named_and_their_options_only_by_name():
    assert energy_block(measurement=measurement(), flops=2e9) == energy_block(measurement(), flops=2e9)
    current = [1.1875, 1.3125] * 3
    named = judge_energy(case="c", current=current, reference_runs=_reference_runs())
    assert named.label == MORE_ENERGY and named.ratio == 1.25
    with pytest.raises(TypeError):
        judge_energy("c", current, _reference_runs(), 0.3)  # a floor given without its name
    paired = judge_energy_paired(case="c", base=[1.0] * 3, head=[1.05, 1.051, 1.049])
    assert paired.label == MORE_ENERGY
    with pytest.raises(TypeError):
        judge_energy_paired("c", [1.0] * 3, [1.05, 1.051, 1.049], 0.1)


def test_the_reference_compares_machine_code_and_outcome_by_value():
    asked = "".join(["s", "1"])  # the hash of this run: equal to the stored runs' "s1", another object
    history = [run(1, sass="s0"), run(2, outcome="accepted"), run(3, outcome="".join(["fail", "ed"])), run(4)]
    # s0 is other machine code, a failed run is never a reference, an accepted one is
    assert [r.run for r in energy_reference(history, GPU, asked)] == ["history run 4", "history run 2"]


# ten stored runs of windows 0.999 and 1.001: their means all 1, their own spread none
STEADY = [_stored(i, (0.999, 1.001)) for i in range(1, 11)]


@pytest.mark.parametrize(("level", "label"), [(1.018, SAME), (1.022, MORE_ENERGY), (0.982, SAME),
                                              (0.978, LESS_ENERGY), (0.99, SAME)])
def test_against_steady_runs_the_2_percent_floor_is_the_detectable_change(level, label):
    current = [level - 0.001, level + 0.001] * 3
    verdict = judge_energy("c", current, STEADY)
    pooled = [0.999, 1.001] * 10
    se_now = np.std(current, ddof=1) / math.sqrt(6) / level
    se_ref = np.std(pooled, ddof=1) / math.sqrt(20)
    spread = math.sqrt(12 * 0.0062**2 / 21)  # the prior, pooled with nine degrees of freedom of no spread
    noise = 3 * math.sqrt(se_now**2 + se_ref**2 + (1 + 1 / 10) * spread**2)
    assert noise == pytest.approx(0.0148, abs=2e-4)  # under the floor: the floor decides
    assert verdict.detectable == 0.02 and "(detectable 2.0%, 2% floor;" in verdict.reason
    assert verdict.ratio == pytest.approx(level, rel=1e-12)
    more = stats.ttest_ind(current, pooled, equal_var=False, alternative="greater").pvalue
    less = stats.ttest_ind(current, pooled, equal_var=False, alternative="less").pvalue
    assert verdict.p_value == pytest.approx(min(more, less)) and min(more, less) < 1e-6  # all significant
    assert verdict.label == label


@pytest.mark.parametrize(("current", "label", "alternative"), [([1.1875, 1.3125] * 3, MORE_ENERGY, "greater"),
                                                               ([0.6875, 0.8125] * 3, LESS_ENERGY, "less")])
def test_a_welch_p_equal_to_alpha_is_not_significant(monkeypatch, current, label, alternative):
    p = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative=alternative).pvalue
    assert judge_energy("c", current, _reference_runs(), floor=0.1).label == label
    monkeypatch.setattr(energy_verdict, "ALPHA", p)
    at = judge_energy("c", current, _reference_runs(), floor=0.1)
    assert at.label == SAME and at.p_value == p


def test_two_windows_on_either_side_are_enough_for_a_welch_test():
    current = [1.30, 1.31]
    verdict = judge_energy("c", current, _reference_runs())
    p = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="greater").pvalue
    assert verdict.label == MORE_ENERGY and verdict.p_value == pytest.approx(p) and p < 0.01
    current = [1.199, 1.201] * 3
    verdict = judge_energy("c", current, [_stored(1, (0.999, 1.001))])
    p = stats.ttest_ind(current, [0.999, 1.001], equal_var=False, alternative="greater").pvalue
    assert verdict.label == MORE_ENERGY and verdict.p_value == pytest.approx(p) and p < 0.01


def test_the_p_value_is_welchs_not_students_where_sizes_and_spreads_differ():
    current = [1.3, 1.5, 1.4]  # sd 0.1 over three windows, the reference's 0.068 over six
    welch = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="greater").pvalue
    student = stats.ttest_ind(current, REFERENCE * 3, equal_var=True, alternative="greater").pvalue
    assert welch == pytest.approx(4.2e-3, rel=0.05) and student < welch / 10
    verdict = judge_energy("c", current, _reference_runs())
    assert verdict.label == MORE_ENERGY and verdict.p_value == pytest.approx(welch, rel=1e-9)


@pytest.mark.parametrize("head", [[1.05, 1.051, 1.049], [0.95, 0.951, 0.949]])
def test_an_ab_ratio_exactly_at_the_floor_is_the_same(head):
    verdict = judge_energy_paired("c", [1.0] * 3, head)
    floor = abs(verdict.ratio - 1)  # exact: the ratio is within [0.5, 2]
    assert verdict.label != SAME and (verdict.ci_low > 1 or verdict.ci_high < 1)
    assert judge_energy_paired("c", [1.0] * 3, head, floor=floor).label == SAME


def _pairs_with_an_interval_edge_at_one(mean: float) -> list[float]:
    """Heads over bases of 1 whose log ratios are mean - d, mean, mean + d with d = |mean| sqrt 3 / t, so that
    the 99% interval of their mean has an end at 1; the middle head is moved by ulps until that end is 1 exactly."""
    d = abs(mean) * math.sqrt(3) / stats.t.ppf(0.995, 2)
    low, middle, high = (math.exp(x) for x in (mean - d, mean, mean + d))
    up = down = middle
    for _ in range(100):
        for head in ([low, up, high], [low, down, high]):
            verdict = judge_energy_paired("c", [1.0] * 3, head)
            if 1.0 in (verdict.ci_low, verdict.ci_high):
                return head
        up, down = math.nextafter(up, 2.0), math.nextafter(down, 0.0)
    raise AssertionError(f"no head puts an end of the interval at 1 for a mean log ratio of {mean}")


@pytest.mark.parametrize("mean", [0.1, -0.1])
def test_an_ab_interval_that_reaches_one_is_not_wholly_past_it(mean):
    verdict = judge_energy_paired("c", [1.0] * 3, _pairs_with_an_interval_edge_at_one(mean))
    assert verdict.ratio == pytest.approx(math.exp(mean)) and abs(verdict.ratio - 1) > 0.015
    assert (verdict.ci_low if mean > 0 else verdict.ci_high) == 1.0
    assert verdict.label == SAME


def test_a_side_of_one_sample_has_no_welch_test():
    # the verdict's p of a side with a single energy: no spread to test, so never significant
    assert energy_verdict._welch_p([1.0], [1.0, 1.1, 1.2], "greater") == 1.0
    assert energy_verdict._welch_p([2.0, 2.1, 2.2], [1.0], "greater") == 1.0
    assert energy_verdict._welch_p([2.0, 2.1, 2.2], [1.0, 1.1, 1.05], "greater") < 0.01


# ---- whole texts and whole blocks, compared with their reviewed snapshots (tests/verdict/__snapshots__/) ----------


def _rounded(value):
    """A block's value with its floats to 12 significant figures: what a snapshot can hold across platforms."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def test_the_block_of_a_measurement_against_stored_runs_is_its_reviewed_snapshot(snapshot):
    # six windows 0.3 J a launch, 0.1% apart; three stored runs 5% apart widen the interval between runs
    block = energy_block(measurement(), flops=2e9, reference_runs=[run(1, 1.0), run(2, 1.05), run(3, 0.95)])
    assert {key: _rounded(value) for key, value in block.items()} == snapshot


def test_the_block_of_a_bare_measurement_is_its_reviewed_snapshot(snapshot):
    found = (PowerWindow(0.0, 0.5, 150.0, 500.0, sampled_w=290.0), PowerWindow(0.5, 1.25, 300.0, 1000.0, 410.0, 310.0))
    block = energy_block(EnergyMeasurement(found, "host launches, one per replay", None, (None, 50.0), None,
                                           (1500,), ("hw slowdown", "sw power cap"), 0.125, 2), bytes_moved=6e8)
    assert {key: _rounded(value) for key, value in block.items()} == snapshot


@pytest.mark.parametrize(("mean", "text"), [
    (0.1, "0.1 J (95% 0.099-0.101, ±1.0% this run)"),  # 0.1 J and more: joules
    (0.0999, "99.9 mJ (95% 98.9-100.9, ±1.0% this run)"),  # under 0.1 J: millijoules
    (1e-4, "0.1 mJ (95% 0.099-0.101, ±1.0% this run)"),
    (9.99e-5, "99.9 µJ (95% 98.9-100.9, ±1.0% this run)"),  # under 0.1 mJ: microjoules
    (1234.5678, "1235 J (95% 1222-1247, ±1.0% this run)"),  # four significant figures
])
def test_the_interval_texts_unit_changes_at_a_tenth_of_a_joule_and_of_a_millijoule(mean, text):
    block = {"joules_per_launch": mean, "joules_per_launch_low": mean * 0.99, "joules_per_launch_high": mean * 1.01,
             "confidence": 0.95}
    assert interval_text(block) == text


def test_the_interval_text_gives_an_asymmetric_interval_by_its_half_width_and_the_between_runs_half_width():
    # low 1.0, high 1.6 around 1.2: ±25.0% (half of 0.6 over 1.2); between 0.9 and 1.8: ±37.5%
    block = {"joules_per_launch": 1.2, "joules_per_launch_low": 1.0, "joules_per_launch_high": 1.6,
             "confidence": 0.9, "between_runs_low": 0.9, "between_runs_high": 1.8}
    assert interval_text(block) == "1.2 J (90% 1-1.6, ±25.0% this run; ±37.5% between runs)"


def _verdict_reasons() -> dict[str, str]:
    steady = [_stored(i, (0.999, 1.001)) for i in range(1, 11)]
    return {
        "more": judge_energy("c", [1.1875, 1.3125] * 3, _reference_runs()).reason,
        "less": judge_energy("c", [0.6875, 0.8125] * 3, _reference_runs()).reason,
        "same at the floor": judge_energy("c", [1.1875, 1.3125] * 3, _reference_runs(), floor=0.25).reason,
        "same, one window": judge_energy("c", [1.5], _reference_runs()).reason,
        "more against steady runs": judge_energy("c", [1.021, 1.023] * 3, steady).reason,
        "same against steady runs": judge_energy("c", [1.0, 1.002] * 3, steady).reason,
        "new": judge_energy("c", [1.0], []).reason,
        "ab more": judge_energy_paired("c", [1.0] * 3, [1.05, 1.051, 1.049]).reason,
        "ab less": judge_energy_paired("c", [1.0] * 4, [0.95, 0.951, 0.949, 0.95], floor=0.04).reason,
        "ab same": judge_energy_paired("c", [1.0] * 3, [1.0, 1.1, 1.2]).reason,
    }


def test_the_energy_verdicts_reasons_are_their_reviewed_snapshots(snapshot):
    assert _verdict_reasons() == snapshot


def test_a_verdicts_p_value_is_the_one_its_reason_gives():
    current = [1.1875, 1.3125] * 3
    verdict = judge_energy("c", current, _reference_runs())
    assert verdict.reason.endswith(f"; Welch p={verdict.p_value:.2g})")
    # a level just under the reference's: the smaller of the two one-sided p values, here the "less" one
    current = [0.998, 1.0] * 3
    same = judge_energy("c", current, _reference_runs())
    more = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="greater").pvalue
    less = stats.ttest_ind(current, REFERENCE * 3, equal_var=False, alternative="less").pvalue
    assert same.label == SAME and less < 0.5 < more and same.p_value == pytest.approx(less, rel=1e-12)
    assert same.reason.endswith(f"; Welch p={less:.2g})")


def test_the_interval_of_the_mean_takes_its_confidence():
    values = [1.0, 1.01, 0.99, 1.02, 0.98]
    half = stats.t.ppf(0.995, 4) * np.std(values, ddof=1) / math.sqrt(5)
    assert mean_interval(values, 0.99) == pytest.approx((1.0, 1.0 - half, 1.0 + half), rel=1e-12)
    assert mean_interval(values, confidence=0.5)[2] - 1.0 == pytest.approx(
        stats.t.ppf(0.75, 4) * np.std(values, ddof=1) / math.sqrt(5), rel=1e-12)


def test_a_stored_run_without_a_start_time_is_the_oldest_reference():
    history = [run(1, started_at=None), run(2), run(3, started_at=None), run(4)]
    assert [r.run for r in energy_reference(history, GPU, "s1")] == ["history run 4", "history run 2",
                                                                      "history run 1"]


def test_the_reference_takes_an_unthrottled_run_and_stops_at_a_level_start_it_takes():
    history = [run(1), run(2, accepted_reason="meant", throttled=True), run(3, throttled=False)]
    # run 2 starts a level but is throttled: not a reference, and the search goes past it
    assert [r.run for r in energy_reference(history, GPU, "s1")] == ["history run 3", "history run 1"]
    assert [r.run for r in energy_reference([run(1), run(2, accepted_reason="meant")], GPU, "s1")] == [
        "history run 2"]
