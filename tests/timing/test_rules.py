"""kernelwatch.timing: the profiles' sampling and stop rules, the GPU timer on a fake cupti, wall-clock timing."""

import dataclasses
import importlib.abc
import sys
import time
from types import SimpleNamespace

import pytest

import kernelwatch.timing.timer as timing
from kernelwatch.timing.cupti import open_recorder
from kernelwatch.timing.gpu import ClockState
from kernelwatch.timing.profile import MIN_PAIRS, PROFILES, Profile, RelativeNoiseCriterion
from kernelwatch.timing.timer import GpuTimer, Measurement, TimingError, _collection_due
from kernelwatch.timing.wall import measure_wall
from kernelwatch.verdict.labels import FASTER, SAME, SLOWER
from kernelwatch.verdict.paired import judge_paired
from tests.support.cupti import EVENT_COST_NS, FakeCupti


def test_sampling_stops_on_low_noise_once_the_minimums_are_met():
    p = Profile("t", min_samples=10, min_time=0.001, target_rsd=0.005, time_cap=100)
    steady = [1e-3] * 9
    assert p.stop_rule.stop_reason(steady, 0.0) is None  # too few samples
    assert p.stop_rule.stop_reason(steady + [1e-3], 0.0) == "noise"


def test_noisy_samples_run_to_the_time_cap():
    p = Profile("t", min_samples=3, min_time=0, target_rsd=0.005, time_cap=0.0)
    noisy = [1e-3, 2e-3, 1e-3, 3e-3]
    assert p.stop_rule.stop_reason(noisy, 1.0) == "time cap"
    p = Profile("t", min_samples=3, min_time=0, target_rsd=0.005, time_cap=100)
    assert p.stop_rule.stop_reason(noisy, 0.0) is None


def test_sample_count_is_capped():
    p = Profile("t", max_samples=5, time_cap=100)
    assert p.stop_rule.stop_reason([1.0, 2.0, 3.0, 4.0, 5.0], 0.0) == "max samples"


def test_quick_profile_samples_less_than_nightly():
    assert PROFILES["quick"].time_cap < PROFILES["nightly"].time_cap


def test_measurement_reports_its_median_and_relative_spread():
    m = Measurement([1.0, 3.0, 2.0], "noise")
    assert (m.median, m.rsd) == (2.0, 0.5)
    assert Measurement([1.0], "noise").rsd == 0.0


# ---- the timer's choice of CUPTI and its recording session, on a fake cupti module (no GPU) ----

class _NoCupti(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "cupti" or name.startswith("cupti."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


STEADY = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=2)


def test_without_cupti_the_timer_falls_back_to_events_with_a_one_line_note(monkeypatch):
    monkeypatch.delitem(sys.modules, "cupti", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoCupti(), *sys.meta_path])
    recorder, note = open_recorder()
    assert recorder is None
    assert note == "CUPTI unavailable (No module named 'cupti'); timing with held CUDA events"
    monkeypatch.setattr(GpuTimer, "_open_device", lambda self, l2_bytes: None)
    timer = GpuTimer(50 * 2**20)
    assert (timer.uses_cupti, timer.note) == (False, note)


def test_cupti_refusing_activity_gives_the_event_timer_and_says_why(fake_cupti):
    fake_cupti.refuse = RuntimeError("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")
    timer = GpuTimer(50 * 2**20)
    assert not timer.uses_cupti
    assert "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" in timer.note and "\n" not in timer.note
    assert timer.note.endswith("timing with held CUDA events")


def test_a_timer_not_asked_to_use_cupti_uses_events(fake_cupti):
    timer = GpuTimer(50 * 2**20, prefer_cupti=False)
    assert not timer.uses_cupti and fake_cupti.calls == []
    m = timer.measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY)
    assert m.timer == "cuda events" and m.samples == m.event_samples
    assert m.median == pytest.approx((5_000 + EVENT_COST_NS) * 1e-9)


