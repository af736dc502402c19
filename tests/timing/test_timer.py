"""kernelwatch.timing's GPU timer on a fake cupti: when samples are collected, the L2 flush, NVML reads, and the
CUPTI recorder's start, stop and records."""

from __future__ import annotations

import time
import types

import pytest

import kernelwatch.timing.timer as timing
from kernelwatch.timing import cupti as cupti_recorder
from kernelwatch.timing.gpu import ClockState
from kernelwatch.timing.phases import PhaseRecorder
from kernelwatch.timing.profile import PROFILES, Profile
from kernelwatch.timing.timer import GpuTimer, _collection_due

STEADY = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=2)


@pytest.fixture
def recorder(fake_cupti):
    """An ActivityRecorder opened on the fake CUPTI."""
    opened, note = cupti_recorder.open_recorder()
    assert opened is not None, note
    return opened


def test_nvml_is_read_on_the_first_round_of_every_ten_and_once_at_the_end(fake_cupti, monkeypatch):
    """Clock and throttle reads cost tens of µs: rounds 1, 11, 21, ... and the last. Each read
    notes how many launches had run (two before sampling: the unheld run and one held round)."""
    launches, reads = [], []
    monkeypatch.setattr(timing, "clock_state", lambda: reads.append(len(launches)) or ClockState(1980, 0))
    twenty_one = Profile("t", min_samples=10, min_time=0, target_rsd=0.0, target_median_se=0.0, time_cap=100,
                         max_samples=21, warmup=0)

    def run(stream):
        launches.append(1)
        fake_cupti.kernel("k", 5_000 + 1_000 * (len(launches) % 3))

    measurement = GpuTimer(50 * 2**20).measure(run, twenty_one, case="k")
    assert measurement.stopped_by == "max samples" and len(measurement.samples) == 21
    assert reads == [3, 13, 23, 23]  # rounds 1, 11 and 21, then the closing read
    assert measurement.sm_clock_mhz == [1980] * 4  # every read's SM clock is kept


def test_measure_flushes_the_l2_before_every_sample_unless_told_not_to(fake_cupti, monkeypatch):
    flushes = []
    sample = GpuTimer.sample
    monkeypatch.setattr(GpuTimer, "sample", lambda self, run, flush=True: flushes.append(flush) or sample(self, run, flush))
    timer = GpuTimer(50 * 2**20)
    timer.measure(lambda stream: fake_cupti.kernel("k", 4_000), STEADY, case="k")
    assert flushes and all(flushes)
    flushes.clear()
    timer.measure(lambda stream: fake_cupti.kernel("k", 4_000), STEADY, flush=False, case="k")
    assert flushes and not any(flushes)
    flushes.clear()
    timer.measure_interleaved(lambda stream: fake_cupti.kernel("a", 4_000),
                              lambda stream: fake_cupti.kernel("b", 4_000), STEADY, case="a/b")
    assert flushes and all(flushes)


def test_an_interleaved_comparison_gets_twice_the_time_cap(fake_cupti):
    """Two runs share the cap's time: each must still get about its own."""
    capped = Profile("t", min_samples=10, min_time=0, target_rsd=0.0, target_median_se=0.0, time_cap=0.1,
                     warmup=0)

    steps = iter(range(10**6))

    def sleeping(name):
        def run(stream):
            time.sleep(0.001)
            fake_cupti.kernel(name, 5_000 + 1_000 * (next(steps) % 3))
        return run

    started = time.perf_counter()
    a, b = GpuTimer(50 * 2**20).measure_interleaved(sleeping("a"), sleeping("b"), capped, case="a/b")
    elapsed = time.perf_counter() - started
    assert (a.stopped_by, b.stopped_by) == ("time cap", "time cap")
    assert 0.2 <= elapsed < 0.28  # twice the cap, and a round or two past it


