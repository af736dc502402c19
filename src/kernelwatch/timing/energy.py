"""Energy of a launch: a case replayed back to back while NVML's energy counter is polled.

After a case is timed, `EnergyMeter.measure` replays its launch back to back for
a few seconds: as one CUDA graph of many launches where the launch is short (so
that the GPU never waits for the host between kernels; about `GRAPH_S` of GPU
work per graph, `QUEUED_S` of work kept queued), else launch by launch. Meanwhile
the host polls the energy counter, reads POWER_INSTANT every few milliseconds
and NVML's 50 Hz power samples every second, and records an event after each
replay (src/kernelwatch/timing/power_trace.py cuts the windows from that trace). The
inputs are the case's own, fixed and seeded: power depends on the data.

Where the caller gives a precision rule (`enough`; src/kernelwatch/verdict/energy.py's `precise_enough`), a
measurement whose first windows miss it gets more windows of the same replay, `plan.windows` at a time,
up to `plan.extra_windows`: one window's real excursion (7% high on an H200) then weighs less.

Idle power is read once per process over a second with nothing queued, and the
GPU's temperature before and after each case, its SM clock and clock-event
reasons during it, and its enforced power limit go with each measurement.

`measure_interleaved` gives two launches' energies from alternating periods
(A B B A A B ...: a linear drift of temperature cancels within each pair of
pairs), for a same-run comparison.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field

from kernelwatch.timing.gpu import clock_state, nvml_handle, nvml_module
from kernelwatch.timing.power_trace import COUNTER_PERIOD_S, PowerWindow, Trace, idle_power, windows_of

GRAPH_S = 0.01  # GPU time of one replayed graph
# Replays kept queued ahead of the GPU: 100 ms of its work and at least three. With 30 ms (three
# graphs of 10 ms) the GPU waited for the host 0.08-0.15 s of a 3.5 s replay of the 1024² adds and
# cuBLAS 1000³ on an H200 (the poll loop's NVML calls for the 50 Hz samples and the clocks take that
# long at times), which adds idle energy to their windows (docs/method.md#energy-queue)
QUEUED = 3
QUEUED_S = 0.1
# Host launches (cuBLAS, which CuPy will not capture) are kept to this many queued kernels: past the
# driver's queue a launch call blocks the poll loop and the windows' ends come a few ms off (ten replays
# of 167 cuBLAS 1000³ launches: ±0.76% became ±1.61%; docs/method.md#energy-queue).
MAX_HOST_LAUNCHES = 512
POLL_S = 2e-4  # the poll loop's sleep; NVML's calls make a poll take about 3 ms on the H200
INSTANT_EVERY_S = 0.005
SAMPLES_EVERY_S = 1.0  # NVML holds about 2.4 s of its 50 Hz samples
CLOCKS_EVERY_S = 0.5
IDLE_S = 1.0


@dataclass(frozen=True)
class EnergyPlan:
    """How long a case is replayed: `warm_s` before the first window, then `windows` windows of
    `ticks_per_window` counter periods each; where the caller's precision rule says no, up to
    `extra_windows` more (`windows` at a time, each batch after `resume_s` of warm-up)."""

    windows: int = 6
    ticks_per_window: int = 5
    warm_s: float = 0.3
    extra_windows: int = 0
    resume_s: float = 0.1  # the GPU idled for the host's few ms between two batches: warm it again

    def batch(self, windows: int) -> EnergyPlan:
        """The plan of one more batch of `windows` windows."""
        return EnergyPlan(windows=windows, ticks_per_window=self.ticks_per_window, warm_s=self.resume_s)

    @property
    def busy_s(self) -> float:
        """The replay's length: the windows, the warm-up, a period to find the first change and one spare."""
        return self.warm_s + (self.windows * self.ticks_per_window + 2) * COUNTER_PERIOD_S


# at most 18 more windows (6.6 s more): one window 7% off among 24 leaves a 95% interval of about ±0.7%
DEFAULT_PLAN = EnergyPlan(extra_windows=18)
PAIRED_PLAN = EnergyPlan(windows=1, ticks_per_window=3, warm_s=0.1)  # one period of an interleaved comparison


