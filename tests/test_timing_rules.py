import time

from harness.timing import PROFILES, Measurement, Profile, _stop_reason


def test_sampling_stops_on_low_noise_once_the_minimums_are_met():
    p = Profile("t", min_samples=10, min_time=0.001, target_rsd=0.005, time_cap=100)
    steady = [1e-3] * 9
    assert _stop_reason(steady, time.perf_counter(), p) is None  # too few samples
    assert _stop_reason(steady + [1e-3], time.perf_counter(), p) == "noise"


def test_noisy_samples_run_to_the_time_cap():
    p = Profile("t", min_samples=3, min_time=0, target_rsd=0.005, time_cap=0.0)
    noisy = [1e-3, 2e-3, 1e-3, 3e-3]
    assert _stop_reason(noisy, time.perf_counter() - 1, p) == "time cap"
    p = Profile("t", min_samples=3, min_time=0, target_rsd=0.005, time_cap=100)
    assert _stop_reason(noisy, time.perf_counter(), p) is None


def test_sample_count_is_capped():
    p = Profile("t", max_samples=5, time_cap=100)
    assert _stop_reason([1.0, 2.0, 3.0, 4.0, 5.0], time.perf_counter(), p) == "max samples"


def test_quick_profile_samples_less_than_nightly():
    assert PROFILES["quick"].time_cap < PROFILES["nightly"].time_cap


def test_measurement_reports_median_noise_and_throttling():
    m = Measurement([1.0, 3.0, 2.0], "noise", throttle=["HW slowdown"], sm_clock_mhz=[1980, 1755])
    info = m.extra_info()
    assert info["median_s"] == 2.0 and info["samples"] == 3
    assert info["rsd"] == 0.5
    assert info["throttled"] is True and info["throttle_reasons"] == ["HW slowdown"]
    assert (info["sm_clock_mhz_min"], info["sm_clock_mhz_max"]) == (1755, 1980)