def test_a_long_launch_is_collected_after_every_round_from_its_minimum_on():
    """A flush costs milliseconds, a launch of 50 ms or more tens of them: from the fifth round on
    (nightly) every round is judged, not only every tenth."""
    nightly = PROFILES["nightly"]
    started = time.perf_counter()
    for rounds in (5, 6, 7, 13):
        assert _collection_due(rounds, 1, started, nightly, last_sample_s=0.3)
    assert _collection_due(6, 1, started, nightly, last_sample_s=nightly.long_sample_s)  # "long_sample_s or more"
    assert not _collection_due(4, 1, started, nightly, last_sample_s=0.3)
    assert not _collection_due(6, 1, started, nightly, last_sample_s=0.01)  # a short one waits


def test_collection_comes_at_a_quarter_more_samples_and_at_the_time_cap():
    nightly = PROFILES["nightly"]
    now = time.perf_counter()
    # 1300 collected, 325 pending: a quarter more (whatever the size of the numbers)
    assert _collection_due(1625, 325, now, nightly) and not _collection_due(1624, 324, now, nightly)
    # past the case's 1.5 s cap: collect now, so that the cap can stop it
    assert _collection_due(13, 3, now - 2.0, nightly) and not _collection_due(13, 3, now, nightly)


def test_a_minimum_count_between_two_batches_is_collected_and_judged_there(fake_cupti):
    """Batches are collected at 10, 20, ..., 233, 291 and then 363 samples; a case whose minimum is 300 is
    judged at 300 all the same (counts past 256 are not Python's shared small integers)."""
    three_hundred = Profile("t", min_samples=300, min_time=0, target_rsd=0.01, time_cap=100, warmup=0)
    measurement = GpuTimer(50 * 2**20).measure(lambda stream: fake_cupti.kernel("k", 4_000), three_hundred, case="k")
    assert (len(measurement.samples), measurement.stopped_by) == (300, "noise")


def test_a_warm_up_runs_its_planned_rounds_however_many(fake_cupti, monkeypatch):
    held = []

    def sample(self, run, flush=True):
        assert len(held) < 1_000, "the warm-up never ends"
        held.append(1)
        return 1e-3

    monkeypatch.setattr(GpuTimer, "sample", sample)
    long_warm_up = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=300)
    measurement = GpuTimer(50 * 2**20, prefer_cupti=False).measure(lambda stream: None, long_warm_up, case="k")
    assert len(measurement.samples) == 10 and len(held) == 300 + 10


def test_a_launch_of_exactly_the_long_sample_time_is_warmed_up_by_one_round(fake_cupti, monkeypatch):
    """One held round warms a launch of long_sample_s or more (the warm-up's rule): three planned rounds become one."""
    profile = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=3,
                      long_sample_s=0.05, min_samples_long=5)
    held = []
    monkeypatch.setattr(GpuTimer, "sample", lambda self, run, flush=True: held.append(1) or profile.long_sample_s)
    measurement = GpuTimer(50 * 2**20, prefer_cupti=False).measure(lambda stream: None, profile, case="k")
    assert len(measurement.samples) == 5 and len(held) == 1 + 5


def test_phases_are_cut_with_cupti_at_the_timers_marks_and_not_without_it(fake_cupti):
    timer = GpuTimer(50 * 2**20)
    recorder = timer.phase_recorder()
    assert isinstance(recorder, PhaseRecorder) and recorder.recorder is timer._recorder
    assert recorder.mark == timer._mark_sample
    assert GpuTimer(50 * 2**20, prefer_cupti=False).phase_recorder() is None  # no CUPTI, no phases


def test_the_spread_of_two_samples_is_their_relative_standard_deviation():
    from kernelwatch.timing.timer import Measurement

    assert Measurement([1.0, 3.0], "noise").rsd == pytest.approx(2 ** 0.5 / 2)
    assert Measurement([2.0], "noise").rsd == 0.0


def test_the_recorder_starts_with_the_concurrent_kernel_kind_by_default(fake_cupti, recorder):
    fake_cupti.calls.clear()
    recorder.start()
    enabled = [kind for call, kind in fake_cupti.calls if call == "enable"]
    assert int(fake_cupti.ActivityKind.CONCURRENT_KERNEL) in enabled
    assert int(fake_cupti.ActivityKind.KERNEL) not in enabled
    recorder.stop()


