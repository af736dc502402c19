"""kernelwatch.timing.energy on the CPU: NVML's readings read right, the samples' clock, the replay's fallback, the plan."""

from __future__ import annotations

import json
import math
import time
import types

import pytest

import kernelwatch.timing.energy as energy
from kernelwatch.timing.energy import EnergyError, EnergyPlan, NvmlPower, Replay, open_power
from kernelwatch.timing.power_trace import COUNTER_PERIOD_S, PowerWindow, Trace


class FakeNvml:
    """The parts of pynvml the meter calls, answering as an H200 does."""

    NVML_FI_DEV_POWER_INSTANT = 186
    NVML_TOTAL_POWER_SAMPLES = 0
    NVML_TEMPERATURE_GPU = 0

    class NVMLError(Exception):
        pass

    def __init__(self, samples=(), field_return=0):
        self._samples, self.field_return = list(samples), field_return

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        return 123456789

    def nvmlDeviceGetFieldValues(self, handle, ids):
        assert ids == [self.NVML_FI_DEV_POWER_INSTANT]
        value = types.SimpleNamespace(uiVal=612345, dVal=0.0)
        return [types.SimpleNamespace(nvmlReturn=self.field_return, valueType=1, value=value)]

    def nvmlDeviceGetSamples(self, handle, kind, since):
        newer = [s for s in self._samples if s[0] > since]
        if not newer:
            raise self.NVMLError("not found")
        return 1, [types.SimpleNamespace(timeStamp=t, sampleValue=types.SimpleNamespace(uiVal=mw)) for t, mw in newer]

    def nvmlDeviceGetTemperature(self, handle, sensor):
        return 41

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        raise self.NVMLError("not supported")


def test_nvml_readings_are_read_in_their_units():
    power = NvmlPower(FakeNvml(samples=[(10, 600000), (30, 610000)]), "handle")
    assert power.counter_mj() == 123456789
    assert power.instant_w() == pytest.approx(612.345)
    assert power.samples(0) == [(10, 600.0), (30, 610.0)] and power.samples(10) == [(30, 610.0)]
    assert power.samples(30) == []  # NVML's "not found": nothing newer
    assert power.temperature_c() == 41.0 and power.power_limit_w() is None


def test_an_instant_reading_nvml_refuses_is_none():
    assert NvmlPower(FakeNvml(field_return=3), "handle").instant_w() is None


def test_samples_on_the_epoch_clock_are_placed_by_it_and_others_by_the_newest():
    epoch, now = 1.7e9, 100.0
    on_epoch = [(int((epoch + 99.5) * 1e6), 500.0)]
    assert energy._on_host_clock(on_epoch, epoch, now) == ([(pytest.approx(99.5), 500.0)], "epoch")
    other = [(5_000_000, 400.0), (5_500_000, 410.0)]  # a clock since boot: the newest is taken as now
    placed, how = energy._on_host_clock(other, epoch, now)
    assert [t for t, _ in placed] == pytest.approx([99.5, 100.0]) and how == "newest sample taken as now"
    assert energy._on_host_clock([], epoch, now) == ([], "none")


def test_the_replay_spans_the_warm_up_the_windows_and_two_spare_periods():
    plan = EnergyPlan(windows=6, ticks_per_window=5, warm_s=0.3)
    assert plan.busy_s == pytest.approx(0.3 + 32 * COUNTER_PERIOD_S)


class RefusingStream:
    """A stream whose capture fails as CUDA's does for a launch that syncs with the host."""

    def __init__(self):
        self.synchronized = False

    def begin_capture(self):
        pass

    def end_capture(self):
        raise RuntimeError("cudaErrorStreamCaptureInvalidated: operation failed due to a previous error\nmore")

    def synchronize(self):
        self.synchronized = True


def test_a_launch_that_cannot_be_captured_is_replayed_from_the_host_and_says_why():
    launched = []
    stream = RefusingStream()
    replay = Replay(lambda s: launched.append(s), stream, launch_s=1e-3)
    assert replay.graph is None and replay.per_launch == 10 and stream.synchronized
    assert replay.how.startswith("host launches, 10 per replay (no CUDA graph: RuntimeError: cudaErrorStream")
    launched.clear()
    replay.launch()
    assert launched == [stream] * 10


def test_a_long_launch_is_replayed_one_at_a_time_without_a_graph():
    replay = Replay(lambda s: None, RefusingStream(), launch_s=0.02)
    assert (replay.per_launch, replay.graph, replay.how) == (1, None, "host launches, one per replay")


def test_a_replay_without_a_window_is_an_error_naming_the_case():
    trace = Trace(polls=[(0.0, 1), (0.1, 1), (0.2, 2)], done=[(0.3, 0.0, 1)])
    with pytest.raises(EnergyError, match=r"test_x\[a\]: no energy window in its replay \(3 polls, 1 counter "):
        energy._found([], trace, "test_x[a]")


def test_without_nvml_there_is_no_energy_and_the_reason_says_so(monkeypatch):
    monkeypatch.setattr(energy, "nvml_module", lambda: None)
    monkeypatch.setattr(energy, "nvml_handle", lambda device=None: None)
    assert open_power() == (None, "NVML is not available (nvidia-ml-py missing, or no NVML device for this CUDA device)")


