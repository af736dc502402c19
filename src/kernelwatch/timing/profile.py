"""How long a case is sampled: the profiles and the stop rule, as a named criterion.

A leaf of the timing room (it imports nothing of the suite). As nvbench keeps
each stopping rule behind one interface (`stdrel_criterion`), the timer asks
its profile's `stop_rule` whether to stop; a new rule is a new class here with
the same `stop_reason(samples, elapsed)` method, not a new branch in the timer.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from dataclasses import dataclass

# A same-run comparison needs this many pairs: below five, a bootstrap of medians has too few
# distinct resamples to mean anything (src/kernelwatch/verdict/paired.py), so the time cap of an
# interleaved measurement stops nothing with fewer.
MIN_PAIRS = 5


# The standard error of a median, over the standard deviation / sqrt(n) of the samples: sqrt(pi / 2)
# for normal samples (for heavier tails the sample standard deviation overstates it: more samples).
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)

# A GPU-timed case is judged against a 1.5% same-GPU floor at 3 standard errors of both sides
# (src/kernelwatch/verdict/noise.py): a median whose standard error is 0.2% adds 3 x sqrt(2) x 0.2% = 0.85%,
# under the floor, so it moves no verdict. It is also what the noise rule itself guarantees at its
# least (0.5% spread over 10 samples). A case whose samples never reach 0.5% spread (a 5 µs add at
# 3%, the streams pipeline at 2-3%) stops here instead of at the sample or time cap: 2000 samples
# of each 1024² add took 0.8 s, the streams 1.5 s each (docs/method.md#nightly-time, 2026-12-01 seventh session).
TARGET_MEDIAN_SE = 0.002

# Host routines (wall clock, judged at 30%): 5% relative spread and 10 samples give a median's
# standard error of about 2%, a tenth of what the verdict needs; 0.3 s caps a noisy routine. At
# least 0.1 s of samples: over a window of 3 ms (ten samples of the pinned cuBLAS routine) one
# moment of the host's own noise read 1.35x and 1.48x of the routine's time (docs/method.md#nightly-plan, issue 20).
WALL_CLOCK_TARGET_RSD = 0.05
WALL_CLOCK_TARGET_MEDIAN_SE = 0.02
WALL_CLOCK_MIN_TIME = 0.1
WALL_CLOCK_TIME_CAP = 0.3


@dataclass(frozen=True)
class RelativeNoiseCriterion:
    """Stop on noise (nvbench's relative-standard-deviation criterion), on the median's precision,
    a time cap or a sample cap.

    Once at least `min_samples` samples (`min_samples_long` where their median
    is `long_sample_s` or more) are in:
    "noise" where `min_time` seconds of measured time are in and their relative
    standard deviation is at most `target_rsd`;
    "precision" where they span `min_time` seconds of wall clock and the
    relative standard error of their median (MEDIAN_SE_FACTOR x the relative
    standard deviation / sqrt(n)) is at most `target_median_se`: what a verdict
    needs of a case whose samples are never that quiet. A span, not measured
    time: 20 ms of a 5 µs add are 4000 samples, past the sample cap, while 350
    samples of it span 0.14 s.
    "time cap": `time_cap` seconds of wall clock have passed with at least
    `min_samples_before_cap` samples in; "max samples": `max_samples` are in.
    """

    min_samples: int
    min_time: float
    target_rsd: float
    time_cap: float
    min_samples_before_cap: int
    max_samples: int
    long_sample_s: float = float("inf")
    min_samples_long: int = 0
    target_median_se: float = 0.0

    def stop_reason(self, samples: list[float], elapsed: float) -> str | None:
        """Why sampling stops now (`elapsed`: wall-clock seconds since it began), or None to go on."""
        n = len(samples)
        if n >= self.max_samples:
            return "max samples"
        if elapsed > self.time_cap and n >= self.min_samples_before_cap:
            return "time cap"
        enough = self.min_samples_long if n and statistics.median(samples) >= self.long_sample_s else self.min_samples
        if n < max(enough, 2) or max(sum(samples), elapsed) < self.min_time:
            return None
        rsd = statistics.stdev(samples) / statistics.fmean(samples)
        if rsd <= self.target_rsd and sum(samples) >= self.min_time:
            return "noise"
        if MEDIAN_SE_FACTOR * rsd / math.sqrt(n) <= self.target_median_se:
            return "precision"
        return None


@dataclass(frozen=True)
class Profile:
    """How long to sample each case: nightly runs to noise, pull requests are quicker."""

    name: str
    min_samples: int = 10
    min_time: float = 0.02  # seconds of GPU time
    target_rsd: float = 0.005
    target_median_se: float = TARGET_MEDIAN_SE
    time_cap: float = 1.5  # seconds of wall clock per case
    min_samples_before_cap: int = 2  # the time cap stops no case with fewer (a spread needs two)
    max_samples: int = 2000
    warmup: int = 3
    # A launch whose warm-up CUPTI saw copying to or from host memory (the streams pipeline over
    # PCIe) is sampled for at least this many seconds of GPU time: its median drifts within a
    # process by up to 2.5% over seconds, so a window of 20 ms caught one moment of the drift
    # (docs/method.md#host-copy-window, 2026-11-30 fifth session). Its wall-clock cap grows to fit. (Such a case, at 2-3%
    # spread, stops on the precision rule: once its samples span this long, in wall clock.)
    host_copy_min_time: float = 0.5
    # A launch of LONG_SAMPLE_S or more (the seed kernels at 8192³: 66-320 ms) is warmed up by one
    # held round and may stop on noise at MIN_SAMPLES_LONG samples: its spread is a few hundredths
    # of a percent, far under its 1.5% floor, and 14 rounds of the seven such cases took about 20 s
    # of the nightly (docs/method.md#nightly-plan, 2026-12-01).
    long_sample_s: float = 0.05
    min_samples_long: int = 5
    # Whether this profile measures the project's energy cases (`energy_cases`) under --kernelwatch-energy=profile,
    # the default (src/kernelwatch/timing/energy.py; about 3.5 s of GPU each): the nightly and the full do.
    measures_energy_cases: bool = True
    # The project's energy cases: the kernelwatch_energy_cases ini key (`with_energy_cases`), test names or node ids
    # as pytest writes them, or patterns of them (`is_energy_case`).
    energy_cases: tuple[str, ...] = ()

    @property
    def stop_rule(self) -> RelativeNoiseCriterion:
        """The criterion that ends a case's sampling under this profile."""
        return RelativeNoiseCriterion(self.min_samples, self.min_time, self.target_rsd, self.time_cap,
                                      self.min_samples_before_cap, self.max_samples, self.long_sample_s,
                                      min(self.min_samples_long, self.min_samples), self.target_median_se)

    def for_wall_clock(self) -> Profile:
        """This profile for a host routine timed by wall clock, whose verdict is judged at a 30%
        detectable change (src/kernelwatch/verdict/against_baseline.py): a relative standard deviation of
        WALL_CLOCK_TARGET_RSD over at least `min_samples` samples, or a median's standard error of
        WALL_CLOCK_TARGET_MEDIAN_SE, is far under that, so sampling stops there (after
        WALL_CLOCK_MIN_TIME of samples), or at WALL_CLOCK_TIME_CAP, instead of running to the
        1.5 s cap on a noisy host (24 routines took 41.5 s of a 118 s nightly)."""
        return dataclasses.replace(self, min_time=WALL_CLOCK_MIN_TIME,
                                   target_rsd=max(self.target_rsd, WALL_CLOCK_TARGET_RSD),
                                   target_median_se=max(self.target_median_se, WALL_CLOCK_TARGET_MEDIAN_SE),
                                   time_cap=min(self.time_cap, WALL_CLOCK_TIME_CAP))

    def with_energy_cases(self, cases) -> Profile:
        """This profile with the project's energy cases, where it measures them (none in the quick)."""
        return dataclasses.replace(self, energy_cases=tuple(cases) if self.measures_energy_cases else ())

    def is_energy_case(self, node_id: str) -> bool:
        """Whether one of the energy cases names the test `node_id`: an entry equal to the node id or to the test's
        name (its part after the last "::"), or, with a `*` or `?` in it, a glob of either ("test_add_time[*-vec4]":
        only `*` and `?` are wild, brackets are the ids' own)."""
        name = node_id.rsplit("::", 1)[-1]
        return any(entry in (node_id, name) or (any(wild in entry for wild in "*?") and (
            _glob(entry).fullmatch(node_id) or _glob(entry).fullmatch(name))) for entry in self.energy_cases)

    def for_host_copies(self) -> Profile:
        """This profile with the sampling window of a launch that copies to or from the host."""
        min_time = max(self.min_time, self.host_copy_min_time)
        # a sample costs more wall clock than GPU time (holding, reading the records): room for that
        return dataclasses.replace(self, min_time=min_time, time_cap=max(self.time_cap, 3 * min_time))


def _glob(pattern: str) -> re.Pattern:
    """`pattern` as a regular expression: `*` any run of characters, `?` one, everything else itself."""
    return re.compile("".join({"*": ".*", "?": "."}.get(c, re.escape(c)) for c in pattern), re.DOTALL)


PROFILES = {
    "full": Profile("full"),  # the nightly's sampling over every size: weekly
    "nightly": Profile("nightly"),
    "quick": Profile("quick", min_samples=8, min_time=0.01, target_rsd=0.01, time_cap=0.4, measures_energy_cases=False),
}
