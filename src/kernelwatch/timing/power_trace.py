"""What NVML showed while a case ran back to back, and the energy windows cut from it.

A pure module (numpy only): the energy meter (src/kernelwatch/timing/energy.py) records a
`Trace` on the GPU; `windows_of` turns it into `PowerWindow`s. Traces recorded on an
H200 are kept under tests/data/energy/ and the CPU tests cut them again.

NVML's total-energy counter (millijoules) changes about every 100 ms on the
H200 (`COUNTER_PERIOD_S`). Between two of its changes the energy it added is
exact, and the time between them is known to the poll's resolution (a poll
about every 3 ms on the H200, NVML being slow to answer): a window is a run of counter changes, never a
span of wall clock. Each change is timed at the midpoint between the poll that
saw the old value last and the poll that saw the new one.

How many launches the GPU finished inside a window comes from CUDA events
recorded after each replay: their GPU times are exact relative to each other,
and the host saw each one done at its poll, a little after it happened. The
smallest (seen - GPU time) over the trace is the offset between the clocks (the
poll that came soonest after an event); every event is placed on the host's
clock by it, and the finished launches at a moment are interpolated between the
events around it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

COUNTER_PERIOD_S = 0.1  # the H200's energy counter and POWER_INSTANT update period (shared/MEASURED.md)
# A change this far off the midpoint of its neighbours was seen late or early: on the H200 changes sit
# within ±3 ms of their rhythm (a poll takes about 3 ms), and one seen 43 ms late made two windows 8%
# off (docs/method.md#energy-windows)
OFF_GRID_S = 0.01


@dataclass
class Trace:
    """One period of NVML readings (host times in seconds of time.perf_counter).

    polls: (time, energy counter in mJ), one per poll; instant: (time, POWER_INSTANT in W), read
    every few ms; samples: (time, W) of NVML's 50 Hz power samples, placed on the host's clock;
    done: (time seen done, GPU seconds since the first event, launches finished by then), one per
    replay (empty for an idle period); starved_s: how long the GPU waited for the host with every queued
    replay done (by CUDA events: the last replay's end to the next work's start); warm_until: no window
    starts before it.
    """

    polls: list[tuple[float, float]] = field(default_factory=list)
    instant: list[tuple[float, float]] = field(default_factory=list)
    samples: list[tuple[float, float]] = field(default_factory=list)
    done: list[tuple[float, float, int]] = field(default_factory=list)
    warm_until: float = 0.0
    starved_s: float = 0.0
    samples_clock: str = ""  # how the samples' timestamps were placed on the host's clock

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Trace:
        return cls(polls=[tuple(p) for p in data["polls"]], instant=[tuple(p) for p in data.get("instant", [])],
                   samples=[tuple(p) for p in data.get("samples", [])],
                   done=[(float(a), float(b), int(c)) for a, b, c in data.get("done", [])],
                   warm_until=float(data.get("warm_until", 0.0)), starved_s=float(data.get("starved_s", 0.0)),
                   samples_clock=data.get("samples_clock", ""))


@dataclass(frozen=True)
class PowerWindow:
    """Energy between two counter changes: joules, seconds, and the launches the GPU finished in it."""

    start_s: float
    end_s: float
    joules: float
    launches: float  # 0 in an idle window
    instant_w: float | None = None  # mean POWER_INSTANT reading inside the window
    sampled_w: float | None = None  # mean of NVML's 50 Hz samples inside it

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s

    @property
    def power_w(self) -> float:
        return self.joules / self.seconds

    @property
    def joules_per_launch(self) -> float:
        return self.joules / self.launches

    @property
    def launch_s(self) -> float:
        return self.seconds / self.launches


def counter_changes(polls) -> list[tuple[float, float]]:
    """(time, counter mJ) of every change of the counter: at the midpoint of the two polls around it."""
    changes = []
    for (before_t, before_e), (t, e) in zip(polls, polls[1:], strict=False):
        if e != before_e:
            changes.append(((before_t + t) / 2, e))
    return changes


def launch_timeline(done) -> tuple[np.ndarray, np.ndarray]:
    """(host times, launches finished) of the replays' events, the GPU's times placed on the host's clock."""
    if not done:
        return np.array([]), np.array([])
    seen, gpu, launches = (np.array(column, dtype=float) for column in zip(*done, strict=True))
    offset = float(np.min(seen - gpu))
    return offset + gpu, launches


def _mean_inside(readings, start: float, end: float) -> float | None:
    values = [value for t, value in readings if start < t <= end]
    return float(np.mean(values)) if values else None


def on_grid(changes) -> np.ndarray:
    """Which changes sit where the counter's rhythm puts them. Its updates come every period with a few
    ms of jitter, so a change is judged against its two neighbours: one more than `OFF_GRID_S` off
    their midpoint (twice that at either end, against the next two), and further off than either of
    them, was seen late or early (a poll loop that stalled, an update that came late) and cannot bound
    a window. Its energy still counts, inside a longer window."""
    times = np.array([t for t, _ in changes], dtype=float)
    if times.size < 3:
        return np.ones(times.size, dtype=bool)
    off = np.empty(times.size)
    off[1:-1] = times[1:-1] - (times[:-2] + times[2:]) / 2
    off[0] = (times[1] - times[0]) - (times[2] - times[1])
    off[-1] = (times[-1] - times[-2]) - (times[-2] - times[-3])
    size = np.abs(off)
    limit = np.full(times.size, OFF_GRID_S)
    limit[[0, -1]] = 2 * OFF_GRID_S
    padded = np.concatenate(([0.0], size, [0.0]))
    furthest = (size >= padded[:-2]) & (size >= padded[2:])
    return ~((size > limit) & furthest)


def windows_of(trace: Trace, ticks_per_window: int, count: int | None = None) -> list[PowerWindow]:
    """The windows of `ticks_per_window` counter periods each (one more where a window would end at a
    change off the counter's grid: `on_grid`), one after another from the first change on the grid
    after `trace.warm_until` (at most `count` of them). A window of a busy period ends no later than
    the replays' last event (the GPU was busy all through it)."""
    if ticks_per_window < 1:
        raise ValueError(f"a window spans one counter period or more, not {ticks_per_window}")
    changes = [change for change in counter_changes(trace.polls) if change[0] >= trace.warm_until]
    good = on_grid(changes)
    times, launches = launch_timeline(trace.done)
    windows = []
    first = next((i for i, fine in enumerate(good) if fine), len(changes))
    while count is None or len(windows) < count:
        last = first + ticks_per_window
        while last < len(changes) and not good[last]:
            last += 1
        if last >= len(changes):
            break
        (t0, e0), (t1, e1) = changes[first], changes[last]
        first = last
        if times.size and (t0 < times[0] or t1 > times[-1]):
            continue  # the GPU's work did not cover this window
        finished = float(np.interp(t1, times, launches) - np.interp(t0, times, launches)) if times.size else 0.0
        windows.append(PowerWindow(t0, t1, (e1 - e0) / 1e3, finished, _mean_inside(trace.instant, t0, t1),
                              _mean_inside(trace.samples, t0, t1)))
    return windows


def idle_power(trace: Trace) -> float | None:
    """The mean power of an idle trace over all its whole counter periods (None: it spans none)."""
    windows = windows_of(trace, 1)  # one after another, from the first change on the grid to the last
    return sum(w.joules for w in windows) / sum(w.seconds for w in windows) if windows else None