def test_a_gpu_without_an_energy_counter_says_so(monkeypatch):
    nvml = FakeNvml()

    def refuse(handle):
        raise nvml.NVMLError("Not Supported")

    nvml.nvmlDeviceGetTotalEnergyConsumption = refuse
    monkeypatch.setattr(energy, "nvml_module", lambda: nvml)
    monkeypatch.setattr(energy, "nvml_handle", lambda device=None: "handle")
    assert open_power() == (None, "this GPU has no NVML energy counter (Not Supported)")


class CountingPower:
    """A stand-in for NvmlPower: a counter that adds 30 J every 100 ms of the host's clock, POWER_INSTANT
    refused every other read, and the 50 Hz samples held as NVML holds them (what `since` was asked)."""

    def __init__(self):
        self.started, self.reads, self.since = time.perf_counter(), 0, []

    def counter_mj(self):
        return int((time.perf_counter() - self.started) / COUNTER_PERIOD_S) * 30_000

    def instant_w(self):
        self.reads += 1
        return 300.0 if self.reads % 2 else None

    def samples(self, since_us):
        self.since.append(since_us)
        return [(int(time.time() * 1e6), 300.0)]

    def temperature_c(self):
        return 40.0

    def power_limit_w(self):
        return 700.0


def test_an_idle_recording_keeps_the_instant_readings_nvml_gave_and_asks_for_every_held_sample():
    from kernelwatch.timing.energy import EnergyMeter

    power = CountingPower()
    trace = EnergyMeter(power)._record(None, busy_s=0.35, warm_s=0.0)
    assert trace.instant and all(watts == 300.0 for _, watts in trace.instant)  # the refused reads left out
    assert len(trace.instant) < power.reads
    assert power.since and set(power.since) == {0}  # all that NVML holds, each time
    assert trace.samples and trace.done == [] and len(trace.polls) > 10


def test_a_plan_and_a_measurement_are_values_that_cannot_be_changed_once_made():
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        EnergyPlan().windows = 2
    with pytest.raises(dataclasses.FrozenInstanceError):  # a measurement, once taken, neither
        energy.EnergyMeasurement((), "", None, (None, None), None).idle_w = 1.0


class BatchedMeter(energy.EnergyMeter):
    """A meter whose recordings give windows of the joules per launch listed per batch; nothing runs."""

    def __init__(self, batches):
        super().__init__(power=None)
        self.batches, self.asked = list(batches), []
        self._idle_w, self.idle_trace = 100.0, Trace()

    def _record(self, replay, busy_s, warm_s, clocks=None, throttle=None):
        self.asked.append((busy_s, warm_s))
        trace = Trace(warm_until=warm_s)
        trace.values = self.batches.pop(0)  # what windows_of cuts from it, below
        return trace


def cut(trace, ticks_per_window, count=None):
    """windows_of for a BatchedMeter's trace: one 0.5 s window of ten launches per listed value."""
    return [PowerWindow(i * 0.5, (i + 1) * 0.5, 10 * value, 10) for i, value in enumerate(trace.values[:count])]


class Power:
    def temperature_c(self):
        return 40.0

    def power_limit_w(self):
        return 700.0


THREE_THEN_SIX_MORE = EnergyPlan(windows=3, ticks_per_window=5, warm_s=0.3, extra_windows=6)


def measured(monkeypatch, batches, enough, plan=THREE_THEN_SIX_MORE):
    monkeypatch.setattr(energy, "windows_of", cut)
    meter = BatchedMeter(batches)
    meter.power = Power()
    return meter, meter.measure(lambda s: None, RefusingStream(), 0.02, plan, case="k", enough=enough)


def test_windows_that_miss_the_precision_rule_are_followed_by_more_batches_until_it_is_met(monkeypatch):
    rule_saw = []

    def enough(values):
        rule_saw.append(len(values))
        return len(values) >= 6

    meter, m = measured(monkeypatch, [[1.0, 1.07, 1.0], [1.0, 1.0, 1.0], [9.0, 9.0, 9.0]], enough)
    assert rule_saw == [3, 6] and len(m.windows) == 6 and m.windows_added == 3
    assert m.joules_per_launch == pytest.approx([1.0, 1.07, 1.0, 1.0, 1.0, 1.0], rel=1e-6)
    assert [warm for _, warm in meter.asked] == [0.3, 0.1]  # a batch after the first warms up for resume_s
    assert len(m.traces) == 2


def test_extra_windows_cap_the_batches_and_no_rule_means_no_batch(monkeypatch):
    meter, m = measured(monkeypatch, [[1.0] * 3, [1.0] * 3, [1.0] * 3, [1.0] * 3], lambda values: False)
    assert len(m.windows) == 9 and m.windows_added == 6 and len(meter.batches) == 1
    meter, m = measured(monkeypatch, [[1.0] * 3, [2.0] * 3], None)
    assert len(m.windows) == 3 and m.windows_added == 0 and len(meter.batches) == 1


def test_the_last_batch_asks_only_for_the_windows_left_under_the_cap(monkeypatch):
    plan = EnergyPlan(windows=4, ticks_per_window=5, warm_s=0.3, extra_windows=6)
    meter, m = measured(monkeypatch, [[1.0] * 4, [1.0] * 4, [1.0] * 2], lambda values: False, plan)
    assert m.windows_added == 6 and [warm for _, warm in meter.asked] == [0.3, 0.1, 0.1]
    assert meter.asked[2][0] == pytest.approx(plan.batch(2).busy_s)


