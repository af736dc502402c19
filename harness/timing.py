"""GPU time of a launch, measured the way nvbench does.

Each sample:
1. flushes the L2 cache by reading a buffer twice its size (reading leaves
   clean lines; a write-flush would leave dirty ones for the timed kernel
   to evict),
2. queues a kernel that holds the stream until the host releases it, then
   the start event, the launch under test and the stop event; the host
   releases the stream only after all of them are queued, so launch latency
   and Python overhead stay out of the figure,
3. reads the events' elapsed time.

Sampling stops on noise rather than a fixed count: once at least
`min_samples` samples and `min_time` seconds of GPU time are in and their
relative standard deviation is under `target_rsd` (nvbench: 0.5%), or when
the case's wall-clock cap is reached. NVML's clock event reasons are read
around the samples; a measurement during which the GPU was throttled for
heat or power is retaken once and flagged if it still was.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from .gpu import clock_state

HOLD_TIMEOUT_NS = 2_000_000_000  # the hold kernel gives up after 2 s rather than hang


@dataclass(frozen=True)
class Profile:
    """How long to sample each case: nightly runs to noise, pull requests are quicker."""

    name: str
    min_samples: int = 10
    min_time: float = 0.02  # seconds of GPU time
    target_rsd: float = 0.005
    time_cap: float = 1.5  # seconds of wall clock per case
    max_samples: int = 2000
    warmup: int = 3


PROFILES = {
    "nightly": Profile("nightly"),
    "quick": Profile("quick", min_samples=8, min_time=0.01, target_rsd=0.01, time_cap=0.4),
}


@dataclass
class Measurement:
    """The samples of one case (seconds) and how sampling went."""

    samples: list[float]
    stopped_by: str  # "noise", "time cap" or "max samples"
    throttle: list[str] = field(default_factory=list)  # NVML heat/power reasons seen
    sm_clock_mhz: list[int] = field(default_factory=list)  # SM clocks read during sampling
    retaken: bool = False

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def rsd(self) -> float:
        """Relative standard deviation of the samples."""
        if len(self.samples) < 2:
            return 0.0
        return statistics.stdev(self.samples) / statistics.fmean(self.samples)

    def extra_info(self) -> dict:
        return {
            "median_s": self.median,
            "rsd": self.rsd,
            "samples": len(self.samples),
            "stopped_by": self.stopped_by,
            "throttled": bool(self.throttle),
            "throttle_reasons": sorted(set(self.throttle)),
            "retaken_for_throttle": self.retaken,
            "sm_clock_mhz_min": min(self.sm_clock_mhz) if self.sm_clock_mhz else None,
            "sm_clock_mhz_max": max(self.sm_clock_mhz) if self.sm_clock_mhz else None,
        }


def _stop_reason(samples: list[float], started: float, profile: Profile) -> str | None:
    n = len(samples)
    if n >= profile.max_samples:
        return "max samples"
    if time.perf_counter() - started > profile.time_cap and n >= 2:
        return "time cap"
    if n >= profile.min_samples and sum(samples) >= profile.min_time:
        if statistics.stdev(samples) / statistics.fmean(samples) <= profile.target_rsd:
            return "noise"
    return None


class GpuTimer:
    """Times launches on one device with events, a held stream and a flushed L2."""

    def __init__(self, l2_bytes: int):
        import cupy

        from kernels.compile import get_function

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
        self._hold = get_function("timing.cu", "hold_stream")
        self._flush = get_function("timing.cu", "flush_l2")
        self._flush_grid = (4 * cupy.cuda.Device().attributes["MultiProcessorCount"], 1, 1)

    def flush_l2(self) -> None:
        with self.stream:
            self._flush(self._flush_grid, (256, 1, 1),
                        (self._flush_buffer, np.uint64(self._flush_buffer.size // 4), self._sink))

    def sample(self, run, flush: bool = True) -> float:
        """One timed run of `run(stream)`, in seconds of GPU time."""
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

    def measure(self, run, profile: Profile, flush: bool = True) -> Measurement:
        """Warm up, then sample `run(stream)` until the noise or time criterion of `profile`."""
        # one unheld run first: compilation, library loading and handle
        # creation must not happen while the stream is held
        run(self.stream)
        self.stream.synchronize()
        for _ in range(profile.warmup):
            self.sample(run, flush)
        first = self._sample_until_stable(run, profile, flush)
        if not first.throttle:
            return first
        second = self._sample_until_stable(run, profile, flush)
        second.retaken = True
        return second

    def _sample_until_stable(self, run, profile: Profile, flush: bool) -> Measurement:
        samples: list[float] = []
        throttle: list[str] = []
        clocks: list[int] = []
        started = time.perf_counter()
        while True:
            samples.append(self.sample(run, flush))
            if len(samples) % 10 == 1:  # NVML reads cost tens of µs: not every sample
                state = clock_state()
                throttle += state.throttle
                if state.sm_clock_mhz is not None:
                    clocks.append(state.sm_clock_mhz)
            if reason := _stop_reason(samples, started, profile):
                state = clock_state()
                throttle += state.throttle
                if state.sm_clock_mhz is not None:
                    clocks.append(state.sm_clock_mhz)
                return Measurement(samples, reason, throttle, clocks)


def measure_wall(run, profile: Profile) -> Measurement:
    """Wall-clock samples of a synchronous host routine `run()` (the seeds' "Time used")."""
    for _ in range(max(1, profile.warmup)):
        run()
    samples: list[float] = []
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        run()
        samples.append(time.perf_counter() - t0)
        if reason := _stop_reason(samples, started, profile):
            return Measurement(samples, reason)
