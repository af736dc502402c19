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

With CUPTI (NVIDIA's cupti-python, harness/cupti_activity.py) the sample's
figure is instead the span from the first kernel/memcpy/memset start to the
last end of the launch under test, as the GPU recorded them
(harness/cupti_spans.py), kernels recorded with CUPTI's CONCURRENT_KERNEL
kind (harness/cupti_activity.py says why that kind). The held events carry a fixed cost per sample that
differs between hosts of one GPU model (2.6-4.2 µs on three H200 hosts,
NOTES.md); the activity records do not. The event times are kept beside
the spans (`Measurement.event_samples`) for comparison. Which timer is used
is decided once, when the `GpuTimer` is made, and said in `timer` and
`note`; each Measurement names its timer.

Sampling stops on noise rather than a fixed count: once at least
`min_samples` samples and `min_time` seconds of GPU time are in and their
relative standard deviation is under `target_rsd` (nvbench: 0.5%), or when
the case's wall-clock cap is reached with at least `min_samples_before_cap`
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

from .cupti_activity import FALLBACK, open_recorder
from .cupti_spans import TimingError, sample_spans
from .gpu import clock_state
from .paired import MIN_PAIRS

__all__ = ["PROFILES", "TIMER_CUPTI", "TIMER_EVENTS", "TIMER_WALL", "GpuTimer", "Measurement", "Profile",
           "TimingError", "measure_wall"]

HOLD_TIMEOUT_NS = 2_000_000_000  # the hold kernel gives up after 2 s rather than hang
KERNEL_SOURCE = Path(__file__).with_name("timing_kernels.cu")

TIMER_CUPTI = "cupti concurrent kernel"  # CUPTI's CONCURRENT_KERNEL activity kind
TIMER_EVENTS = "cuda events"
TIMER_WALL = "wall clock"

# CUPTI flushes once the minimum count is in: after at least COLLECT_EVERY more samples, and at
# least a quarter more than were in at the last one (see GpuTimer._sample_until_stable).
COLLECT_EVERY = 10
COLLECT_GROWTH = 4


@dataclass(frozen=True)
class Profile:
    """How long to sample each case: nightly runs to noise, pull requests are quicker."""

    name: str
    min_samples: int = 10
    min_time: float = 0.02  # seconds of GPU time
    target_rsd: float = 0.005
    time_cap: float = 1.5  # seconds of wall clock per case
    min_samples_before_cap: int = 2  # the time cap stops no case with fewer (a spread needs two)
    max_samples: int = 2000
    warmup: int = 3


PROFILES = {
    "nightly": Profile("nightly"),
    "quick": Profile("quick", min_samples=8, min_time=0.01, target_rsd=0.01, time_cap=0.4),
}


@dataclass
class Measurement:
    """The samples of one case (seconds), which timer took them, and how sampling went."""

    samples: list[float]  # the active timer's: CUPTI spans, held-event times or wall clock
    stopped_by: str  # "noise", "time cap" or "max samples"
    throttle: list[str] = field(default_factory=list)  # NVML heat/power reasons seen
    sm_clock_mhz: list[int] = field(default_factory=list)  # SM clocks read during sampling
    retaken: bool = False
    timer: str = TIMER_EVENTS  # one of the TIMER_* names above
    event_samples: list[float] = field(default_factory=list)  # the held events' times of the same samples

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def rsd(self) -> float:
        """Relative standard deviation of the samples."""
        if len(self.samples) < 2:
            return 0.0
        return statistics.stdev(self.samples) / statistics.fmean(self.samples)


def _stop_reason(samples: list[float], started: float, profile: Profile) -> str | None:
    n = len(samples)
    if n >= profile.max_samples:
        return "max samples"
    if time.perf_counter() - started > profile.time_cap and n >= profile.min_samples_before_cap:
        return "time cap"
    if n >= profile.min_samples and sum(samples) >= profile.min_time:
        if statistics.stdev(samples) / statistics.fmean(samples) <= profile.target_rsd:
            return "noise"
    return None


def _collection_due(rounds: int, pending: int, started: float, profile: Profile) -> bool:
    """Whether to flush CUPTI now: the stop rule can only be judged on collected spans."""
    return (pending >= max(COLLECT_EVERY, (rounds - pending) // COLLECT_GROWTH) or rounds == profile.min_samples
            or rounds >= profile.max_samples
            or (time.perf_counter() - started > profile.time_cap and rounds >= profile.min_samples_before_cap))


@functools.cache
def _timer_module(device_id: int):
    """The timer's own kernels, built with NVRTC for one device (no dependency on the kernels package)."""
    import cupy

    return cupy.RawModule(code=KERNEL_SOURCE.read_text(), options=("-std=c++17",), backend="nvrtc")


class GpuTimer:
    """Times launches on one device: a held stream, a flushed L2, CUPTI spans or CUDA events.

    `timer` names the timer (TIMER_CUPTI or TIMER_EVENTS) and `uses_cupti`
    says which; `note` is "" with CUPTI, else one line saying why not.
    `prefer_cupti=False` asks for the event timer.
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

    @property
    def timer(self) -> str:
        return TIMER_CUPTI if self.uses_cupti else TIMER_EVENTS

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
        self._flush_grid = (4 * cupy.cuda.Device().attributes["MultiProcessorCount"], 1, 1)

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
        self._warm_up([run], profile, flush)
        return self._measure_unthrottled([run], profile, flush, case)[0]

    def measure_interleaved(self, run_a, run_b, profile: Profile, flush: bool = True,
                            case: str = "") -> tuple[Measurement, Measurement]:
        """Samples of `run_a` and `run_b` alternating (A, B, A, B, ...) on one GPU, in one
        recording session: a same-run comparison of two versions of a case.

        The stop rule applies to each; sampling ends when both meet it. The
        wall-clock cap is doubled, so that each still gets about its own cap,
        and stops nothing before paired.MIN_PAIRS pairs are in: fewer cannot
        be judged, however slow a case is.
        """
        self._warm_up([run_a, run_b], profile, flush)
        pair = dataclasses.replace(profile, time_cap=2 * profile.time_cap, min_samples_before_cap=MIN_PAIRS,
                                   min_samples=max(profile.min_samples, MIN_PAIRS),
                                   max_samples=max(profile.max_samples, MIN_PAIRS))
        a, b = self._measure_unthrottled([run_a, run_b], pair, flush, case)
        return a, b

    def _warm_up(self, runs: list, profile: Profile, flush: bool) -> None:
        # one unheld run first: compilation, library loading and handle
        # creation must not happen while the stream is held
        for run in runs:
            run(self.stream)
        self.stream.synchronize()
        for _ in range(profile.warmup):
            for run in runs:
                self.sample(run, flush)

    def _measure_unthrottled(self, runs: list, profile: Profile, flush: bool, case: str) -> list[Measurement]:
        first = self._sample_until_stable(runs, profile, flush, case)
        if not first[0].throttle:
            return first
        second = self._sample_until_stable(runs, profile, flush, case)
        for measurement in second:
            measurement.retaken = True
        return second

    @contextlib.contextmanager
    def _recording(self):
        """CUPTI activity recording for one sampling loop; always stopped and flushed after it."""
        if self._recorder is None:
            yield
            return
        self._recorder.start()
        try:
            yield
        finally:
            self._recorder.stop()

    def _sample_until_stable(self, runs: list, profile: Profile, flush: bool, case: str) -> list[Measurement]:
        """Rounds of one sample per run until the stop rule holds for every run.

        Under CUPTI the spans are known only after a flush. Flushing after
        every sample would let the rule see each span at once, but a flush
        costs host time (H200, cupti-python 13.0.1: median 1.7 ms, up to
        15 ms) and disturbs the samples after it: vector_add_vec4 on 1 M
        floats read an rsd of 0.82 with a flush per sample against 0.027 with
        one per 10 (the held events alone: 0.025), and took 1405 samples in
        its 1.5 s cap against 2000 in 0.64 s. Judging on event times and
        swapping in the spans at the end would be cheap, but then the rule
        would judge a different timer (the events' fixed cost of ~2.6 µs
        lowers their rsd for small cases). So the spans are collected in
        batches, at `min_samples` (the rule cannot hold before), then after
        COLLECT_EVERY more samples and at least a quarter more than were in,
        and when the time or sample cap is reached; the rule is judged on
        spans only. The price is up to a quarter more samples than strictly
        needed, never fewer, and 22 flushes instead of 200 for a case
        that runs to 2000 samples.
        """
        event_samples: list[list[float]] = [[] for _ in runs]
        samples = [[] for _ in runs] if self._recorder is not None else event_samples
        throttle: list[str] = []
        clocks: list[int] = []
        rounds = pending = 0
        started = time.perf_counter()
        with self._recording():
            while True:
                for run, taken in zip(runs, event_samples, strict=True):
                    taken.append(self.sample(run, flush))
                rounds += 1
                pending += 1
                if rounds % 10 == 1:  # NVML reads cost tens of µs: not every round
                    self._read_clocks(throttle, clocks)
                if self._recorder is not None:
                    if not _collection_due(rounds, pending, started, profile):
                        continue
                    records, dropped = self._recorder.collect()
                    spans = sample_spans(records, pending * len(runs), case, dropped)
                    for index, span in enumerate(spans):
                        samples[index % len(runs)].append(span)
                    pending = 0
                reasons = [_stop_reason(taken, started, profile) for taken in samples]
                if all(reasons):
                    self._read_clocks(throttle, clocks)
                    return [Measurement(taken, reason, list(throttle), list(clocks), timer=self.timer,
                                        event_samples=list(events))
                            for taken, reason, events in zip(samples, reasons, event_samples, strict=True)]

    @staticmethod
    def _read_clocks(throttle: list[str], clocks: list[int]) -> None:
        state = clock_state()
        throttle += state.throttle
        if state.sm_clock_mhz is not None:
            clocks.append(state.sm_clock_mhz)


def measure_wall(run, profile: Profile) -> Measurement:
    """Wall-clock samples of a synchronous host routine `run()` (the tutorials' "Time used")."""
    for _ in range(max(1, profile.warmup)):
        run()
    samples: list[float] = []
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        run()
        samples.append(time.perf_counter() - t0)
        if reason := _stop_reason(samples, started, profile):
            return Measurement(samples, reason, timer=TIMER_WALL)
