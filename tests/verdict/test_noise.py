"""CPU tests for kernelwatch.verdict.noise on recorded and deterministically built sample sets."""

from __future__ import annotations

import dataclasses
import math

import pytest

from kernelwatch.verdict.noise import (
    Detectable,
    NoiseFloors,
    StoredResult,
    detectable_change,
    floor_of,
    floor_terms,
    history_spread,
    median_rel_se,
    relevant_history,
    same_physical_gpu,
)
from kernelwatch.verdict.record import TIMER_CUPTI
from tests.support.sample_sets import ADD_8192_VEC4, SPREAD, fresh, recorded, spread_samples, stored

EVENTS = "CUDA events, held stream, L2 flushed"
CUPTI = "CUPTI activity, kernel span"


def test_default_floors_are_the_measured_figures():
    assert NoiseFloors() == NoiseFloors(same_gpu=0.015, other_gpu=0.05, absolute_s=0.3e-6, host_copy_spread=0.01,
                                        z=3.0)


@pytest.mark.parametrize("field, value", [
    ("same_gpu", 0.0), ("other_gpu", 1.0), ("absolute_s", -1e-6),
    ("z", 0.0), ("z", float("nan")), ("z", True), ("same_gpu", "2%"), ("host_copy_spread", -0.01),
    ("host_copy_spread", 1.0),
])
def test_a_floor_out_of_its_range_is_refused_by_name(field, value):
    with pytest.raises(ValueError, match=f"NoiseFloors.{field}"):
        NoiseFloors(**{field: value})


def test_zero_absolute_floors_mean_none_as_for_wall_clock_timings():
    floors = NoiseFloors(same_gpu=0.30, other_gpu=0.30, absolute_s=0.0)
    tiny = spread_samples(1e-6, 0.001, 21)
    detectable = detectable_change(tiny, tiny, same_gpu=False, floors=floors)
    assert detectable == Detectable(0.30, "30% floor, other or unknown GPU")


def test_median_rel_se_is_the_mad_scaled_to_the_median_standard_error():
    # median 1, MAD 0.01, n 3: sqrt(pi/2) * 1.4826 * 0.01 / sqrt(3)
    assert median_rel_se([0.99, 1.0, 1.01]) == pytest.approx(math.sqrt(math.pi / 2) * 1.4826 * 0.01 / math.sqrt(3), rel=1e-9)


def test_median_rel_se_matches_the_normal_theory_for_many_samples():
    n, rsd = 10_001, 0.01
    expected = math.sqrt(math.pi / 2) * rsd / math.sqrt(n)
    assert median_rel_se(spread_samples(2e-3, rsd, n)) == pytest.approx(expected, rel=0.01)


def test_median_rel_se_is_relative_to_the_median():
    samples = spread_samples(1e-3, 0.01, 31)
    assert median_rel_se([s * 1e3 for s in samples]) == pytest.approx(median_rel_se(samples), rel=1e-12)


def test_median_rel_se_ignores_one_slow_outlier():
    quiet = spread_samples(183e-6, 0.003, 21)
    assert median_rel_se(quiet + [10e-3]) < 1.2 * median_rel_se(quiet)


def test_median_rel_se_of_identical_samples_is_zero():
    assert median_rel_se([5e-6] * 10) == 0.0


def test_median_rel_se_needs_three_samples():
    assert median_rel_se([1e-3, 1.1e-3]) is None
    assert median_rel_se([1e-3, 1.1e-3, 1.2e-3]) is not None


@pytest.mark.parametrize("samples, problem", [([], "empty"), ([1e-3, -1e-3, 1e-3], "negative"),
                                              ([1e-3, float("nan"), 1e-3], "NaN")])
def test_median_rel_se_refuses_bad_samples(samples, problem):
    with pytest.raises(ValueError, match=problem):
        median_rel_se(samples)


def test_history_spread_is_the_sample_standard_deviation_of_log_medians():
    # std(ddof=1) of log(1), log(1.02), log(0.98); ddof=0 would give 0.01633
    assert history_spread([1.0, 1.02, 0.98]) == pytest.approx(0.0200030, rel=1e-5)


