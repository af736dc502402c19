"""The noise model of one timed case: the smallest change its verdict can detect.

A case's timings are compared with its reference on medians (src/kernelwatch/verdict/stats.py).
The reference is the baseline's samples, pooled with those of the newest other
stored runs of the same machine code on the same GPU (src/kernelwatch/verdict/against_baseline.py).
How far the medians may move before the move counts depends on the case, so
each case gets its own *smallest detectable change*, the largest of three terms:

1. A relative floor: 1.5% when the baseline was recorded on this very GPU (same
   UUID), 5% when it came from another GPU of the model or from an unknown one.
   On each of three H200 hosts the median of every GPU-timed case of 50 µs or
   more moved between processes with a standard deviation of at most 0.37%,
   apart from the streams pipeline's PCIe copies (docs/method.md#between-process-spread).  The difference of
   two such runs has a standard deviation of 0.52%, of this run and a reference
   pooled from five 0.41%: 1.5% is 2.9 and 3.7 of them, and a 3% slowdown still
   clears it with 1.5% to spare.  Hosts of one model differ by a few percent on
   some cases, for reasons no sample set of one run can show.
2. An absolute floor divided by the reference median: 0.3 µs (launch placement
   and clock ramp move small kernels by that much between hosts).  This is what
   keeps 5 µs kernels from being judged on tenths of a microsecond.
3. ``z`` standard errors of what the data say: the relative standard errors of
   the two medians (from the median absolute deviation of each sample set) and,
   where the GPU model has at least three stored runs of the case, the spread of
   their medians (standard deviation of the log medians: day-to-day, process-to-
   process and host-to-host variation).  Its variance counts once for this run's
   process and 1/k times for the reference, which pools k processes: the spread
   enters sqrt(1 + 1/k) times, sqrt(2) times for a reference of one run.  They
   add in quadrature: each is an independent source of difference between two
   medians.  The spread matters
   because processes differ more than one process's samples show: on an H200,
   row_shared 1024³ read 443.5-448.6 µs in twenty processes with an rsd of
   0.2-0.4% inside each (docs/method.md#between-process-spread).
   A case whose GPU time includes copies between host and device memory (the
   streams pipeline over PCIe; CUPTI tells, `host_copies`) moves between
   processes far more than GPU-only work: a standard deviation of 0.2-1.05% on
   three H200 hosts, and 1.9% between two processes on a fourth (docs/method.md#host-copy-spread).
   Until this GPU has three stored runs of such a case to show its own spread,
   the model assumes ``host_copy_spread`` (1%) for it: against one stored run
   3 x sqrt(2) x 1% = 4.2%, where the 1.5% floor alone would flag the host's
   own moods.

Why the largest and not a sum: each term alone is a reason a change of that size
could appear with no code change.  The floors are lower bounds taken from
measurements, not noise sources to add to the data's own; a change has to clear
every one of them, which is exactly clearing the largest.

In the report a user reads, per case, e.g. "detectable change 1.5% (1.5% floor,
same GPU)" or "detectable change 3.4% (3 x noise (samples 0.4%, stored runs
1.1%))": a slowdown smaller than that is reported as same whatever its p-value,
and the words name the term that set it.

No floor covers a change of timer: held CUDA events read 2.6-4.2 µs more per
sample than CUPTI's kernel span, depending on the host (docs/method.md#event-timer-cost, 2026-11-30),
so a baseline timed by the other timer is never judged (src/kernelwatch/verdict/against_baseline.py),
and a case's stored runs of another timer are no part of its history.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from kernelwatch.timing.profile import MEDIAN_SE_FACTOR  # sqrt(pi / 2): a median's standard error over a mean's
from kernelwatch.verdict.stats import checked_samples

# A median of fewer values says nothing about spread.
MIN_VALUES_FOR_SPREAD = 3
# 1.4826 * MAD estimates the standard deviation of normally distributed samples.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class NoiseFloors:
    """The floors and the confidence factor of the noise model (fractions, seconds)."""

    # Between processes on an H200 host a case's median moves by a standard deviation
    # of at most 0.37% (PCIe-bound streams aside; docs/method.md#between-process-spread): 1.5% is 2.9 standard
    # deviations of a difference of two runs (3.7 against a reference pooled from five),
    # and half of a 3% slowdown.
    same_gpu: float = 0.015
    # Another host of the model, or a baseline without a GPU UUID: hosts differ by a
    # few percent on some cases (cuBLAS 1024³ read 1.04x with nothing changed).
    other_gpu: float = 0.05
    # Small kernels: launch placement and clock ramp move them by about 0.3 µs
    # between hosts.
    absolute_s: float = 0.3e-6
    # The spread between processes assumed for a case with host<->device copies while the
    # stored runs cannot show its own (fewer than three): the largest standard deviation
    # seen on three H200 hosts (1.05%, the streams pipeline; docs/method.md#host-copy-spread).
    host_copy_spread: float = 0.01
    # The smallest change flagged in a case whose GPU time includes copies between host and device
    # memory (the streams pipeline over PCIe), against any reference: one H200 process read all three
    # streams cases 3.1-5.3% slower than the four runs before it and the two after (the same code,
    # 2026-12-02, GPU-f1304ab8; docs/method.md#host-copy-floor), and hosts of the model differ by 3-6% on them. A process's
    # PCIe mood is not in its own samples, nor in four quiet runs before it.
    host_copy_floor: float = 0.06
    # Standard errors a change must exceed: a one-sided normal tail of 0.13%, so that
    # where this term sets the limit, a nightly of about 90 cases rarely sees noise
    # alone cross it.
    z: float = 3.0

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"NoiseFloors.{field.name} must be a number, got {value!r}")
        for name in ("same_gpu", "other_gpu"):
            if not 0 < getattr(self, name) < 1:
                raise ValueError(f"NoiseFloors.{name} must be a fraction in (0, 1), got {getattr(self, name)!r}")
        if not 0 <= self.host_copy_floor < 1:
            raise ValueError(f"NoiseFloors.host_copy_floor must be a fraction in [0, 1), got {self.host_copy_floor!r}")
        if not 0 <= self.host_copy_spread < 1:
            raise ValueError(f"NoiseFloors.host_copy_spread must be a fraction in [0, 1), "
                             f"got {self.host_copy_spread!r}")
        if self.absolute_s < 0:  # 0: no absolute floor (wall-clock timings)
            raise ValueError(f"NoiseFloors.absolute_s must be 0 or more seconds, got {self.absolute_s!r}")
        if self.z <= 0:
            raise ValueError(f"NoiseFloors.z must be positive, got {self.z!r}")


@dataclass(frozen=True)
class StoredResult:
    """One case's result in one stored run of the GPU model: a baseline folder's file, or a run of the
    history store (whose `reference_history` gives these)."""

    gpu_uuid: str | None  # None: a run recorded before UUIDs were stored
    timer: str
    median: float  # seconds
    run: str | None = None  # the stored run's name: a file name, or "history run N"
    sass: str | None = None  # hash of the machine code that ran (kernelwatch.ab.identity); None: unknown
    samples: tuple[float, ...] = ()
    started_at: str | None = None  # ISO 8601, UTC
    commit: str | None = None
    # a slowdown accepted at this run (a trailer, or an acknowledgement): the history's newest level
    # starts here, and no run before it is pooled with it (src/kernelwatch/verdict/against_baseline.py)
    accepted_reason: str | None = None
    # of a run of the history store (src/kernelwatch/storage/history): its id, its host, whether NVML reported
    # throttling (never pooled then) and the case's own outcome there (passed, failed, accepted)
    run_id: int | None = None
    host: str | None = None
    throttled: bool = False
    outcome: str = "passed"
    energy: tuple[float, ...] = ()  # joules per launch of each energy window, where the run measured energy
    # a host routine's phases, where the run cut them: (phase, its samples in seconds), in the record's order
    phases: tuple[tuple[str, tuple[float, ...]], ...] = ()

    @property
    def starts_level(self) -> bool:
        return self.accepted_reason is not None

    def phase(self, name: str) -> tuple[float, ...]:
        """The samples of one phase (empty where the run did not cut it)."""
        return next((samples for phase, samples in self.phases if phase == name), ())


def stored_phases(phases) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """A record's phases (or its stored JSON's: None where it has none) as StoredResult keeps them."""
    return tuple((str(name), tuple(float(v) for v in values)) for name, values in (phases or {}).items() if values)


@dataclass(frozen=True)
class Detectable:
    """The smallest detectable change of a case, and the term that set it, in words."""

    fraction: float
    because: str


def same_physical_gpu(gpu_uuid: str | None, baseline_gpu_uuid: str | None) -> bool:
    """True when both UUIDs are known and equal: the baseline came from this GPU."""
    return gpu_uuid is not None and gpu_uuid == baseline_gpu_uuid


def median_rel_se(samples: Sequence[float]) -> float | None:
    """Relative standard error of the median of ``samples``, from their MAD.

    ``MEDIAN_SE_FACTOR * MAD_TO_SIGMA * MAD / sqrt(n) / median``; robust to the
    occasional slow outlier that would inflate a standard deviation.  Samples
    with no spread give 0; fewer than 3 samples give None.  Raises ValueError
    for empty, non-finite or non-positive samples.
    """
    values = checked_samples("noise", samples)
    if values.size < MIN_VALUES_FOR_SPREAD:
        return None
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median)))
    return MEDIAN_SE_FACTOR * MAD_TO_SIGMA * mad / math.sqrt(values.size) / median


def history_spread(medians: Sequence[float]) -> float | None:
    """Spread of a case's medians over stored runs: std (ddof=1) of their logs.

    A relative figure (0.011 for about 1.1%).  None for fewer than 3 medians.
    Raises ValueError for non-finite or non-positive medians.
    """
    if len(medians) < MIN_VALUES_FOR_SPREAD:
        return None
    logs = np.log(checked_samples("stored-run median", medians))
    return float(np.std(logs, ddof=1))


def relevant_history(runs: Sequence[StoredResult], gpu_uuid: str | None,
                     baseline_gpu_uuid: str | None, timer: str) -> list[float]:
    """The stored medians of one case whose spread bears on this comparison.

    Only runs timed with ``timer`` count (another timer's offset is not noise).
    When the baseline is from this GPU (``same_physical_gpu``), only this GPU's
    runs count: its own rerun spread is the question.  Otherwise every run
    counts, since the host-to-host spread is what the comparison is exposed to.
    """
    same_timer = [run for run in runs if run.timer == timer]
    if same_physical_gpu(gpu_uuid, baseline_gpu_uuid):
        return [run.median for run in same_timer if run.gpu_uuid == gpu_uuid]
    return [run.median for run in same_timer]


def floor_terms(median_s: float, floors: NoiseFloors, *, same_gpu: bool, host_copies: bool = False,
                same_words: str = "same GPU", other_words: str = "other or unknown GPU") -> list[tuple[float, str]]:
    """The floors a change of a case of this median must clear, each with its words: the relative floor
    (same GPU, another or unknown one, or the host-copy floor where it is higher) and the absolute floor
    over the median. The one rule of the floors, for every path that judges: a stored reference
    (`detectable_change`), a git ref in the same run (src/kernelwatch/ab/against_ref.py's callers) and a
    history's steps (src/kernelwatch/history/analysis.py)."""
    relative = floors.same_gpu if same_gpu else floors.other_gpu
    relative_words = f"{relative * 100:g}% floor, {same_words if same_gpu else other_words}"
    if host_copies and floors.host_copy_floor > relative:
        relative, relative_words = floors.host_copy_floor, f"{floors.host_copy_floor * 100:g}% floor, host copies"
    terms = [(relative, relative_words)]
    if floors.absolute_s:
        terms.append((floors.absolute_s / median_s, f"{floors.absolute_s * 1e6:g} µs absolute floor"))
    return terms


def floor_of(median_s: float, floors: NoiseFloors, *, same_gpu: bool = True) -> float:
    """The largest of `floor_terms`: the smallest change worth flagging where no noise term is known."""
    return max(fraction for fraction, _ in floor_terms(median_s, floors, same_gpu=same_gpu))


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def detectable_change(baseline_samples: Sequence[float], current_samples: Sequence[float], *,
                      same_gpu: bool, history: Sequence[float] = (), reference_runs: int = 1,
                      host_copies: bool = False, floors: NoiseFloors = NoiseFloors()) -> Detectable:
    """The smallest change of the median the verdict should call a change.

    Both sample sets must come from one timer: another timer's offset is no
    change, and no floor here allows for it.
    ``baseline_samples``: the reference, pooled from ``reference_runs`` stored
    runs (processes).
    ``same_gpu``: the baseline was recorded on this GPU (same UUID).
    ``history``: the case's medians in stored runs of this GPU model, as
    ``relevant_history`` picks them (fewer than 3: no spread term, except
    ``floors.host_copy_spread`` where ``host_copies``: the case's time includes
    copies between host and device memory).
    The fraction is the largest of the relative floor, the absolute floor over
    the baseline median, and ``floors.z`` times the combined standard error;
    with fewer than 3 samples a side contributes no standard error.  Raises
    ValueError for empty, non-finite or non-positive samples or medians, and for
    ``reference_runs`` below 1.
    """
    if isinstance(reference_runs, bool) or not isinstance(reference_runs, int) or reference_runs < 1:
        raise ValueError(f"reference_runs must be a whole number of stored runs, 1 or more, got {reference_runs!r}")
    baseline = checked_samples("baseline", baseline_samples)
    current = checked_samples("current", current_samples)
    baseline_median = float(np.median(baseline))

    sample_se = math.hypot(median_rel_se(baseline) or 0.0, median_rel_se(current) or 0.0)
    spread = history_spread(history)
    spread_words = "" if spread is None else f", stored runs {_percent(spread)}"
    if spread is None and host_copies:
        spread = floors.host_copy_spread
        spread_words = f", {_percent(spread)} assumed between processes for host copies"
    # this run's process offset once, the reference's 1/k times: see the module
    process_spread = math.sqrt(1 + 1 / reference_runs) * (spread or 0.0)
    noise = floors.z * math.hypot(sample_se, process_spread)
    noise_words = f"{floors.z:g} x noise (samples {_percent(sample_se)}{spread_words})"

    terms = [*floor_terms(baseline_median, floors, same_gpu=same_gpu, host_copies=host_copies), (noise, noise_words)]
    fraction, because = max(terms, key=lambda term: term[0])
    return Detectable(fraction, because)