@dataclass(frozen=True)
class EnergyMeasurement:
    """One case's energy windows and the conditions they were taken in."""

    windows: tuple[PowerWindow, ...]
    replay: str  # how the launch was replayed, in words
    idle_w: float | None
    temperature_c: tuple[float | None, float | None]  # before, after
    power_limit_w: float | None
    sm_clock_mhz: tuple[int, ...] = ()
    throttle: tuple[str, ...] = ()
    starved_s: float = 0.0
    windows_added: int = 0  # windows measured after the first batch because it missed the precision rule
    traces: tuple[Trace, ...] = field(default=(), repr=False)  # kept for tests/data/energy, never stored

    @property
    def joules_per_launch(self) -> list[float]:
        return [window.joules_per_launch for window in self.windows]

    @property
    def launch_s(self) -> float:
        return sum(w.seconds for w in self.windows) / sum(w.launches for w in self.windows)


class NvmlPower:
    """NVML's energy counter, instant power, power samples and temperature of one GPU."""

    def __init__(self, nvml, handle):
        self.nvml, self.handle = nvml, handle

    def counter_mj(self) -> int:
        return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))

    def instant_w(self) -> float | None:
        value = self.nvml.nvmlDeviceGetFieldValues(self.handle, [self.nvml.NVML_FI_DEV_POWER_INSTANT])[0]
        return None if value.nvmlReturn else _number(value.value, value.valueType) / 1e3

    def samples(self, since_us: int) -> list[tuple[int, float]]:
        """(timestamp µs, W) of NVML's power samples newer than `since_us` (0: every one it holds)."""
        try:
            kind, samples = self.nvml.nvmlDeviceGetSamples(self.handle, self.nvml.NVML_TOTAL_POWER_SAMPLES, since_us)
        except self.nvml.NVMLError:  # NVML_ERROR_NOT_FOUND: no sample newer than since_us
            return []
        return [(int(s.timeStamp), _number(s.sampleValue, kind) / 1e3) for s in samples]

    def temperature_c(self) -> float | None:
        try:
            return float(self.nvml.nvmlDeviceGetTemperature(self.handle, self.nvml.NVML_TEMPERATURE_GPU))
        except self.nvml.NVMLError:
            return None

    def power_limit_w(self) -> float | None:
        try:
            return self.nvml.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1e3
        except self.nvml.NVMLError:
            return None