def test_cupti_samples_are_the_kernel_spans_and_events_are_kept_beside_them(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    assert (timer.uses_cupti, timer.note) == (True, "")
    m = timer.measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY, case="k")
    assert m.timer == "cupti concurrent kernel" and m.stopped_by == "noise"
    assert m.samples == pytest.approx([5_000e-9] * len(m.samples))
    assert m.event_samples == pytest.approx([(5_000 + EVENT_COST_NS) * 1e-9] * len(m.samples))


def test_the_stop_rule_judges_cupti_spans_not_event_times(fake_cupti, monkeypatch):
    timer = GpuTimer(50 * 2**20)
    noisy_events = iter(range(10**6))

    def sample_with_noisy_events(self, run, flush=True):
        fake_cupti.kernel("hold_stream", 10_000)
        run(self.stream)
        return (1 + next(noisy_events) % 7) * 1e-6  # rsd far above the target

    monkeypatch.setattr(GpuTimer, "sample", sample_with_noisy_events)
    m = timer.measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY)
    assert m.stopped_by == "noise" and len(m.samples) == STEADY.min_samples


def test_activity_is_recorded_only_while_sampling_and_disabled_after(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    fake_cupti.calls.clear()
    timer.measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY)
    assert fake_cupti.calls[0][0] == "enable" and fake_cupti.enabled == set()
    assert fake_cupti.calls[-1] == ("flush", 1)
    fake_cupti.kernel("after", 1_000)
    assert fake_cupti.pending == []