def test_history_spread_needs_three_runs():
    assert history_spread([183e-6, 186e-6]) is None
    assert history_spread([183e-6, 186e-6, 180e-6]) is not None


def test_history_spread_refuses_a_zero_median():
    with pytest.raises(ValueError, match="stored-run median"):
        history_spread([183e-6, 0.0, 180e-6])


def runs_of_two_hosts():
    return [
        StoredResult("GPU-a", EVENTS, 100e-6), StoredResult("GPU-a", EVENTS, 101e-6),
        StoredResult("GPU-b", EVENTS, 104e-6), StoredResult(None, EVENTS, 98e-6),
        StoredResult("GPU-a", CUPTI, 97e-6),
    ]


def test_history_against_a_baseline_of_this_gpu_keeps_this_gpus_runs_of_this_timer():
    assert relevant_history(runs_of_two_hosts(), "GPU-a", "GPU-a", EVENTS) == [100e-6, 101e-6]


def test_history_against_a_baseline_of_another_gpu_keeps_every_host_of_this_timer():
    assert relevant_history(runs_of_two_hosts(), "GPU-a", "GPU-b", EVENTS) == [100e-6, 101e-6, 104e-6, 98e-6]


def test_history_with_unknown_uuids_is_not_one_gpu():
    assert relevant_history(runs_of_two_hosts(), None, None, EVENTS) == [100e-6, 101e-6, 104e-6, 98e-6]
    assert not same_physical_gpu(None, None)
    assert same_physical_gpu("GPU-a", "GPU-a") and not same_physical_gpu("GPU-a", "GPU-b")


def test_history_of_another_timer_is_separate():
    assert relevant_history(runs_of_two_hosts(), "GPU-a", "GPU-a", CUPTI) == [97e-6]


def test_a_quiet_large_case_against_this_gpu_gets_the_1_5_percent_floor():
    samples = recorded(ADD_8192_VEC4)
    detectable = detectable_change(samples[:55], samples[55:], same_gpu=True)
    assert detectable == Detectable(0.015, "1.5% floor, same GPU")


def test_a_quiet_large_case_against_another_gpu_gets_the_5_percent_floor():
    samples = recorded(ADD_8192_VEC4)
    detectable = detectable_change(samples[:55], samples[55:], same_gpu=False)
    assert detectable == Detectable(0.05, "5% floor, other or unknown GPU")


def test_a_5_microsecond_case_gets_the_absolute_floor():
    baseline, current = spread_samples(5e-6, 0.02, 10), spread_samples(5e-6, 0.02, 10, seed=1)
    detectable = detectable_change(baseline, current, same_gpu=True)
    # 0.3 µs of a 5 µs median; the data alone would allow 3 * 1.1%
    assert detectable.fraction == pytest.approx(0.06, rel=1e-4)
    assert detectable.because == "0.3 µs absolute floor"


def test_noisy_samples_set_the_limit_at_three_standard_errors():
    # each side: median 1 ms, MAD 1%, 3 samples; se 1.0728% each, 1.5172% together
    baseline, current = [0.99e-3, 1.0e-3, 1.01e-3], [1.01e-3, 0.99e-3, 1.0e-3]
    detectable = detectable_change(baseline, current, same_gpu=True)
    assert detectable.fraction == pytest.approx(3 * 0.0151716, rel=1e-4)
    assert detectable.because == "3 x noise (samples 1.5%)"


def test_the_spread_of_stored_runs_counts_once_for_each_of_the_two_runs():
    samples = recorded(ADD_8192_VEC4)
    sample_se = math.hypot(median_rel_se(samples[:55]), median_rel_se(samples[55:]))
    detectable = detectable_change(samples[:55], samples[55:], same_gpu=True,
                                   history=[1.0, 1.02, 0.98])
    # the baseline and this run each sit somewhere in the stored runs' spread: their difference
    # spreads sqrt(2) times as far
    assert detectable.fraction == pytest.approx(3 * math.hypot(sample_se, math.sqrt(2) * 0.0200030), rel=1e-5)
    assert detectable.because == "3 x noise (samples 0.1%, stored runs 2.0%)"