def test_cupti_buffers_hold_a_whole_batch_of_records():
    """A kernel record is about 200 bytes; a batch of 2000 samples of a few activities each must fit
    one buffer, and a buffer is not a large share of host memory (CUPTI allocates several)."""
    assert 2000 * 4 * 200 <= cupti_recorder.BUFFER_BYTES <= 64 * 2**20


@pytest.mark.parametrize("length", [159, 160, 161, 400])
def test_an_error_is_cut_to_one_line_of_at_most_160_characters(length):
    text = "x" * length
    line = cupti_recorder._one_line(RuntimeError(text))
    assert len(line) <= 160
    assert line == text if length <= 160 else line == "x" * 157 + "..."


def test_under_cupti_a_profile_without_warm_up_still_gets_one_held_round(fake_cupti, monkeypatch):
    """CUPTI's warm-up round chooses the kernel kind: one held round, not two, when warmup is 0."""
    held = []
    sample = GpuTimer.sample
    monkeypatch.setattr(GpuTimer, "sample", lambda self, run, flush=True: held.append(1) or sample(self, run, flush))
    no_warm_up = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=0)
    measurement = GpuTimer(50 * 2**20).measure(lambda stream: fake_cupti.kernel("k", 4_000), no_warm_up, case="k")
    assert len(measurement.samples) == 10 and len(held) == 11


def test_a_long_launch_is_judged_by_its_newest_sample_not_its_first(fake_cupti):
    """49 ms then 50 ms launches: from the fifth round on each round is judged (the newest sample is
    long), so sampling stops at five, not at the ten that a short launch waits for."""
    durations = iter([49_000_000] + [50_000_000] * 100)
    seen = []

    def run(stream):  # the unheld run and the held warm-up round come first
        fake_cupti.kernel("k", next(durations) if len(seen) >= 2 else 50_000_000)
        seen.append(1)

    profile = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=1,
                      long_sample_s=0.05, min_samples_long=5)
    measurement = GpuTimer(50 * 2**20).measure(run, profile, case="k")
    assert measurement.samples[0] < 0.05 <= measurement.samples[-1]
    assert len(measurement.samples) == 5 and measurement.stopped_by == "noise"


def test_memset_records_are_named_memset_and_unknown_kinds_are_dropped(fake_cupti, recorder):
    recorder.start()
    fake_cupti.completed([types.SimpleNamespace(kind=int(fake_cupti.ActivityKind.MEMSET), start=1, end=2),
                          types.SimpleNamespace(kind=99, name="other", start=3, end=4),
                          types.SimpleNamespace(kind=int(fake_cupti.ActivityKind.MEMCPY), copy_kind=1, start=5, end=6),
                          types.SimpleNamespace(kind=int(fake_cupti.ActivityKind.MEMCPY), copy_kind=42, start=7, end=8)])
    fake_cupti.calls.clear()
    records, dropped = recorder.collect()
    assert ("flush", 1) in fake_cupti.calls  # forced: the buffers that are not full too
    recorder.stop()
    # a copy kind this cupti-python does not know is named by its number
    assert [(r.kind, r.name) for r in records] == [("memset", "memset"), ("memcpy", "memcpy HTOD"),
                                                   ("memcpy", "memcpy 42")]
    assert dropped == 0


def test_the_recorder_asks_for_whole_buffers_and_the_global_dropped_count(fake_cupti, recorder):
    assert fake_cupti.requested() == (cupti_recorder.BUFFER_BYTES, 0)  # 0: as many records as fit
    fake_cupti.calls.clear()
    recorder.dropped_records()
    assert fake_cupti.calls == [("dropped", (0, 0))]  # context 0, stream 0: CUPTI's global queue