def test_activity_is_disabled_and_flushed_even_when_the_run_raises(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    fake_cupti.calls.clear()
    calls = iter(range(10**6))

    def run(stream):
        if next(calls) == 1 + STEADY.warmup + 4:  # the unheld run, the warm-up, then 4 samples go well
            raise ValueError("launch failed")
        fake_cupti.kernel("k", 5_000)

    with pytest.raises(ValueError, match="launch failed"):
        timer.measure(run, STEADY, case="k")
    assert ("enable", int(FakeCupti.ActivityKind.CONCURRENT_KERNEL)) in fake_cupti.calls
    assert fake_cupti.enabled == set()
    last_disable = max(i for i, call in enumerate(fake_cupti.calls) if call[0] == "disable")
    assert ("flush", 1) in fake_cupti.calls[last_disable:]


def test_a_run_without_activity_is_a_timing_error_naming_the_case_and_recording_stops(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    calls = iter(range(10**6))

    def silent_after_the_warm_up(stream):
        if next(calls) < 1 + STEADY.warmup:  # the unheld run and the warm-up see a kernel
            fake_cupti.kernel("k", 5_000)

    with pytest.raises(TimingError, match="empty case: sample 1 of 10 has no activity"):
        timer.measure(silent_after_the_warm_up, STEADY, case="empty case")
    assert fake_cupti.enabled == set()


def test_interleaved_samples_alternate_and_each_run_gets_its_own_spans(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    order = []

    def run_a(stream):
        order.append("a")
        fake_cupti.kernel("a", 4_000)

    def run_b(stream):
        order.append("b")
        fake_cupti.kernel("b", 6_000)

    a, b = timer.measure_interleaved(run_a, run_b, STEADY, case="a/b")
    assert order[:6] == ["a", "b"] * 3
    assert len(a.samples) == len(b.samples) >= STEADY.min_samples
    assert a.samples == pytest.approx([4_000e-9] * len(a.samples))
    assert b.samples == pytest.approx([6_000e-9] * len(b.samples))
    assert (a.stopped_by, b.stopped_by) == ("noise", "noise")


# every sample runs past the cap at once, and the spread never meets the target
CAPPED = Profile("t", min_samples=10, min_time=0, target_rsd=1e-12, time_cap=0.0, warmup=0)


@pytest.mark.parametrize("prefer_cupti", [True, False], ids=["cupti", "events"])
def test_interleaved_sampling_takes_enough_pairs_for_a_verdict_before_the_time_cap(fake_cupti, prefer_cupti):
    timer = GpuTimer(50 * 2**20, prefer_cupti=prefer_cupti)
    steps = iter(range(10**6))

    def noisy(name):
        return lambda stream: fake_cupti.kernel(name, 5_000 + 1_000 * (next(steps) % 3))

    base, head = timer.measure_interleaved(noisy("base"), noisy("head"), CAPPED, case="slow case")
    assert (base.stopped_by, head.stopped_by) == ("time cap", "time cap")
    assert len(base.samples) == len(head.samples) == MIN_PAIRS
    assert judge_paired("slow case", base.samples, head.samples, detectable=0.02).label in (SAME, SLOWER, FASTER)


def test_one_case_alone_may_still_stop_at_the_time_cap_after_two_samples(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    steps = iter(range(10**6))
    m = timer.measure(lambda stream: fake_cupti.kernel("k", 5_000 + 1_000 * (next(steps) % 3)), CAPPED)
    assert (m.stopped_by, len(m.samples)) == ("time cap", 2)


def test_a_throttled_measurement_is_retaken_once_and_flagged(fake_cupti, monkeypatch):
    monkeypatch.setattr(timing, "clock_state", lambda: ClockState(1500, 0x8))
    timer = GpuTimer(50 * 2**20)
    m = timer.measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY)
    assert m.retaken and m.throttle and m.throttle[0] == "HW slowdown"


def test_cupti_is_flushed_at_the_minimum_count_then_in_batches_growing_by_a_quarter():
    p = Profile("t", min_samples=10, max_samples=2000, time_cap=100)
    far_from_the_cap = time.perf_counter()
    flushed_at, pending = [], 0
    for rounds in range(1, 2001):
        pending += 1
        if _collection_due(rounds, pending, far_from_the_cap, p):
            flushed_at.append(rounds)
            pending = 0
    assert flushed_at[:5] == [10, 20, 30, 40, 50]
    assert flushed_at[5] == 62 and flushed_at[-1] == 2000
    assert len(flushed_at) < 25  # a flush costs ~1.7 ms: not one per 10 samples all the way


def test_cupti_is_flushed_as_soon_as_the_time_cap_is_reached():
    p = Profile("t", min_samples=10, time_cap=0.0)
    assert _collection_due(5, 1, time.perf_counter() - 1, p)


# ---- which CUPTI kernel kind times a case (src/kernelwatch/timing/timer.py: SERIAL_KIND_FROM) ----

def kernel_kinds_enabled(fake: FakeCupti) -> list[str]:
    kinds = {int(FakeCupti.ActivityKind.KERNEL): "KERNEL", int(FakeCupti.ActivityKind.CONCURRENT_KERNEL): "CONCURRENT"}
    return [kinds[kind] for call, kind in fake.calls if call == "enable" and kind in kinds]


def test_the_probe_tries_both_kernel_kinds(fake_cupti):
    GpuTimer(50 * 2**20)
    assert sorted(set(kernel_kinds_enabled(fake_cupti))) == ["CONCURRENT", "KERNEL"]


@pytest.mark.parametrize("kernel_ns, timer", [
    (19_999, "cupti concurrent kernel"),  # under 20 µs: the kind whose timestamps read alike on every host
    (20_000, "cupti kernel"),  # 20 µs and more, one kernel at a time: the kind that leaves the code alone
    (300_000, "cupti kernel"),
])
def test_a_launch_of_one_streams_work_gets_the_kernel_kind_from_20_us(fake_cupti, kernel_ns, timer):
    timer_ = GpuTimer(50 * 2**20)
    fake_cupti.calls.clear()
    m = timer_.measure(lambda stream: fake_cupti.kernel("k", kernel_ns), STEADY, case="k")
    assert m.timer == timer
    assert m.samples == pytest.approx([kernel_ns * 1e-9] * len(m.samples))
    # the warm-up is recorded with the concurrent kind, the samples with the chosen one
    chosen = "KERNEL" if timer == "cupti kernel" else "CONCURRENT"
    assert kernel_kinds_enabled(fake_cupti) == ["CONCURRENT", chosen]
    assert fake_cupti.enabled == set()


def test_two_kernels_one_after_the_other_are_one_streams_work(fake_cupti):
    def two_kernels(stream):
        fake_cupti.kernel("gemm", 15_000)
        fake_cupti.kernel("reduce", 10_000)

    m = GpuTimer(50 * 2**20).measure(two_kernels, STEADY, case="split-k")
    assert m.timer == "cupti kernel" and m.median == pytest.approx(25_000e-9)


def test_a_launch_whose_activities_overlap_keeps_the_concurrent_kind(fake_cupti):
    def kernel_beside_a_copy(stream):
        fake_cupti.kernel("k", 50_000)
        fake_cupti.copy_beside(30_000)

    m = GpuTimer(50 * 2**20).measure(kernel_beside_a_copy, STEADY, case="streams")
    assert m.timer == "cupti concurrent kernel" and m.median == pytest.approx(50_000e-9)


@pytest.mark.parametrize("a_ns, b_ns, timer", [
    (25_000, 30_000, "cupti kernel"),
    (25_000, 5_000, "cupti concurrent kernel"),  # both versions of a case get one kind: the shorter one's
])
def test_both_runs_of_an_interleaved_comparison_get_one_kind(fake_cupti, a_ns, b_ns, timer):
    a, b = GpuTimer(50 * 2**20).measure_interleaved(lambda stream: fake_cupti.kernel("a", a_ns),
                                                     lambda stream: fake_cupti.kernel("b", b_ns), STEADY, case="a/b")
    assert a.timer == b.timer == timer
    assert (a.median, b.median) == pytest.approx((a_ns * 1e-9, b_ns * 1e-9))


def test_a_case_without_warm_up_rounds_still_chooses_its_kind_from_one_recorded_sample(fake_cupti):
    no_warm_up = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=0)
    m = GpuTimer(50 * 2**20).measure(lambda stream: fake_cupti.kernel("k", 40_000), no_warm_up, case="k")
    assert m.timer == "cupti kernel"


def test_a_warm_up_without_activity_is_a_timing_error_naming_the_case(fake_cupti):
    with pytest.raises(TimingError, match="empty case: sample 1 of 2 has no activity"):
        GpuTimer(50 * 2**20).measure(lambda stream: None, STEADY, case="empty case")
    assert fake_cupti.enabled == set()


@pytest.mark.parametrize("copy_kind, host_copies", [(1, True), (8, False)], ids=["host-to-device", "device-to-device"])
def test_a_measurement_says_whether_its_launch_copied_to_or_from_host_memory(fake_cupti, copy_kind, host_copies):
    def kernel_beside_a_copy(stream):
        fake_cupti.kernel("k", 50_000)
        fake_cupti.copy_beside(30_000, copy_kind)

    m = GpuTimer(50 * 2**20).measure(kernel_beside_a_copy, STEADY, case="pipeline")
    assert m.host_copies is host_copies


def test_without_cupti_whether_a_launch_copied_to_the_host_is_unknown(fake_cupti):
    m = GpuTimer(50 * 2**20, prefer_cupti=False).measure(lambda stream: fake_cupti.kernel("k", 5_000), STEADY)
    assert m.host_copies is None


def test_a_profile_for_host_copies_samples_for_longer_and_caps_later():
    nightly = PROFILES["nightly"].for_host_copies()
    assert nightly.min_time == PROFILES["nightly"].host_copy_min_time == 0.5
    assert nightly.time_cap == 1.5 and PROFILES["quick"].for_host_copies().time_cap == 1.5
    long_enough = Profile("t", min_time=2.0, host_copy_min_time=0.5).for_host_copies()
    assert (long_enough.min_time, long_enough.time_cap) == (2.0, 6.0)


@pytest.mark.parametrize("copy_kind, window_s", [(1, 0.02), (8, 0.0)], ids=["host-to-device", "device-to-device"])
def test_a_launch_that_copies_to_or_from_the_host_is_sampled_for_its_longer_window(fake_cupti, copy_kind, window_s):
    def kernel_beside_a_copy(stream):
        fake_cupti.kernel("k", 50_000)
        fake_cupti.copy_beside(30_000, copy_kind)

    window = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, host_copy_min_time=0.02)
    started = time.perf_counter()
    m = GpuTimer(50 * 2**20).measure(kernel_beside_a_copy, window, case="pipeline")
    spanned = time.perf_counter() - started
    if copy_kind == 8:
        assert len(m.samples) == 10 and m.stopped_by == "noise"
        return
    # the window: 0.02 s of GPU time (400 spans of 50 µs, and CUPTI's batches collect up to a quarter
    # more) for the noise rule, or samples spanning 0.02 s of wall clock for the precision rule
    assert (m.stopped_by == "noise" and 400 <= len(m.samples) <= 500) or m.stopped_by == "precision"
    assert sum(m.samples) >= window_s or spanned >= window_s
    assert len(m.samples) > 10


def test_a_host_routine_is_sampled_to_what_a_thirty_percent_verdict_needs():
    nightly = PROFILES["nightly"].for_wall_clock()
    assert (nightly.target_rsd, nightly.time_cap, nightly.min_samples, nightly.min_time) == (0.05, 0.3, 10, 0.1)
    assert nightly.target_median_se == 0.02
    # a 10 ms routine with 3% spread stops on noise at the tenth sample, long before the nightly's 1.5 s cap
    spread = [1e-2 * (1 + 0.03 * (-1) ** i) for i in range(10)]
    assert nightly.stop_rule.stop_reason(spread[:9], 0.0) is None
    assert nightly.stop_rule.stop_reason(spread, 0.0) == "noise"
    # a 1 ms one as quiet needs 0.1 s of samples: one moment of host noise is not its median
    short = [seconds / 10 for seconds in spread * 10]
    assert nightly.stop_rule.stop_reason(short[:99], 0.0) is None
    assert nightly.stop_rule.stop_reason(short, 0.0) == "noise"
    # one with 20% spread stops once its median's standard error is 2%: about 160 samples, not 0.3 s of them
    noisy = [2e-3 * (1 + 0.2 * (-1) ** i) for i in range(200)]
    stops = next(n for n in range(2, 201) if nightly.stop_rule.stop_reason(noisy[:n], 0.2))
    assert nightly.stop_rule.stop_reason(noisy[:stops], 0.2) == "precision" and 150 <= stops <= 170
    # a profile stricter than the wall-clock rule keeps its own, stricter, figures
    assert PROFILES["quick"].for_wall_clock().time_cap == 0.3


def test_measure_wall_stops_a_noisy_routine_at_the_wall_clock_cap_not_the_profiles():
    import random

    from kernelwatch.timing.wall import measure_wall

    started = time.perf_counter()
    # about 45% spread: its median's standard error reaches 2% only past 700 samples, 0.8 s of them
    measurement = measure_wall(lambda: time.sleep(random.uniform(0.2e-3, 2e-3)), PROFILES["nightly"])
    elapsed = time.perf_counter() - started
    assert measurement.timer == "wall clock" and measurement.stopped_by == "time cap"
    assert elapsed < 1.0  # the nightly profile's own cap is 1.5 s


def test_a_launch_of_fifty_ms_or_more_may_stop_on_noise_at_five_samples():
    rule = PROFILES["nightly"].stop_rule
    long = [0.30, 0.3001, 0.2999, 0.3, 0.3002]
    assert rule.stop_reason(long[:4], 0.0) is None and rule.stop_reason(long, 0.0) == "noise"
    short = [0.049, 0.0491, 0.0489, 0.049, 0.0492]  # just under 50 ms: the nightly's ten
    assert rule.stop_reason(short, 0.0) is None
    assert rule.stop_reason(short * 2, 0.0) == "noise"
    assert (PROFILES["nightly"].long_sample_s, PROFILES["nightly"].min_samples_long) == (0.05, 5)


def test_a_launch_of_fifty_ms_is_warmed_by_one_held_round_and_sampled_five_times(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    runs = []

    def long_kernel(stream):
        runs.append(1)
        fake_cupti.kernel("k", 80_000_000)  # 80 ms

    nightly = PROFILES["nightly"]
    m = timer.measure(long_kernel, nightly, case="k")
    assert m.stopped_by == "noise" and len(m.samples) == nightly.min_samples_long
    assert len(runs) == 1 + 1 + nightly.min_samples_long  # unheld run, one warm-up round, the samples
    runs.clear()
    timer.measure(lambda stream: (runs.append(1), fake_cupti.kernel("k", 5_000)), STEADY, case="k")
    assert len(runs) == 1 + STEADY.warmup + STEADY.min_samples  # a short launch keeps its warm-up rounds


def test_a_case_never_quiet_enough_for_the_noise_rule_stops_once_its_median_is_known_to_0_2_percent():
    """A 5 µs add reads 3% spread: the 0.5% rule never holds, and 2000 samples took 0.8 s of the
    nightly; its median's standard error (sqrt(pi/2) x 3% / sqrt(n)) is 0.2% at n = 354."""
    from kernelwatch.timing.profile import MEDIAN_SE_FACTOR, TARGET_MEDIAN_SE

    assert TARGET_MEDIAN_SE == 0.002 and MEDIAN_SE_FACTOR == pytest.approx(1.2533, abs=1e-4)
    rule = PROFILES["nightly"].stop_rule
    assert rule.target_median_se == TARGET_MEDIAN_SE
    add = [5e-6 * (1 + 0.03 * (-1) ** i) for i in range(2000)]
    stops = next(n for n in range(2, 2001) if rule.stop_reason(add[:n], 0.1))
    assert rule.stop_reason(add[:stops], 0.1) == "precision" and 350 <= stops <= 358
    # it needs the samples to span the profile's 20 ms, of wall clock: 1.8 ms of GPU time is enough then
    assert rule.stop_reason(add[:stops], 0.019) is None
    # the same precision asked of a quiet case is no stricter than the noise rule: it stops at 10
    quiet = [1e-2 * (1 + 0.001 * (-1) ** i) for i in range(10)]
    assert rule.stop_reason(quiet, 0.0) == "noise"
    # the quick profile asks the same precision of its medians
    assert PROFILES["quick"].stop_rule.target_median_se == TARGET_MEDIAN_SE


def test_the_precision_rule_waits_for_the_minimum_samples_and_span():
    rule = Profile("t", min_samples=10, min_time=0.01, target_rsd=0.0, target_median_se=0.5, time_cap=100).stop_rule
    assert rule.stop_reason([1e-3, 2e-3] * 4, 1.0) is None  # 8 samples
    assert rule.stop_reason([1e-4, 2e-4] * 5, 0.005) is None  # 10 samples over 5 ms
    assert rule.stop_reason([1e-4, 2e-4] * 5, 0.01) == "precision"
    assert rule.stop_reason([1e-3, 2e-3] * 5, 0.0) == "precision"  # 15 ms of samples span 15 ms
    # the noise rule still counts measured time, not the span
    noise = Profile("t", min_samples=10, min_time=0.01, target_rsd=0.5, target_median_se=0.0, time_cap=100).stop_rule
    assert noise.stop_reason([1e-4, 2e-4] * 5, 1.0) is None
    assert noise.stop_reason([1e-3, 2e-3] * 5, 0.0) == "noise"


def test_a_ceiling_is_sampled_without_the_host_copy_window():
    """The host-copy window is for verdicts between processes; a ceiling is a figure only."""
    from kernelwatch.timing.ceilings import for_a_figure

    nightly = PROFILES["nightly"]
    assert nightly.for_host_copies().min_time == nightly.host_copy_min_time  # a case: 0.5 s
    ceiling = for_a_figure(nightly).for_host_copies()
    assert (ceiling.min_time, ceiling.time_cap) == (nightly.min_time, nightly.time_cap)


def flat(n: int, value: float = 1e-3) -> list[float]:
    return [value] * n


class CountingRule:
    """A stop rule that stops after `samples` samples and keeps the elapsed times it was shown."""

    def __init__(self, samples):
        self.samples, self.elapsed = samples, []

    def stop_reason(self, samples, elapsed):
        self.elapsed.append(elapsed)
        return "enough" if len(samples) >= self.samples else None


def test_nightly_stops_on_noise_at_ten_samples_not_nine():
    rule = PROFILES["nightly"].stop_rule
    assert rule.stop_reason(flat(9, 1e-2), elapsed=0.1) is None
    assert rule.stop_reason(flat(10, 1e-2), elapsed=0.1) == "noise"


def test_nightly_target_rsd_is_half_a_percent():
    rule = PROFILES["nightly"].stop_rule
    # 10 samples alternating +-d around 10 ms: rsd is about d / 10 ms (and the median's standard
    # error at 0.55%, 0.22%, is above the precision rule's 0.2%)
    def samples(rsd: float) -> list[float]:
        return [1e-2 * (1 + rsd if i % 2 else 1 - rsd) for i in range(10)]
    assert rule.stop_reason(samples(0.0045), elapsed=0.3) == "noise"
    assert rule.stop_reason(samples(0.0055), elapsed=0.3) is None


def test_quick_stops_on_noise_at_eight_samples_and_one_percent_rsd():
    rule = PROFILES["quick"].stop_rule
    assert rule.stop_reason(flat(7, 1e-2), elapsed=0.05) is None
    assert rule.stop_reason(flat(8, 1e-2), elapsed=0.05) == "noise"
    assert rule.stop_reason([1e-2 * (1.009 if i % 2 else 0.991) for i in range(20)], elapsed=0.2) == "noise"
    assert rule.stop_reason([1e-2 * (1.011 if i % 2 else 0.989) for i in range(20)], elapsed=0.2) is None


def test_quick_needs_ten_milliseconds_of_samples_before_noise_can_stop_it():
    rule = PROFILES["quick"].stop_rule
    assert rule.stop_reason(flat(9, 1e-3), elapsed=0.0095) is None  # 9 ms measured, over 9.5 ms
    assert rule.stop_reason(flat(10, 1e-3), elapsed=0.0095) == "noise"


def test_the_sample_cap_is_two_thousand_and_the_nightly_warms_up_three_times():
    rule = PROFILES["nightly"].stop_rule
    noisy = [1e-6 * (1 + (i % 2)) for i in range(1999)]
    assert rule.stop_reason(noisy, elapsed=0.001) is None
    assert rule.stop_reason(noisy + [1e-6], elapsed=0.001) == "max samples"
    assert PROFILES["nightly"].warmup == 3


def test_the_quick_time_cap_is_four_tenths_of_a_second():
    rule = PROFILES["quick"].stop_rule
    noisy = [1e-6 * (1 + (i % 2)) for i in range(5)]
    assert rule.stop_reason(noisy, elapsed=0.39) is None
    assert rule.stop_reason(noisy, elapsed=0.41) == "time cap"


@pytest.mark.parametrize("warmup, warm_calls", [(0, 1), (1, 1), (3, 3)])
def test_a_host_routine_is_warmed_up_at_least_once_before_its_samples(warmup, warm_calls):
    rule = CountingRule(4)
    profile = SimpleNamespace(for_wall_clock=lambda: SimpleNamespace(warmup=warmup, stop_rule=rule))
    calls = []
    measurement = measure_wall(lambda: calls.append(1), profile)
    assert len(measurement.samples) == 4 and measurement.stopped_by == "enough"
    assert len(calls) == 4 + warm_calls


def test_the_stop_rule_is_shown_the_wall_clock_time_since_sampling_began():
    rule = CountingRule(5)
    profile = SimpleNamespace(for_wall_clock=lambda: SimpleNamespace(warmup=1, stop_rule=rule))
    started = time.perf_counter()
    measurement = measure_wall(lambda: time.sleep(1e-3), profile)
    outside = time.perf_counter() - started
    for count, elapsed in enumerate(rule.elapsed, start=1):
        assert sum(measurement.samples[:count]) <= elapsed <= outside


def test_the_nightly_caps_a_case_at_one_and_a_half_seconds_and_profiles_are_frozen():

    assert PROFILES["nightly"].time_cap == 1.5 and PROFILES["full"].time_cap == 1.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROFILES["nightly"].time_cap = 10.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROFILES["nightly"].stop_rule.min_samples = 1


def test_samples_past_the_sample_cap_still_stop_on_it():
    # "max samples: `max_samples` are in": a rule shown more (a batch of records collected at once) stops too
    rule = PROFILES["nightly"].stop_rule
    noisy = [1e-6 * (1 + (i % 2)) for i in range(rule.max_samples + 1)]
    assert rule.stop_reason(noisy, elapsed=0.001) == "max samples"


def test_the_time_cap_stops_sampling_only_once_the_wall_clock_is_past_it():
    rule = PROFILES["quick"].stop_rule
    noisy = [1e-6 * (1 + (i % 2)) for i in range(5)]
    assert rule.stop_reason(noisy, elapsed=rule.time_cap) is None  # at the cap itself: not yet
    assert rule.stop_reason(noisy, elapsed=rule.time_cap * (1 + 1e-6)) == "time cap"


def test_a_spread_needs_two_samples_even_where_the_profile_asks_for_fewer():
    rule = Profile("t", min_samples=1, min_time=0, target_rsd=0.01, time_cap=100).stop_rule
    assert rule.stop_reason([1e-3], elapsed=1.0) is None  # one sample has no standard deviation
    assert rule.stop_reason([1e-3, 1e-3], elapsed=1.0) == "noise"  # two are enough


def test_samples_without_spread_meet_a_noise_target_of_zero():
    # the noise rule holds at its target, not only under it: a relative standard deviation of 0 meets 0
    rule = Profile("t", min_samples=10, min_time=0, target_rsd=0.0, time_cap=100).stop_rule
    assert rule.stop_reason(flat(10), elapsed=0.0) == "noise"


def test_a_criterion_given_no_precision_target_asks_its_median_for_no_error_and_has_no_long_sample_rule():
    rule = RelativeNoiseCriterion(min_samples=3, min_time=0.01, target_rsd=0.0, time_cap=100,
                                  min_samples_before_cap=2, max_samples=100)
    # (min_samples_long's default, 0, is not asserted: the rule reads it through max(..., 2), so 0, 1 or -1 stop alike)
    assert (rule.long_sample_s, rule.target_median_se) == (float("inf"), 0.0)
    assert rule.stop_reason([1e-3, 2e-3, 3e-3] * 10, elapsed=1.0) is None  # noisy: some error is left
    # no spread: the median's standard error is 0, which meets a target of 0 once the samples span min_time
    # (they measure 3 ms of the 10: the noise rule, on measured time, does not stop them)
    assert rule.stop_reason(flat(3), elapsed=0.01) == "precision"
