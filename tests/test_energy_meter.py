"""harness.timing.energy on the CPU: NVML's readings read right, the samples' clock, the replay's fallback, the plan."""

from __future__ import annotations

import time
import types

import pytest

import harness.timing.energy as energy
from harness.timing.energy import EnergyError, EnergyPlan, NvmlPower, Replay, open_power
from harness.timing.power_trace import COUNTER_PERIOD_S, Trace, Window


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
    from harness.timing.energy import EnergyMeter

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
    return [Window(i * 0.5, (i + 1) * 0.5, 10 * value, 10) for i, value in enumerate(trace.values[:count])]


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
    from harness.timing.energy import EnergyMeter

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
    window = Window(0.0, 0.1, 30.0, 10)
    assert energy._found([window], trace, "") == (window,)


def test_samples_within_a_second_of_the_epoch_clock_are_on_it_and_a_second_off_are_not():
    assert energy._on_host_clock([(99_000_001, 1.0)], 0.0, 100.0)[1] == "epoch"
    assert energy._on_host_clock([(101_000_000 - 1, 1.0)], 0.0, 100.0)[1] == "epoch"
    placed, how = energy._on_host_clock([(99_000_000, 1.0), (98_000_000, 2.0)], 0.0, 100.0)
    assert how == "newest sample taken as now" and placed == [(100.0, 1.0), (99.0, 2.0)]


def test_a_measurements_launch_time_is_its_windows_seconds_over_their_launches():
    windows = (Window(0.0, 0.5, 1.0, 100), Window(0.5, 2.0, 1.0, 200))
    m = energy.EnergyMeasurement(windows, "r", None, (None, None), None)
    assert m.launch_s == pytest.approx(2.0 / 300) and m.joules_per_launch == [0.01, 0.005]


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
