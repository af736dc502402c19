"""Wall-clock time of a host routine (allocate, copy in, run, copy out), as the tutorials time it.

The host routines are judged at a 30% detectable change (harness/verdict/against_baseline.py),
so they are sampled by the wall-clock rule of their profile (`Profile.for_wall_clock`).
"""

from __future__ import annotations

import time

from harness.timing.profile import Profile
from harness.timing.timer import TIMER_WALL, Measurement


def measure_wall(run, profile: Profile) -> Measurement:
    """Wall-clock samples of a synchronous host routine `run()` (the tutorials' "Time used"),
    sampled as `profile.for_wall_clock()` says."""
    profile = profile.for_wall_clock()
    for _ in range(max(1, profile.warmup)):
        run()
    samples: list[float] = []
    started = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        run()
        samples.append(time.perf_counter() - t0)
        if reason := profile.stop_rule.stop_reason(samples, time.perf_counter() - started):
            return Measurement(samples, reason, timer=TIMER_WALL)