def _number(value, kind: int) -> float:
    """An NVML value union read by its type (nvmlValueType_t: double, uint, ulong, ulonglong, slonglong, sint)."""
    return float(getattr(value, ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal")[kind]))


class Replay:
    """`run(stream)` many times per `launch()`: one CUDA graph where it can be captured, else host launches."""

    def __init__(self, run, stream, launch_s: float):
        self.run, self.stream = run, stream
        self.per_launch = max(1, round(GRAPH_S / launch_s))
        self.queued = max(QUEUED, math.ceil(QUEUED_S / (self.per_launch * launch_s)))
        self.graph = None
        self.how = "host launches, one per replay"
        if self.per_launch > 1:
            self.graph, why_not = _captured(run, stream, self.per_launch)
            self.how = (f"a CUDA graph of {self.per_launch} launches" if self.graph is not None else
                        f"host launches, {self.per_launch} per replay (no CUDA graph: {why_not})")
        if self.graph is None:
            self.queued = max(QUEUED, min(self.queued, MAX_HOST_LAUNCHES // self.per_launch))

    def launch(self) -> None:
        if self.graph is not None:
            self.graph.launch(self.stream)
            return
        for _ in range(self.per_launch):
            self.run(self.stream)


def _captured(run, stream, count: int):
    """(the graph of `count` launches of `run` on `stream`, "") or (None, why it could not be captured)."""
    try:
        stream.begin_capture()
        try:
            for _ in range(count):
                run(stream)
        finally:
            graph = stream.end_capture()
        if hasattr(graph, "upload"):  # where CuPy has it: the graph is on the GPU before its first launch
            graph.upload(stream)
        return graph, ""
    except Exception as error:  # a launch that cannot be captured (a host sync, a library that refuses)
        stream.synchronize()
        return None, f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"


def open_power(cuda_device: int | None = None) -> tuple[NvmlPower | None, str]:
    """(NVML's power readings of the CUDA device, "") or (None, why energy cannot be measured here)."""
    nvml, handle = nvml_module(), nvml_handle(cuda_device)
    if nvml is None or handle is None:
        return None, "NVML is not available (nvidia-ml-py missing, or no NVML device for this CUDA device)"
    power = NvmlPower(nvml, handle)
    try:
        power.counter_mj()
    except nvml.NVMLError as error:
        return None, f"this GPU has no NVML energy counter ({error})"
    return power, ""


class EnergyError(RuntimeError):
    """A replay gave no energy window: the counter did not change, or the GPU's work did not cover a window."""


def _found(windows: list[PowerWindow], trace: Trace, case: str) -> tuple[PowerWindow, ...]:
    if not windows:
        changes = sum(1 for a, b in zip(trace.polls, trace.polls[1:], strict=False) if a[1] != b[1])
        raise EnergyError(f"{case or 'a case'}: no energy window in its replay ({len(trace.polls)} polls, "
                          f"{changes} counter changes, {len(trace.done)} replays finished)")
    return tuple(windows)


class EnergyMeter:
    """Measures energy on one GPU through NVML (`power`: an NvmlPower, or a stand-in with its methods)."""

    def __init__(self, power):
        self.power = power
        self._idle_w: float | None = None
        self.idle_trace: Trace | None = None
        self.seconds = 0.0  # wall time spent measuring so far, idle power included

    def idle_w(self) -> float | None:
        """The GPU's power with nothing queued, over IDLE_S (once per process)."""
        if self.idle_trace is None:
            self.idle_trace = self._record(None, IDLE_S, warm_s=0.2)
            self._idle_w = idle_power(self.idle_trace)
        return self._idle_w

    def measure(self, run, stream, launch_s: float, plan: EnergyPlan = DEFAULT_PLAN, case: str = "",
                enough=None) -> EnergyMeasurement:
        """Energy windows of `run(stream)` replayed back to back (`launch_s`: its GPU time, from the timer),
        extended while `enough(joules per launch of the windows so far)` is false (see the module's
        docstring). EnergyError (naming `case`) where a batch of the replay spanned no whole window."""
        idle = self.idle_w()
        replay = Replay(run, stream, launch_s)
        before = self.power.temperature_c()
        clocks: list[int] = []
        throttle: set[str] = set()
        trace = self._record(replay, plan.busy_s, plan.warm_s, clocks, throttle)
        windows = list(_found(windows_of(trace, plan.ticks_per_window, plan.windows), trace, case))
        traces, asked, first = [trace], 0, len(windows)
        while enough is not None and asked < plan.extra_windows and not enough([w.joules_per_launch for w in windows]):
            batch = plan.batch(min(plan.windows, plan.extra_windows - asked))
            asked += batch.windows
            trace = self._record(replay, batch.busy_s, batch.warm_s, clocks, throttle)
            windows += _found(windows_of(trace, batch.ticks_per_window, batch.windows), trace, case)
            traces.append(trace)
        return EnergyMeasurement(tuple(windows), replay.how, idle,
                                 (before, self.power.temperature_c()), self.power.power_limit_w(), tuple(clocks),
                                 tuple(sorted(throttle)), sum(t.starved_s for t in traces), len(windows) - first,
                                 tuple(traces))

    def measure_interleaved(self, run_a, run_b, stream, launch_a_s: float, launch_b_s: float, pairs: int,
                            plan: EnergyPlan = PAIRED_PLAN, case: str = "") -> tuple[EnergyMeasurement, EnergyMeasurement]:
        """Energies of two launches from `pairs` pairs of alternating periods, A B, B A, A B, ..."""
        idle = self.idle_w()
        replays = (Replay(run_a, stream, launch_a_s), Replay(run_b, stream, launch_b_s))
        before = self.power.temperature_c()
        found: tuple[list, list] = ([], [])
        traces: tuple[list, list] = ([], [])
        clocks: list[int] = []
        throttle: set[str] = set()
        for pair in range(pairs):
            for side in ((0, 1) if pair % 2 == 0 else (1, 0)):
                trace = self._record(replays[side], plan.busy_s, plan.warm_s, clocks, throttle)
                found[side].extend(_found(windows_of(trace, plan.ticks_per_window, plan.windows), trace, case))
                traces[side].append(trace)
        after = self.power.temperature_c()
        return tuple(EnergyMeasurement(tuple(found[side]), replays[side].how, idle, (before, after),
                                       self.power.power_limit_w(), tuple(clocks), tuple(sorted(throttle)),
                                       sum(t.starved_s for t in traces[side]), traces=tuple(traces[side]))
                     for side in (0, 1))

    def _record(self, replay: Replay | None, busy_s: float, warm_s: float, clocks: list | None = None,
                throttle: set | None = None) -> Trace:
        """Poll NVML for `busy_s` while `replay` (None: nothing) keeps `replay.queued` replays ahead of the GPU."""
        started = time.perf_counter()
        try:
            return self._polled(replay, busy_s, warm_s, clocks, throttle)
        finally:
            self.seconds += time.perf_counter() - started

    def _polled(self, replay: Replay | None, busy_s: float, warm_s: float, clocks: list | None,
                throttle: set | None) -> Trace:
        import cupy

        power = self.power
        trace = Trace()
        queue: deque = deque()
        events: list = []
        launches = 0
        epoch = time.time() - time.perf_counter()  # the host's two clocks, to place NVML's samples
        started = time.perf_counter()
        trace.warm_until = started + warm_s
        next_instant = next_samples = next_clocks = started
        raw_samples: list[tuple[int, float]] = []
        waits: list = []  # (the event after the last replay done, an event before the next): the GPU's waits
        while True:
            now = time.perf_counter()
            while queue and queue[0][0].done:
                event, count = queue.popleft()
                events.append((now, event, count))
            if replay is not None:
                if now < started + busy_s:
                    if not queue and events:  # every queued replay done: the GPU waits until the stream gets more
                        resumed = cupy.cuda.Event()
                        resumed.record(replay.stream)  # the idle stream reaches it at once
                        waits.append((events[-1][1], resumed))
                    while len(queue) < replay.queued:
                        replay.launch()
                        launches += replay.per_launch
                        event = cupy.cuda.Event()
                        event.record(replay.stream)
                        queue.append((event, launches))
            before = time.perf_counter()  # the read is timed where it happens, not at the loop's start
            reading_mj = power.counter_mj()
            trace.polls.append(((before + time.perf_counter()) / 2, reading_mj))
            if now >= next_instant:
                reading = power.instant_w()
                if reading is not None:
                    trace.instant.append((now, reading))
                next_instant = now + INSTANT_EVERY_S
            if now >= next_samples:  # all NVML holds (about 2.4 s): its timestamps' clock is placed below
                raw_samples += power.samples(0)
                next_samples = now + SAMPLES_EVERY_S
            if clocks is not None and now >= next_clocks:
                state = clock_state()
                if state.sm_clock_mhz is not None:
                    clocks.append(state.sm_clock_mhz)
                throttle.update(state.throttle)
                next_clocks = now + CLOCKS_EVERY_S
            if now >= started + busy_s and not queue:
                break
            time.sleep(POLL_S)
        raw_samples = sorted(dict(raw_samples + power.samples(0)).items())  # one reading per timestamp
        if events:
            first = events[0][1]
            trace.done = [(seen, cupy.cuda.get_elapsed_time(first, event) / 1e3, count)
                          for seen, event, count in events]
        # on the GPU's clock: a poll that runs long (NVML's calls) cannot hide a wait or stretch it, as the host's could
        trace.starved_s = sum(cupy.cuda.get_elapsed_time(done, resumed) for done, resumed in waits) / 1e3
        trace.samples, trace.samples_clock = _on_host_clock(raw_samples, epoch, time.perf_counter())
        return trace


def _on_host_clock(samples: list[tuple[int, float]], epoch: float, now: float) -> tuple[list, str]:
    """NVML's samples (µs timestamps) on the host's perf_counter clock: their timestamps are the
    epoch's microseconds; where they read more than a second off it, the newest is taken as now."""
    if not samples:
        return [], "none"
    newest = max(t for t, _ in samples) / 1e6
    if abs(newest - (epoch + now)) < 1.0:
        return [(t / 1e6 - epoch, w) for t, w in samples], "epoch"
    return [(t / 1e6 - newest + now, w) for t, w in samples], "newest sample taken as now"
