"""Wall-clock time of a host routine (allocate, copy in, run, copy out), as the tutorials time it.

The host routines are judged at a 30% detectable change (src/kernelwatch/verdict/against_baseline.py),
so they are sampled by the wall-clock rule of their profile (`Profile.for_wall_clock`). Where
the timer has CUPTI, the same samples are cut into phases (src/kernelwatch/timing/phases.py): the
kernel and each copy direction are judged on their own, at the GPU's floor.
"""

from __future__ import annotations

import time

from kernelwatch.timing.phases import PhaseRecorder
from kernelwatch.timing.profile import Profile
from kernelwatch.timing.timer import TIMER_WALL, Measurement


def measure_wall(run, profile: Profile, phases: PhaseRecorder | None = None, case: str = "") -> Measurement:
    """Wall-clock samples of a synchronous host routine `run()` (the tutorials' "Time used"),
    sampled as `profile.for_wall_clock()` says; with `phases`, each sample's phases too (a mark
    before each sample, outside its interval)."""
    profile = profile.for_wall_clock()
    for _ in range(max(1, profile.warmup)):
        run()
    samples: list[float] = []
    if phases is not None:
        phases.start()
    try:
        started = time.perf_counter()
        while True:
            if phases is not None:
                phases.mark()
            t0 = time.perf_counter()
            run()
            samples.append(time.perf_counter() - t0)
            if reason := profile.stop_rule.stop_reason(samples, time.perf_counter() - started):
                break
        cut = phases.phases(samples, case) if phases is not None else {}
    finally:
        if phases is not None:
            phases.stop()
    return Measurement(samples, reason, timer=TIMER_WALL, phases=cut)