@pytest.mark.parametrize("reference_runs, factor", [(1, math.sqrt(2)), (3, math.sqrt(4 / 3)), (5, math.sqrt(6 / 5))])
def test_a_reference_pooled_from_k_runs_brings_one_kth_of_their_spread(reference_runs, factor):
    samples = recorded(ADD_8192_VEC4)
    sample_se = math.hypot(median_rel_se(samples[:55]), median_rel_se(samples[55:]))
    detectable = detectable_change(samples[:55], samples[55:], same_gpu=True, history=[1.0, 1.02, 0.98],
                                   reference_runs=reference_runs)
    # this run's process offset in full, the reference's averaged over its k processes
    assert detectable.fraction == pytest.approx(3 * math.hypot(sample_se, factor * 0.0200030), rel=1e-5)


@pytest.mark.parametrize("reference_runs", [0, -1, 1.5, True, None])
def test_a_reference_of_no_whole_number_of_runs_is_refused(reference_runs):
    with pytest.raises(ValueError, match="reference_runs must be a whole number"):
        detectable_change([1e-3] * 3, [1e-3] * 3, same_gpu=True, reference_runs=reference_runs)


def test_fewer_than_three_stored_runs_add_nothing():
    samples = recorded(ADD_8192_VEC4)
    detectable = detectable_change(samples[:55], samples[55:], same_gpu=True,
                                   history=[1.0, 1.5])
    assert detectable == Detectable(0.015, "1.5% floor, same GPU")


def test_two_samples_a_side_fall_back_to_the_floors():
    detectable = detectable_change([1.0e-3, 1.5e-3], [1.0e-3, 1.5e-3], same_gpu=True)
    assert detectable == Detectable(0.015, "1.5% floor, same GPU")


def test_custom_floors_are_used():
    samples = recorded(ADD_8192_VEC4)
    floors = NoiseFloors(same_gpu=0.01)
    assert detectable_change(samples[:55], samples[55:], same_gpu=True,
                             floors=floors) == Detectable(0.01, "1% floor, same GPU")


def test_empty_current_samples_are_refused():
    with pytest.raises(ValueError, match="current samples are empty"):
        detectable_change([1e-3], [], same_gpu=True)


# ---- cases whose time includes host<->device copies (the streams pipeline over PCIe) ----

NO_HOST_COPY_FLOOR = NoiseFloors(host_copy_floor=0.0)  # the spread's term alone, under the 6% floor


def test_a_case_with_host_copies_is_never_judged_below_its_6_percent_floor():
    quiet = spread_samples(1.7e-3, 0.0001, 401)
    for same_gpu in (True, False):
        d = detectable_change(quiet, quiet, same_gpu=same_gpu, host_copies=True, reference_runs=5)
        assert d.fraction == 0.06 and d.because == "6% floor, host copies"
    assert NoiseFloors().host_copy_floor == 0.06  # docs/method.md#host-copy-floor, 2026-12-02: one process 3.1-5.3% off its runs
    with pytest.raises(ValueError, match="host_copy_floor"):
        NoiseFloors(host_copy_floor=1.0)


def test_a_host_copy_floor_no_higher_than_the_gpu_floor_leaves_the_gpu_floor_named():
    """The host-copy floor takes the GPU's floor's place only where it is higher; at a tie the words stay the GPU's."""
    quiet = spread_samples(1.7e-3, 0.0001, 401)
    d = detectable_change(quiet, quiet, same_gpu=False, host_copies=True, floors=NoiseFloors(host_copy_floor=0.05))
    assert d == Detectable(0.05, "5% floor, other or unknown GPU")


def test_a_case_with_host_copies_and_no_stored_spread_assumes_1_percent_between_processes():
    quiet = spread_samples(1.7e-3, 0.0001, 401)  # sample noise negligible: the assumed spread decides
    d = detectable_change(quiet, quiet, same_gpu=True, host_copies=True, floors=NO_HOST_COPY_FLOOR)
    assert d.fraction == pytest.approx(3 * math.sqrt(2) * 0.01, rel=0.01)  # 4.2% against one stored run
    assert "1.0% assumed between processes for host copies" in d.because
    pooled = detectable_change(quiet, quiet, same_gpu=True, host_copies=True, reference_runs=5,
                               floors=NO_HOST_COPY_FLOOR)
    assert pooled.fraction == pytest.approx(3 * math.sqrt(1.2) * 0.01, rel=0.01)