class CapturingStream:
    """A stream whose capture gives a graph, as CUDA's does for the suite's own kernels."""

    def begin_capture(self):
        pass

    def end_capture(self):
        return types.SimpleNamespace(launch=lambda stream: None)


def test_the_replay_keeps_100_ms_of_work_queued_and_three_replays_at_least():
    assert Replay(lambda s: None, CapturingStream(), launch_s=5e-6).queued == 10  # ten graphs of 10 ms
    assert Replay(lambda s: None, CapturingStream(), launch_s=2.9e-3).queued == 12  # graphs of 3 launches
    assert Replay(lambda s: None, RefusingStream(), launch_s=0.05).queued == 3  # 50 ms launches: three


def test_host_launches_are_kept_under_the_drivers_queue_so_a_launch_never_blocks_the_poll_loop():
    assert energy.MAX_HOST_LAUNCHES == 512
    cublas_1000 = Replay(lambda s: None, RefusingStream(), launch_s=60e-6)  # 167 launches a replay
    assert (cublas_1000.per_launch, cublas_1000.queued) == (167, 3)
    cublas_4096 = Replay(lambda s: None, RefusingStream(), launch_s=2.7e-3)  # 4 a replay: 100 ms is 10
    assert (cublas_4096.per_launch, cublas_4096.queued) == (4, 10)
    tiny = Replay(lambda s: None, RefusingStream(), launch_s=5e-6)  # 2000 a replay: three replays still
    assert tiny.queued == 3


class WarmingPower(CountingPower):
    """CountingPower whose counter adds 90 J in each of its first two periods (a GPU still warm from its
    last work), 30 J a period after: 900 W, then 300 W."""

    def counter_mj(self):
        if not hasattr(self, "origin"):  # its clock starts at the first read
            self.origin = time.perf_counter()
        ticks = int((time.perf_counter() - self.origin) / COUNTER_PERIOD_S)
        return min(ticks, 2) * 90_000 + max(ticks - 2, 0) * 30_000


def test_the_idle_power_leaves_out_the_warm_up_before_its_first_window():
    from kernelwatch.timing.energy import EnergyMeter

    meter = EnergyMeter(WarmingPower())
    assert meter.idle_w() == pytest.approx(300.0, rel=0.03)  # the 900 W of the first 0.2 s not in it
    trace = meter.idle_trace
    assert trace.warm_until - trace.polls[0][0] == pytest.approx(0.2, abs=0.01)  # warm_s=0.2 from its start


def test_an_energy_ab_alternates_its_sides_in_periods_of_one_window_of_three_counter_periods(monkeypatch):
    cuts = []

    def recorded_cut(trace, ticks_per_window, count=None):
        cuts.append((ticks_per_window, count))
        return cut(trace, ticks_per_window, count)

    monkeypatch.setattr(energy, "windows_of", recorded_cut)
    # periods A B, B A, A B: the recordings' values in that order
    meter = BatchedMeter([[1.0], [2.0], [2.01], [1.01], [1.02], [2.02]])
    meter.power = Power()
    a, b = meter.measure_interleaved(lambda s: None, lambda s: None, RefusingStream(), 0.02, 0.02, 3, case="k")
    assert a.joules_per_launch == pytest.approx([1.0, 1.01, 1.02], rel=1e-6)
    assert b.joules_per_launch == pytest.approx([2.0, 2.01, 2.02], rel=1e-6)
    assert cuts == [(3, 1)] * 6  # one window of three counter periods (0.3 s on the H200) a period
    # each period: 0.1 s of warm-up, the window, a period to find the first change and one spare
    assert [busy for busy, _ in meter.asked] == pytest.approx([0.1 + 5 * COUNTER_PERIOD_S] * 6)
    assert [warm for _, warm in meter.asked] == [0.1] * 6


def test_a_temperature_nvml_refuses_is_none_and_the_power_limit_is_read_in_watts():
    nvml = FakeNvml()

    def refuse(handle, sensor):
        raise nvml.NVMLError("gone")

    nvml.nvmlDeviceGetTemperature = refuse
    nvml.nvmlDeviceGetEnforcedPowerLimit = lambda handle: 700_000
    power = NvmlPower(nvml, "handle")
    assert power.temperature_c() is None and power.power_limit_w() == 700.0