def test_a_start_that_fails_part_way_disables_what_it_enabled(fake_cupti, recorder, monkeypatch):
    enable = fake_cupti.activity_enable

    def refuse_memset(kind):
        if int(kind) == int(fake_cupti.ActivityKind.MEMSET):
            raise RuntimeError("CUPTI_ERROR_NOT_SUPPORTED")
        enable(kind)

    monkeypatch.setattr(fake_cupti, "activity_enable", refuse_memset)
    with pytest.raises(RuntimeError, match="NOT_SUPPORTED"):
        recorder.start()
    assert fake_cupti.enabled == set()


def test_stop_disables_every_kind_and_flushes_even_when_one_disable_fails(fake_cupti, recorder, monkeypatch):
    recorder.start()
    disable = fake_cupti.activity_disable

    def refuse_kernel(kind):
        if int(kind) == int(fake_cupti.ActivityKind.CONCURRENT_KERNEL):
            raise RuntimeError("refused")
        disable(kind)

    monkeypatch.setattr(fake_cupti, "activity_disable", refuse_kernel)
    fake_cupti.calls.clear()
    with pytest.raises(RuntimeError, match="refused"):
        recorder.stop()
    assert fake_cupti.enabled == {int(fake_cupti.ActivityKind.CONCURRENT_KERNEL)}  # the others are off
    assert ("flush", 1) in fake_cupti.calls


def test_stop_raises_the_first_of_several_errors(fake_cupti, recorder, monkeypatch):
    recorder.start()

    def refuse(what):
        def fail(*args):
            raise RuntimeError(what)
        return fail

    monkeypatch.setattr(fake_cupti, "activity_disable", refuse("disable refused"))
    monkeypatch.setattr(fake_cupti, "activity_flush_all", refuse("flush refused"))
    with pytest.raises(RuntimeError, match="disable refused"):
        recorder.stop()


def test_in_an_ab_the_first_runs_long_launch_makes_every_round_a_collection(fake_cupti):
    # A (80 ms) and B (5 µs) interleaved: A's last sample decides that each round is flushed from
    # min_samples_long on (a flush costs milliseconds, such a round 80); B's short one must not
    timer = GpuTimer(50 * 2**20)
    profile = Profile("t", min_samples=10, min_time=0, target_rsd=0.01, time_cap=100, warmup=1,
                      long_sample_s=0.05, min_samples_long=5)
    collections = []
    original = timer._recorder.collect

    def counted():
        collections.append(1)
        return original()

    timer._recorder.collect = counted
    long_a, short_b = timer.measure_interleaved(lambda stream: fake_cupti.kernel("a", 80_000_000),
                                                lambda stream: fake_cupti.kernel("b", 5_000), profile, case="ab")
    rounds = len(long_a.samples)
    assert rounds == len(short_b.samples) >= profile.min_samples
    # one collection for the warm-up, then one per round from the fifth on
    assert len(collections) == 1 + rounds - (profile.min_samples_long - 1)


def test_a_measurement_names_the_kernels_cupti_saw_the_launch_run_and_none_of_the_timers(fake_cupti):
    calls = []

    def library_call(stream):  # a library's launch: kernels of its choosing, the second every other call
        calls.append(1)
        fake_cupti.kernel("gemm_128x128", 40_000)
        fake_cupti.copy_beside(1_000)  # and a copy: no kernel
        if len(calls) % 2 == 0:
            fake_cupti.kernel("splitk_reduce", 2_000)
        fake_cupti.kernel("gemm_128x128", 40_000)

    timer = GpuTimer(50 * 2**20)
    measured = timer.measure(library_call, STEADY, case="cublas")
    # once each; no hold_stream, flush_l2, and no copy
    assert measured.launched_kernels == ("gemm_128x128", "splitk_reduce")
    a, b = timer.measure_interleaved(lambda stream: fake_cupti.kernel("a", 4_000),
                                     lambda stream: fake_cupti.kernel("b", 4_000), STEADY, case="a/b")
    assert (a.launched_kernels, b.launched_kernels) == (("a",), ("b",))
    events = GpuTimer(50 * 2**20, prefer_cupti=False).measure(library_call, STEADY, case="cublas")
    assert events.launched_kernels == ()