def test_a_gpu_only_case_assumes_no_spread_and_gets_the_floor():
    quiet = spread_samples(1.7e-3, 0.0001, 401)
    assert detectable_change(quiet, quiet, same_gpu=True).fraction == 0.015


@pytest.mark.parametrize("spread, expected", [(0.001, 0.015), (0.02, 3 * math.sqrt(2) * 0.02)])
def test_three_stored_runs_replace_the_assumed_spread_of_host_copies_either_way(spread, expected):
    quiet = spread_samples(1.7e-3, 0.0001, 401)
    history = [1.7e-3 * math.exp(spread * x) for x in (-1.0, 0.0, 1.0)]  # std of the logs: `spread`
    d = detectable_change(quiet, quiet, same_gpu=True, host_copies=True, history=history, floors=NO_HOST_COPY_FLOOR)
    assert d.fraction == pytest.approx(expected, rel=0.01)
    assert "assumed" not in d.because


@pytest.mark.parametrize("value", [NoiseFloors(), StoredResult("GPU-A", TIMER_CUPTI, 1e-3), Detectable(0.015, "x")])
def test_floors_stored_results_and_detectables_are_frozen(value):
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.__setattr__(dataclasses.fields(value)[0].name, 0.5)


@pytest.mark.parametrize("field, value", [("same_gpu", -0.01), ("other_gpu", 1.5), ("host_copy_spread", 1.5),
                                          ("z", -1.0)])
def test_floors_out_of_range_are_errors(field, value):
    with pytest.raises(ValueError, match=f"NoiseFloors.{field}"):
        NoiseFloors(**{field: value})


def test_no_assumed_host_copy_spread_and_a_z_below_one_are_allowed():
    assert NoiseFloors(host_copy_spread=0.0, z=0.5).z == 0.5


def test_the_same_physical_gpu_is_an_equal_uuid_and_only_that():
    assert same_physical_gpu(fresh("GPU-A"), fresh("GPU-A"))
    assert not same_physical_gpu("GPU-B", "GPU-A")


def test_relevant_history_matches_timer_and_gpu_read_from_files():
    runs = [stored("GPU-A", 0, median=1e-3), stored("GPU-B", 1, median=2e-3)]
    assert relevant_history(runs, fresh("GPU-A"), fresh("GPU-A"), fresh(TIMER_CUPTI)) == [1e-3]
    assert relevant_history(runs, fresh("GPU-A"), fresh("GPU-B"), fresh(TIMER_CUPTI)) == [1e-3, 2e-3]


def test_the_words_give_the_assumed_spread_and_the_absolute_floor_exactly():
    floors = NoiseFloors(host_copy_spread=0.5)
    words = detectable_change(SPREAD, SPREAD, same_gpu=True, host_copies=True, floors=floors).because
    assert "50.0% assumed between processes for host copies" in words
    huge = detectable_change(SPREAD, SPREAD, same_gpu=True, floors=NoiseFloors(absolute_s=0.9)).because
    assert huge == "900000 µs absolute floor"


@pytest.mark.parametrize("value", [1.0, 1.5, -0.1])
def test_a_host_copy_floor_outside_zero_to_one_is_refused(value):
    with pytest.raises(ValueError, match=r"host_copy_floor must be a fraction in \[0, 1\)"):
        NoiseFloors(host_copy_floor=value)


@pytest.mark.parametrize("call", [
    lambda: floor_terms(1e-3, NoiseFloors(), True),
    lambda: floor_of(1e-3, NoiseFloors(), True),
    lambda: detectable_change(SPREAD, SPREAD, True),
], ids=["floor_terms", "floor_of", "detectable_change"])
def test_whether_the_reference_is_from_this_gpu_must_be_named_not_given_in_place(call):
    """Keyword-only: a bare True after the samples or the floors could as well mean host copies."""
    with pytest.raises(TypeError, match="positional"):
        call()