@pytest.mark.parametrize(("kind", "field"), list(enumerate(("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal"))))
def test_an_nvml_value_is_read_by_its_type(kind, field):
    value = types.SimpleNamespace(**{name: 0 for name in ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal")})
    setattr(value, field, 42)
    assert energy._number(value, kind) == 42.0


class UploadingStream(CapturingStream):
    """A capturing stream whose graph can be uploaded and launched, as CuPy's."""

    def __init__(self):
        self.calls = []

    def end_capture(self):
        return types.SimpleNamespace(launch=lambda stream: self.calls.append(("launch", stream)),
                                     upload=lambda stream: self.calls.append(("upload", stream)))


def test_a_captured_replay_is_uploaded_once_and_launched_as_one_graph():
    stream, launched = UploadingStream(), []
    replay = Replay(lambda s: launched.append(s), stream, launch_s=1e-3)
    assert replay.how == "a CUDA graph of 10 launches" and launched == [stream] * 10  # the capture's launches
    assert stream.calls == [("upload", stream)]
    replay.launch()
    assert stream.calls == [("upload", stream), ("launch", stream)] and len(launched) == 10
    # a graph keeps 100 ms of work queued however many launches that is: 0.1 / (10 x 1 ms) = 10
    assert replay.queued == 10


def test_launches_per_replay_round_the_10_ms_graph_and_queue_at_least_three():
    # 10 ms / 4 ms = 2.5: two a replay (rounded to even), ceil(0.1 / 8 ms) = 13 queued
    replay = Replay(lambda s: None, UploadingStream(), launch_s=4e-3)
    assert (replay.per_launch, replay.queued) == (2, 13)
    # 10 ms / 6 ms rounds to 2: ceil(0.1 / 12 ms) = 9
    assert (Replay(lambda s: None, UploadingStream(), launch_s=6e-3).queued) == 9
    # two launches a replay are already worth a graph
    assert Replay(lambda s: None, UploadingStream(), launch_s=4e-3).how == "a CUDA graph of 2 launches"
    assert Replay(lambda s: None, RefusingStream(), launch_s=0.0151).per_launch == 1  # 0.66 rounds to 1


def test_a_capture_failure_keeps_its_first_line_cut_to_120_characters():
    class LongRefusal(RefusingStream):
        def end_capture(self):
            raise ValueError("x" * 200 + "\nsecond line")

    replay = Replay(lambda s: None, LongRefusal(), launch_s=1e-3)
    assert replay.how == f"host launches, 10 per replay (no CUDA graph: ValueError: {'x' * 120})"


def test_a_batch_plan_keeps_the_ticks_warms_for_resume_s_and_asks_no_more():
    plan = EnergyPlan(windows=6, ticks_per_window=4, warm_s=0.5, extra_windows=12, resume_s=0.2)
    assert plan.batch(3) == EnergyPlan(windows=3, ticks_per_window=4, warm_s=0.2, extra_windows=0)
    assert plan.batch(3).busy_s == pytest.approx(0.2 + (3 * 4 + 2) * COUNTER_PERIOD_S)
    assert energy.DEFAULT_PLAN == EnergyPlan(windows=6, ticks_per_window=5, warm_s=0.3, extra_windows=18,
                                             resume_s=0.1)
    assert energy.PAIRED_PLAN == EnergyPlan(windows=1, ticks_per_window=3, warm_s=0.1)
    assert energy.PAIRED_PLAN.busy_s == pytest.approx(0.6)


def test_a_replay_without_a_window_names_a_case_without_a_name_and_counts_every_change():
    trace = Trace(polls=[(0.0, 1), (0.1, 2), (0.2, 2), (0.3, 3)], done=[])
    with pytest.raises(EnergyError, match=r"^a case: no energy window in its replay \(4 polls, 2 counter changes, "
                                          r"0 replays finished\)$"):
        energy._found([], trace, "")
    window = PowerWindow(0.0, 0.1, 30.0, 10)
    assert energy._found([window], trace, "") == (window,)


def test_samples_within_a_second_of_the_epoch_clock_are_on_it_and_a_second_off_are_not():
    assert energy._on_host_clock([(99_000_001, 1.0)], 0.0, 100.0)[1] == "epoch"
    assert energy._on_host_clock([(101_000_000 - 1, 1.0)], 0.0, 100.0)[1] == "epoch"
    placed, how = energy._on_host_clock([(99_000_000, 1.0), (98_000_000, 2.0)], 0.0, 100.0)
    assert how == "newest sample taken as now" and placed == [(100.0, 1.0), (99.0, 2.0)]


def test_a_measurements_launch_time_is_its_windows_seconds_over_their_launches():
    windows = (PowerWindow(0.0, 0.5, 1.0, 100), PowerWindow(0.5, 2.0, 1.0, 200))
    m = energy.EnergyMeasurement(windows, "r", None, (None, None), None)
    assert m.launch_s == pytest.approx(2.0 / 300) and m.joules_per_launch == [0.01, 0.005]


class Clock:
    """The `time` of kernelwatch.timing.energy, by hand: perf_counter from 1000 s, the epoch 1.7e9 s before
    it, and a sleep that moves it on by exactly what was asked (`stall_s` more, once, at `stall_at`: a
    host that hung in a driver call). A recording still going after ten seconds never ends: an error."""

    def __init__(self, stall_at: float | None = None, stall_s: float = 0.0):
        self.now, self.stall_at, self.stall_s = 1000.0, stall_at, stall_s

    def perf_counter(self):
        return self.now

    def time(self):
        return 1.7e9 + self.now

    def sleep(self, seconds):
        self.now += seconds
        if self.stall_at is not None and self.now >= self.stall_at:
            self.now, self.stall_at = self.now + self.stall_s, None
        if self.now > 1010.0:
            raise RuntimeError("the recording went on for ten seconds")


class ClockedPower(CountingPower):
    """CountingPower on a Clock (30 J every 100 ms: 300 W) that notes when NVML's samples were asked for;
    each answer is one sample stamped with the epoch's microseconds, as NVML's are."""

    def __init__(self, clock):
        self.clock, self.started, self.reads, self.since, self.asked_at = clock, clock.now, 0, [], []

    def counter_mj(self):
        return int((self.clock.now - self.started) / COUNTER_PERIOD_S) * 30_000

    def samples(self, since_us):
        self.asked_at.append(self.clock.now)
        return [(round(self.clock.time() * 1e6), 300.0)]


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(energy, "time", clock)
    return clock


def test_a_recording_asks_for_nvmls_samples_once_a_second_and_places_them_on_the_hosts_clock(clock):
    power = ClockedPower(clock)
    meter = energy.EnergyMeter(power)
    trace = meter._record(None, busy_s=2.5, warm_s=0.0)
    # NVML holds about 2.4 s of samples: asked at the start, every second, and once more after the last poll
    assert [at - 1000.0 for at in power.asked_at] == pytest.approx([0.0, 1.0, 2.0, 2.5], abs=1e-3)
    assert trace.samples_clock == "epoch"  # the samples' timestamps are the epoch's: placed by it
    assert [t for t, _ in trace.samples] == pytest.approx(power.asked_at, abs=1e-5)
    assert meter.seconds == pytest.approx(2.5, abs=1e-3)  # the recording's wall time
    meter._record(None, busy_s=0.5, warm_s=0.0)
    assert meter.seconds == pytest.approx(3.0, abs=2e-3)  # the recordings' times add up


def test_a_recording_reads_the_sm_clock_and_its_throttle_reasons_twice_a_second(clock, monkeypatch):
    read_at = []

    def clock_state():
        read_at.append(clock.now)
        return types.SimpleNamespace(sm_clock_mhz=1980 - len(read_at), throttle=(f"reason {len(read_at)}",))

    monkeypatch.setattr(energy, "clock_state", clock_state)
    clocks, throttle = [], set()
    energy.EnergyMeter(ClockedPower(clock))._record(None, busy_s=1.2, warm_s=0.0, clocks=clocks, throttle=throttle)
    assert [at - 1000.0 for at in read_at] == pytest.approx([0.0, 0.5, 1.0], abs=1e-3)
    assert clocks == [1979, 1978, 1977] and throttle == {"reason 1", "reason 2", "reason 3"}


def test_the_idle_power_is_measured_over_one_second_once_per_process(clock):
    meter = energy.EnergyMeter(ClockedPower(clock))
    assert meter.idle_w() == pytest.approx(300.0, rel=1e-3)
    assert meter.seconds == pytest.approx(1.0, abs=1e-3)
    polls = meter.idle_trace.polls
    assert polls[-1][0] - polls[0][0] == pytest.approx(1.0, abs=1e-3)
    assert meter.idle_w() == pytest.approx(300.0, rel=1e-3) and meter.seconds == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize(("readings", "changes"), [
    ([1, 2, 3], 2),  # each poll's reading against the one before
    ([int("123456789"), int("123456789")], 0),  # NVML's reads are new ints: equal is no change
    ([5000, 100], 1),  # a counter that started again (the driver reloaded) changed too
])
def test_a_replay_without_a_window_counts_the_counters_changes_between_consecutive_polls(readings, changes):
    trace = Trace(polls=[(0.1 * i, mj) for i, mj in enumerate(readings)])
    with pytest.raises(EnergyError, match=rf"\({len(readings)} polls, {changes} counter changes, 0 replays"):
        energy._found([], trace, "k")


def test_energy_needs_both_nvml_and_a_device_handle(monkeypatch):
    unavailable = (None, "NVML is not available (nvidia-ml-py missing, or no NVML device for this CUDA device)")
    monkeypatch.setattr(energy, "nvml_module", lambda: FakeNvml())
    monkeypatch.setattr(energy, "nvml_handle", lambda device=None: None)
    assert open_power() == unavailable  # NVML without a device for this CUDA device
    monkeypatch.setattr(energy, "nvml_module", lambda: None)
    monkeypatch.setattr(energy, "nvml_handle", lambda device=None: "handle")
    assert open_power() == unavailable
    monkeypatch.setattr(energy, "nvml_module", lambda: FakeNvml())
    power, why = open_power()
    assert why == "" and power.counter_mj() == 123456789


def test_a_measurement_without_its_conditions_says_nothing_waited_and_its_traces_stay_out_of_its_repr():
    m = energy.EnergyMeasurement((PowerWindow(0.0, 0.5, 150.0, 500.0),), "r", None, (None, None), None,
                                 traces=(Trace(polls=[(0.0, 1), (0.1, 2)]),))
    assert (m.starved_s, m.windows_added, m.sm_clock_mhz, m.throttle) == (0.0, 0, (), ())
    assert "traces" not in repr(m) and "polls" not in repr(m)  # thousands of polls: never printed


def test_a_cap_of_hundreds_of_extra_windows_stops_once_they_are_measured(monkeypatch):
    plan = EnergyPlan(windows=100, ticks_per_window=5, warm_s=0.3, extra_windows=300)
    meter, m = measured(monkeypatch, [[1.0] * 100] * 5, lambda values: False, plan)
    assert len(m.windows) == 400 and m.windows_added == 300 and len(meter.batches) == 1


class SerialGpu:
    """A GPU on a Clock that runs the replays one after another, `replay_s` each, and CuPy's events on it:
    an event is done once the work launched before it is, at once on an idle GPU."""

    def __init__(self, clock, replay_s):
        self.clock, self.replay_s, self.busy_until, self.events, self.starts = clock, replay_s, clock.now, [], []

    def run(self, stream):
        """One replay launched: it starts when the GPU is free or now, whichever is later."""
        self.starts.append(max(self.busy_until, self.clock.now))
        self.busy_until = self.starts[-1] + self.replay_s

    def Event(self):  # noqa: N802 (CuPy's name)
        return SerialGpu.Recorded(self)

    class Recorded:
        def __init__(self, gpu):
            self.gpu = gpu

        def record(self, stream):
            self.at = max(self.gpu.busy_until, self.gpu.clock.now)
            self.gpu.events.append(self)

        @property
        def done(self):
            return self.gpu.clock.now >= self.at


def busy_recording(monkeypatch, clock, busy_s=0.31, launch_s=0.02):
    """A recording of a replay of one launch of `launch_s` on a SerialGpu: (trace, gpu, meter)."""
    import sys

    gpu = SerialGpu(clock, launch_s)
    cuda = types.SimpleNamespace(Event=gpu.Event, get_elapsed_time=lambda first, event: (event.at - first.at) * 1e3)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    replay = Replay(gpu.run, RefusingStream(), launch_s=launch_s)
    assert replay.per_launch == 1 and replay.queued == math.ceil(energy.QUEUED_S / launch_s)
    meter = energy.EnergyMeter(ClockedPower(clock))
    return meter._record(replay, busy_s=busy_s, warm_s=0.0), gpu, meter


def test_a_busy_recording_sees_each_replay_done_at_the_next_poll_and_queues_none_after_its_time(monkeypatch, clock):
    trace, gpu, meter = busy_recording(monkeypatch, clock)
    # five replays of 20 ms queued until 0.31 s: the last of twenty done at 0.4 s, when the recording ends
    assert [count for _, _, count in trace.done] == list(range(1, 21)) and len(gpu.events) == 20
    assert gpu.events[-1].at == pytest.approx(1000.4) and meter.seconds == pytest.approx(0.4, abs=1e-3)
    assert all(0 <= seen - event.at <= energy.POLL_S * 1.01 for (seen, _, _), event in zip(trace.done, gpu.events,
                                                                                            strict=True))
    assert [gpu_s for _, gpu_s, _ in trace.done] == pytest.approx([0.02 * i for i in range(20)])
    assert trace.starved_s == 0.0  # five replays always queued: the GPU never waited


def test_no_replay_is_queued_at_the_very_end_of_the_busy_time(monkeypatch, clock):
    monkeypatch.setattr(energy, "POLL_S", 2**-12)  # polls on a binary grid: one lands exactly on every 1/64 s
    trace, gpu, _ = busy_recording(monkeypatch, clock, busy_s=20 / 64, launch_s=1 / 64)
    # seven replays of 1/64 s queued at 0; replay k + 7 at the poll that sees replay k done (k/64 s) while
    # that is before 20/64 s: the last, 26, at 19/64 s
    assert len(gpu.events) == 26 and gpu.events[-1].at == 1000.0 + 26 / 64


def idle_between_replays(gpu):
    """The SerialGpu's idle time between its first replay's start and its last one's end."""
    return sum(later - (earlier + gpu.replay_s) for earlier, later in zip(gpu.starts, gpu.starts[1:], strict=False))


def test_a_host_stall_that_runs_the_gpu_dry_counts_the_gpus_wait_until_more_is_queued(monkeypatch):
    clock = Clock(stall_at=1000.1, stall_s=0.15)
    monkeypatch.setattr(energy, "time", clock)
    trace, gpu, _ = busy_recording(monkeypatch, clock)
    # five replays of 20 ms kept queued: at the stall the GPU holds work until 0.18 s, and waits until the first
    # poll after the stall (0.1 s + a poll + 0.15 s) queues more
    assert trace.starved_s == pytest.approx(0.1 + energy.POLL_S + 0.15 - 0.18, abs=1e-9)
    assert trace.starved_s == pytest.approx(idle_between_replays(gpu), abs=1e-9)


class SlowPolls(Clock):
    """A host whose every poll takes 150 ms (NVML's calls running long): longer than the 100 ms kept queued."""

    def sleep(self, seconds):
        super().sleep(0.15)


def test_polls_slower_than_the_queued_work_count_every_wait_of_the_gpu():
    # each poll finds every replay done: the GPU waits 50 ms of every 150 ms, and each wait ends at a refill
    clock = SlowPolls()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(energy, "time", clock)
        trace, gpu, _ = busy_recording(monkeypatch, clock, busy_s=1.0)
    waits = idle_between_replays(gpu)
    assert waits == pytest.approx(0.05 * 6, abs=1e-9)  # refills at 0.15, 0.30, ..., 0.90 s: six waits
    assert trace.starved_s == pytest.approx(waits, abs=1e-9)


class _Event:
    """A CUDA event on the CPU: done 5 ms after it was recorded."""

    def record(self, stream):
        self.at = time.perf_counter() + 0.005

    @property
    def done(self):
        return time.perf_counter() >= self.at


def _fake_cupy(monkeypatch):
    import sys

    cuda = types.SimpleNamespace(Event=_Event, get_elapsed_time=lambda first, event: (event.at - first.at) * 1e3)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setattr(energy, "clock_state", lambda: types.SimpleNamespace(sm_clock_mhz=1980,
                                                                             throttle=("sw power cap",)))


def test_a_busy_recording_keeps_replays_queued_counts_their_launches_and_reads_the_clocks(monkeypatch):
    _fake_cupy(monkeypatch)
    launched = []
    replay = Replay(lambda s: launched.append(s), RefusingStream(), launch_s=0.02)  # one launch, five queued
    assert (replay.per_launch, replay.queued) == (1, 5)
    clocks, throttle = [], set()
    meter = energy.EnergyMeter(CountingPower())
    trace = meter._record(replay, busy_s=0.3, warm_s=0.1, clocks=clocks, throttle=throttle)
    counts = [count for _, _, count in trace.done]
    assert counts == list(range(1, len(launched) + 1)) and len(launched) > 5  # every replay's event, in order
    assert trace.done[0][1] == 0.0 and all(b[1] >= a[1] for a, b in zip(trace.done, trace.done[1:], strict=False))
    assert all(seen >= trace.polls[0][0] for seen, _, _ in trace.done)
    assert clocks and set(clocks) == {1980} and throttle == {"sw power cap"}
    # the five events come done together: the GPU waits for the host until the next are queued
    assert 0 < trace.starved_s < 0.3
    assert trace.warm_until - trace.polls[0][0] == pytest.approx(0.1, abs=0.01)
    assert meter.seconds >= 0.3
    assert meter.seconds < 5  # the recording's wall time, not a product of clock readings
    # POWER_INSTANT once per INSTANT_EVERY_S (5 ms), not at every poll (0.2 ms apart with a fake NVML)
    instants = [at for at, _ in trace.instant]
    assert len(instants) >= 5
    assert all(b - a >= 0.005 * 0.99 for a, b in zip(instants, instants[1:], strict=False))


@pytest.mark.slow  # a long replay of fake power readings: `tox -e unit` leaves it out, CI's slow pass runs it
def test_a_measurement_gives_the_windows_and_the_conditions_of_its_replay(monkeypatch):
    _fake_cupy(monkeypatch)
    meter = energy.EnergyMeter(CountingPower())
    m = meter.measure(lambda s: None, RefusingStream(), 0.02, EnergyPlan(windows=2, ticks_per_window=1, warm_s=0.05),
                      case="k")
    assert len(m.windows) == 2 and all(w.power_w == pytest.approx(300.0, rel=0.05) for w in m.windows)
    assert m.replay == "host launches, one per replay" and m.windows_added == 0 and len(m.traces) == 1
    assert (m.temperature_c, m.power_limit_w, m.throttle) == ((40.0, 40.0), 700.0, ("sw power cap",))
    assert set(m.sm_clock_mhz) == {1980} and m.idle_w == pytest.approx(300.0, rel=0.05)
    assert m.starved_s == m.traces[0].starved_s



class ConditionsMeter(BatchedMeter):
    """A BatchedMeter whose recordings read the clocks as `_polled` does (an SM clock and a throttle reason per
    recording, into the lists the caller gave) and wait `starved_s` each: 0.25 s, 0.5 s, 1 s, ..."""

    def __init__(self, batches):
        super().__init__(batches)
        self.recordings = 0

    def _record(self, replay, busy_s, warm_s, clocks=None, throttle=None):
        trace = super()._record(replay, busy_s, warm_s, clocks, throttle)
        self.recordings += 1
        clocks.append(2000 - self.recordings)
        throttle.update({f"reason {10 - self.recordings}", "sw power cap"})
        trace.starved_s = 0.125 * 2**self.recordings
        return trace


class WarmingUpPower(Power):
    """Power whose temperature climbs a degree at each read: before a case, then after it."""

    def __init__(self):
        self.reads = 0

    def temperature_c(self):
        self.reads += 1
        return 39.0 + self.reads


def test_a_measurement_keeps_every_batchs_clocks_throttle_reasons_and_waits_and_the_temperature_around_them(
        monkeypatch):
    monkeypatch.setattr(energy, "windows_of", cut)
    meter = ConditionsMeter([[1.0] * 3, [1.07] * 3, [1.0] * 3])
    meter.power = WarmingUpPower()
    m = meter.measure(lambda s: None, RefusingStream(), 0.02, THREE_THEN_SIX_MORE, case="k",
                      enough=lambda values: False)
    assert m.sm_clock_mhz == (1999, 1998, 1997)  # in the order read
    assert m.throttle == ("reason 7", "reason 8", "reason 9", "sw power cap")  # sorted, each once
    assert m.starved_s == 0.25 + 0.5 + 1.0  # every batch's wait
    assert m.temperature_c == (40.0, 41.0) and m.power_limit_w == 700.0 and m.idle_w == 100.0
    assert m.replay == "host launches, one per replay" and m.windows_added == 6 and len(m.traces) == 3
    assert [t.starved_s for t in m.traces] == [0.25, 0.5, 1.0]


def test_an_energy_abs_sides_share_the_clocks_and_the_temperatures_and_keep_their_own_waits(monkeypatch):
    monkeypatch.setattr(energy, "windows_of", cut)
    # periods A B, B A: recordings 1 and 4 are A's (0.25 + 2 s waited), 2 and 3 B's (0.5 + 1 s)
    meter = ConditionsMeter([[1.0], [2.0], [2.01], [1.01]])
    meter.power = WarmingUpPower()
    graph = Replay(lambda s: None, CapturingStream(), launch_s=1e-3)
    a, b = meter.measure_interleaved(lambda s: None, lambda s: None, CapturingStream(), 1e-3, 0.02, 2, case="k")
    assert (a.starved_s, b.starved_s) == (2.25, 1.5)
    assert a.replay == graph.how == "a CUDA graph of 10 launches" and b.replay == "host launches, one per replay"
    for side in (a, b):
        assert side.sm_clock_mhz == (1999, 1998, 1997, 1996)  # the periods of both sides, in order
        assert side.throttle == ("reason 6", "reason 7", "reason 8", "reason 9", "sw power cap")
        assert side.temperature_c == (40.0, 41.0) and side.power_limit_w == 700.0 and side.idle_w == 100.0
    assert a.joules_per_launch == pytest.approx([1.0, 1.01], rel=1e-6)
    assert b.joules_per_launch == pytest.approx([2.0, 2.01], rel=1e-6)


def test_an_energy_abs_sides_added_no_windows_and_keep_their_traces(monkeypatch):
    """measure_interleaved once passed its traces as a ninth positional field, windows_added: the A/B's energy
    block then held Trace objects that json cannot write."""
    from kernelwatch.verdict.energy import energy_block

    monkeypatch.setattr(energy, "windows_of", cut)
    meter = BatchedMeter([[1.0], [2.0], [2.01], [1.01]])
    meter.power = Power()
    a, b = meter.measure_interleaved(lambda s: None, lambda s: None, RefusingStream(), 0.02, 0.02, 2, case="k")
    assert (a.windows_added, b.windows_added) == (0, 0)
    assert (len(a.traces), len(b.traces)) == (2, 2)
    json.dumps([energy_block(a), energy_block(b)])  # what the record, the store and an xdist worker send


@pytest.mark.parametrize("extra_windows", [0, -1])
def test_a_plan_without_extra_windows_measures_one_batch_whatever_the_rule_says(monkeypatch, extra_windows):
    plan = EnergyPlan(windows=3, ticks_per_window=5, warm_s=0.3, extra_windows=extra_windows)
    meter, m = measured(monkeypatch, [[1.0] * 3, [2.0] * 3, [3.0] * 3], lambda values: False, plan)
    assert len(m.windows) == 3 and m.windows_added == 0 and len(meter.batches) == 2 and len(meter.asked) == 1


def test_a_rule_met_by_the_first_batch_asks_for_no_more_and_sees_its_joules_per_launch(monkeypatch):
    saw = []
    meter, m = measured(monkeypatch, [[1.0, 1.5, 2.0], [9.0] * 3], lambda values: saw.append(values) or True)
    assert saw == [pytest.approx([1.0, 1.5, 2.0], rel=1e-9)] and m.windows_added == 0 and len(meter.asked) == 1


class HeldSamplesPower(ClockedPower):
    """ClockedPower whose NVML gives two samples at its first read, newest first, and at every later read a
    sample with the newer one's timestamp and another reading (a sample read again as it was rewritten)."""

    def samples(self, since_us):
        self.asked_at.append(self.clock.now)
        stamp = round(self.clock.time() * 1e6)
        held = [(stamp - 200_000, 310.0), (stamp - 400_000, 290.0)] if len(self.asked_at) == 1 else []
        return held + ([(self.first - 200_000, 315.0)] if len(self.asked_at) > 1 else [])

    @property
    def first(self):
        return round((1.7e9 + self.asked_at[0]) * 1e6)


def test_a_recordings_samples_are_one_per_timestamp_in_time_order_the_newest_reading_kept(clock):
    power = HeldSamplesPower(clock)
    trace = energy.EnergyMeter(power)._record(None, busy_s=0.3, warm_s=0.0)
    start = power.asked_at[0] - 1000.0
    assert trace.samples_clock == "epoch"
    assert [(round(t - 1000.0 - start, 6), w) for t, w in trace.samples] == [(-0.4, 290.0), (-0.2, 315.0)]


def test_polls_are_timed_at_the_middle_of_their_read_and_instant_power_every_5_ms(clock):
    class SlowCounter(ClockedPower):
        def counter_mj(self):
            self.clock.now += 0.002  # the read takes 2 ms
            return super().counter_mj()

    trace = energy.EnergyMeter(SlowCounter(clock))._record(None, busy_s=0.02, warm_s=0.0)
    # each poll: the read (2 ms) and a sleep of 0.2 ms; the poll is placed 1 ms into its read
    assert [t - 1000.0 for t, _ in trace.polls[:3]] == pytest.approx([0.001, 0.0032, 0.0054], abs=1e-9)
    # POWER_INSTANT at the first poll and then at the first poll 5 ms after the last read (CountingPower: every
    # other read refused): reads at 0, 6.6 ms and 13.2 ms, the second refused
    assert [t - 1000.0 for t, _ in trace.instant] == pytest.approx([0.0, 0.0132], abs=1e-9)
    # polls start every 2.2 ms: the last is the first to start at or past busy_s (22 ms), placed 1 ms into its read
    assert trace.polls[-1][0] - 1000.0 == pytest.approx(0.022 + 0.001, abs=1e-9) and len(trace.polls) == 11


def test_a_recording_without_clocks_to_keep_never_reads_them(clock, monkeypatch):
    monkeypatch.setattr(energy, "clock_state", lambda: pytest.fail("the clocks were read"))
    energy.EnergyMeter(ClockedPower(clock))._record(None, busy_s=0.6, warm_s=0.0)


def test_an_sm_clock_nvml_cannot_read_is_left_out_and_its_throttle_reasons_kept(clock, monkeypatch):
    states = iter([(None, ("hw slowdown",)), (1500, ())])
    monkeypatch.setattr(energy, "clock_state", lambda: types.SimpleNamespace(
        **dict(zip(("sm_clock_mhz", "throttle"), next(states), strict=True))))
    clocks, throttle = [], set()
    energy.EnergyMeter(ClockedPower(clock))._record(None, busy_s=0.6, warm_s=0.0, clocks=clocks, throttle=throttle)
    assert clocks == [1500] and throttle == {"hw slowdown"}
