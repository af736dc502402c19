"""GPU time of a launch: CUPTI's activity records where it works, held CUDA events where not.

Each sample, as nvbench takes it:
1. flushes the L2 cache by reading a buffer twice its size (reading leaves
   clean lines; a write-flush would leave dirty ones for the timed kernel
   to evict),
2. queues a kernel that holds the stream until the host releases it, then
   the start event, the launch under test and the stop event; the host
   releases the stream only after all of them are queued, so launch latency
   and Python overhead stay out of the figure,
3. reads the events' elapsed time.

With CUPTI (NVIDIA's cupti-python, src/kernelwatch/timing/cupti.py) the sample's
figure is instead the span from the first kernel/memcpy/memset start to the
last end of the launch under test, as the GPU recorded them
(src/kernelwatch/timing/spans.py). The held events carry a fixed cost per sample that
differs between hosts of one GPU model (2.6-4.2 µs on three H200 hosts,
docs/method.md#event-timer-cost); the activity records do not. The event times are kept beside
the spans (`Measurement.event_samples`) for comparison. Whether CUPTI is
used is decided once, when the `GpuTimer` is made, and said in `uses_cupti`
and `note`.

CUPTI records kernels in one of two kinds (src/kernelwatch/timing/cupti.py), and
the timer picks one per case from its warm-up samples, which it records with
the CONCURRENT_KERNEL kind:
- a launch whose activities never overlap (one stream's work) and whose
  median warm-up span is SERIAL_KIND_FROM (20 µs) or more is timed with the
  KERNEL kind (TIMER_CUPTI_KERNEL): it leaves the kernel's code alone, and
  the launch handling it takes in (up to 0.8 µs different between hosts) is
  small beside the kernel;
- anything shorter, or overlapping (the streams pipeline), with the
  CONCURRENT_KERNEL kind (TIMER_CUPTI): its timestamps read alike on every
  host, which a 5 µs kernel needs, and it keeps overlapping work overlapped.
Each Measurement names the timer that took it; the verdicts compare only
figures of one timer. A case whose warm-up sits right at 20 µs may be timed
by one kind in one run and the other in the next; its verdict then reads
"other timer" rather than a ratio of two timers.

Sampling stops on noise rather than a fixed count: once at least
`min_samples` samples and `min_time` seconds of GPU time are in (at least
`host_copy_min_time` for a launch that copies to or from host memory, whose
median drifts over seconds) and their relative standard deviation is under
`target_rsd` (nvbench: 0.5%); or, for a case never that quiet, once the
standard error of their median is `target_median_se` (0.2%) and they span
`min_time` of wall clock; or when the case's wall-clock cap is reached with at least `min_samples_before_cap`
samples in (2 for one case, paired.MIN_PAIRS pairs for an interleaved
comparison, whose verdict needs that many). The rule judges the active timer's
samples. NVML's clock event reasons are read around the samples; a
measurement during which the GPU was throttled for heat or power is retaken
once and flagged if it still was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernelwatch.timing.cupti import FALLBACK, open_recorder
from kernelwatch.timing.gpu import clock_state
from kernelwatch.timing.phases import PhaseRecorder
from kernelwatch.timing.profile import MIN_PAIRS, Profile
from kernelwatch.timing.spans import TimingError, crosses_to_the_host, runs_one_at_a_time, sample_activities, span

__all__ = ["SERIAL_KIND_FROM", "TIMER_CUPTI", "TIMER_CUPTI_KERNEL", "TIMER_EVENTS", "TIMER_WALL",
           "GpuTimer", "Measurement", "TimingError"]

HOLD_TIMEOUT_NS = 2_000_000_000  # the hold kernel gives up after 2 s rather than hang
KERNEL_SOURCE = Path(__file__).with_name("kernels.cu")

TIMER_CUPTI = "cupti concurrent kernel"  # CUPTI's CONCURRENT_KERNEL activity kind
TIMER_CUPTI_KERNEL = "cupti kernel"  # CUPTI's KERNEL activity kind (serializes kernels)
# From this GPU time up, a launch of one stream's work is timed with the KERNEL kind: launch
# handling of up to 0.8 µs more on one host than another is then at most 4%, and from 40 µs
# up under 2%. Below it the CONCURRENT_KERNEL kind reads 0.6-1.15 µs less than Nsight Compute
# (which counts that handling), about the 1 µs a case under 20 µs is judged by (docs/method.md#cupti-kernel-kinds).
SERIAL_KIND_FROM = 20e-6
TIMER_EVENTS = "cuda events"
TIMER_WALL = "wall clock"

# CUPTI flushes once the minimum count is in: after at least COLLECT_EVERY more samples, and at
# least a quarter more than were in at the last one (see GpuTimer._sample_until_stable).
COLLECT_EVERY = 10
COLLECT_GROWTH = 4


@dataclass
class Measurement:
    """The samples of one case (seconds), which timer took them, and how sampling went."""

    samples: list[float]  # the timer's: CUPTI spans, held-event times or wall clock
    stopped_by: str  # "noise", "precision", "time cap" or "max samples" (profile.RelativeNoiseCriterion)
    throttle: list[str] = field(default_factory=list)  # NVML heat/power reasons seen
    sm_clock_mhz: list[int] = field(default_factory=list)  # SM clocks read during sampling
    retaken: bool = False
    timer: str = TIMER_EVENTS  # one of the TIMER_* names above
    event_samples: list[float] = field(default_factory=list)  # the held events' times of the same samples
    host_copies: bool | None = None  # CUPTI saw copies between host and device memory; None: unknown (no CUPTI)
    launched_kernels: tuple[str, ...] = ()  # the kernels CUPTI saw the launch run, first seen first (none without CUPTI)
    phases: dict[str, list[float]] = field(default_factory=dict)  # a host routine's, per sample (timing/phases.py)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def rsd(self) -> float:
        """Relative standard deviation of the samples."""
        if len(self.samples) < 2:
            return 0.0
        return statistics.stdev(self.samples) / statistics.fmean(self.samples)


def _collection_due(rounds: int, pending: int, started: float, profile: Profile, last_sample_s: float = 0.0) -> bool:
    """Whether to flush CUPTI now: the stop rule can only be judged on collected spans (a launch
    of `long_sample_s` or more, by its last held-event time, after every round from
    `min_samples_long` on: a flush costs milliseconds, such a sample tens of them)."""
    long = last_sample_s >= profile.long_sample_s and rounds >= profile.min_samples_long
    return (long or pending >= max(COLLECT_EVERY, (rounds - pending) // COLLECT_GROWTH) or rounds == profile.min_samples
            or rounds >= profile.max_samples
            or (time.perf_counter() - started > profile.time_cap and rounds >= profile.min_samples_before_cap))


@functools.cache
def _timer_module(device_id: int):
    """The timer's own kernels, built with NVRTC for one device (no dependency on the project's kernels)."""
    import cupy

    return cupy.RawModule(code=KERNEL_SOURCE.read_text(), options=("-std=c++17",), backend="nvrtc")


class GpuTimer:
    """Times launches on one device: a held stream, a flushed L2, CUPTI spans or CUDA events.

    `uses_cupti` says whether CUPTI times the launches (each Measurement's
    `timer` says with which kind); `note` is "" with CUPTI, else one line
    saying why not. `prefer_cupti=False` asks for the event timer.
    """

    def __init__(self, l2_bytes: int, prefer_cupti: bool = True):
        self._open_device(l2_bytes)
        if prefer_cupti:
            self._recorder, self.note = open_recorder()
        else:
            self._recorder, self.note = None, f"CUPTI not asked for; {FALLBACK}"

    @property
    def uses_cupti(self) -> bool:
        return self._recorder is not None

    def _open_device(self, l2_bytes: int) -> None:
        import cupy

        self.stream = cupy.cuda.Stream(non_blocking=True)
        self._start, self._stop = cupy.cuda.Event(), cupy.cuda.Event()
        # word 0: release flag written by the host; word 1: set by the hold kernel on timeout.
        # Mapped pinned memory: with unified addressing the kernel reads the host pointer.
        memory = cupy.cuda.PinnedMemory(8, cupy.cuda.runtime.hostAllocMapped)
        self._flags_memory = cupy.cuda.PinnedMemoryPointer(memory, 0)
        self._flags = np.frombuffer(self._flags_memory, np.int32, 2)
        self._flags_ptr = self._flags_memory.ptr
        flush_floats = max(2 * l2_bytes, 64 * 2**20) // 4
        self._flush_buffer = cupy.ones(flush_floats, np.float32)
        self._sink = cupy.zeros(1, np.float32)
        module = _timer_module(cupy.cuda.Device().id)
        self._hold = module.get_function("hold_stream")
        self._flush = module.get_function("flush_l2")
        self._mark = module.get_function("mark_sample")
        self._flush_grid = (4 * cupy.cuda.Device().attributes["MultiProcessorCount"], 1, 1)

    def phase_recorder(self) -> PhaseRecorder | None:
        """What cuts a host routine's samples into phases (src/kernelwatch/timing/phases.py); None without CUPTI."""
        return PhaseRecorder(self._recorder, self._mark_sample) if self._recorder is not None else None

    def _mark_sample(self) -> None:
        import cupy

        self._mark((1, 1, 1), (1, 1, 1), ())  # on the current stream: the host routine's
        cupy.cuda.get_current_stream().synchronize()

    def flush_l2(self) -> None:
        with self.stream:
            self._flush(self._flush_grid, (256, 1, 1),
                        (self._flush_buffer, np.uint64(self._flush_buffer.size // 4), self._sink))

    def sample(self, run, flush: bool = True) -> float:
        """One timed run of `run(stream)`; returns the held events' time in seconds."""
        if flush:
            self.flush_l2()
        self._flags[:] = 0
        with self.stream:
            self._hold((1, 1, 1), (1, 1, 1),
                       (np.uint64(self._flags_ptr), np.int64(HOLD_TIMEOUT_NS), np.uint64(self._flags_ptr + 4)))
        self._start.record(self.stream)
        run(self.stream)
        self._stop.record(self.stream)
        self._flags[0] = 1  # release the stream: everything above is queued
        self._stop.synchronize()
        if self._flags[1]:
            raise RuntimeError("the launch took longer than 2 s to enqueue; the held stream timed out")
        import cupy

        return cupy.cuda.get_elapsed_time(self._start, self._stop) / 1e3

    def measure(self, run, profile: Profile, flush: bool = True, case: str = "") -> Measurement:
        """Warm up, then sample `run(stream)` until the noise or time criterion of `profile`.

        `case` names the case in errors (TimingError when its activity records are incomplete).
        """
        serial, profile = self._warm_up([run], profile, flush, case)
        return self._measure_unthrottled([run], profile, flush, case, serial)[0]

    def measure_interleaved(self, run_a, run_b, profile: Profile, flush: bool = True,
                            case: str = "") -> tuple[Measurement, Measurement]:
        """Samples of `run_a` and `run_b` alternating (A, B, A, B, ...) on one GPU, in one
        recording session: a same-run comparison of two versions of a case.

        The stop rule applies to each; sampling ends when both meet it. The
        wall-clock cap is doubled, so that each still gets about its own cap,
        and stops nothing before MIN_PAIRS pairs are in: fewer cannot
        be judged, however slow a case is.
        """
        serial, profile = self._warm_up([run_a, run_b], profile, flush, case)
        pair = dataclasses.replace(profile, time_cap=2 * profile.time_cap, min_samples_before_cap=MIN_PAIRS,
                                   min_samples=max(profile.min_samples, MIN_PAIRS),
                                   min_samples_long=max(profile.min_samples_long, MIN_PAIRS),
                                   max_samples=max(profile.max_samples, MIN_PAIRS))
        a, b = self._measure_unthrottled([run_a, run_b], pair, flush, case, serial)
        return a, b

    def _warm_up(self, runs: list, profile: Profile, flush: bool, case: str) -> tuple[bool, Profile]:
        """Warm the runs up; returns whether to record their kernels with CUPTI's KERNEL kind, and
        the profile to sample them with: `profile.for_host_copies()` where any of them copied to or
        from host memory, else `profile` (always without CUPTI, which alone can tell).

        Under CUPTI the warm-up samples (at least one) are recorded with the
        CONCURRENT_KERNEL kind: the KERNEL kind is chosen only if every run's
        activities never overlap in any of them and every run's median span
        is SERIAL_KIND_FROM or more (both runs of a comparison get one kind).
        """
        # one unheld run first: compilation, library loading and handle
        # creation must not happen while the stream is held
        for run in runs:
            run(self.stream)
        self.stream.synchronize()
        planned = profile.warmup if self._recorder is None else max(1, profile.warmup)
        rounds = 0
        with self._recording(serial_kernels=False):
            while rounds < planned:
                times = [self.sample(run, flush) for run in runs]
                rounds += 1
                if min(times) >= profile.long_sample_s:  # one held round warms a launch this long
                    break
            if self._recorder is None:
                return False, profile
            records, dropped = self._recorder.collect()
        per_sample = sample_activities(records, rounds * len(runs), case, dropped)
        if any(crosses_to_the_host(activities) for activities in per_sample):
            profile = profile.for_host_copies()
        for index in range(len(runs)):
            launches = per_sample[index::len(runs)]
            if not all(runs_one_at_a_time(activities) for activities in launches):
                return False, profile
            if statistics.median(span(activities) for activities in launches) < SERIAL_KIND_FROM:
                return False, profile
        return True, profile

    def _measure_unthrottled(self, runs: list, profile: Profile, flush: bool, case: str,
                             serial: bool) -> list[Measurement]:
        first = self._sample_until_stable(runs, profile, flush, case, serial)
        if not first[0].throttle:
            return first
        second = self._sample_until_stable(runs, profile, flush, case, serial)
        for measurement in second:
            measurement.retaken = True
        return second

    @contextlib.contextmanager
    def _recording(self, serial_kernels: bool):
        """CUPTI activity recording for one sampling loop; always stopped and flushed after it."""
        if self._recorder is None:
            yield
            return
        self._recorder.start(serial_kernels)
        try:
            yield
        finally:
            self._recorder.stop()

    def _sample_until_stable(self, runs: list, profile: Profile, flush: bool, case: str,
                             serial: bool) -> list[Measurement]:
        """Rounds of one sample per run until the stop rule holds for every run; kernels recorded
        with CUPTI's KERNEL kind if `serial`, else CONCURRENT_KERNEL.

        Under CUPTI the spans are known only after a flush, which costs host time (H200: median
        1.7 ms, up to 15 ms) and disturbs the samples after it (vector_add_vec4 on 1 M floats: rsd
        0.82 with a flush per sample, 0.027 with one per 10). Judging event times instead would judge
        another timer. So the spans are collected in batches: at `min_samples`, then after
        COLLECT_EVERY more and at least a quarter more than were in, and at the time or sample cap;
        the rule judges spans only. The price: up to a quarter more samples than needed, never fewer
        (22 flushes instead of 200 for a case of 2000 samples).
        """
        event_samples: list[list[float]] = [[] for _ in runs]
        samples = [[] for _ in runs] if self._recorder is not None else event_samples
        timer = TIMER_EVENTS if self._recorder is None else TIMER_CUPTI_KERNEL if serial else TIMER_CUPTI
        host_copies = [None if self._recorder is None else False for _ in runs]
        kernels: list[dict[str, None]] = [{} for _ in runs]  # ordered sets
        throttle: list[str] = []
        clocks: list[int] = []
        rounds = pending = 0
        started = time.perf_counter()
        with self._recording(serial):
            while True:
                for run, taken in zip(runs, event_samples, strict=True):
                    taken.append(self.sample(run, flush))
                rounds += 1
                pending += 1
                if rounds % 10 == 1:  # NVML reads cost tens of µs: not every round
                    self._read_clocks(throttle, clocks)
                if self._recorder is not None:
                    if not _collection_due(rounds, pending, started, profile, event_samples[0][-1]):
                        continue
                    records, dropped = self._recorder.collect()
                    launches = sample_activities(records, pending * len(runs), case, dropped)
                    for index, activities in enumerate(launches):
                        samples[index % len(runs)].append(span(activities))
                        host_copies[index % len(runs)] |= crosses_to_the_host(activities)
                        kernels[index % len(runs)].update((a.name, None) for a in activities if a.kind == "kernel")
                    pending = 0
                reasons = [profile.stop_rule.stop_reason(taken, time.perf_counter() - started) for taken in samples]
                if all(reasons):
                    self._read_clocks(throttle, clocks)
                    return [Measurement(taken, reason, list(throttle), list(clocks), timer=timer,
                                        event_samples=list(events), host_copies=copies, launched_kernels=tuple(names))
                            for taken, reason, events, copies, names in zip(samples, reasons, event_samples,
                                                                            host_copies, kernels, strict=True)]

    @staticmethod
    def _read_clocks(throttle: list[str], clocks: list[int]) -> None:
        state = clock_state()
        throttle += state.throttle
        if state.sm_clock_mhz is not None:
            clocks.append(state.sm_clock_mhz)
