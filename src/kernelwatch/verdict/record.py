"""The record of one timed case: the only place that names its keys.

A timed case produces one `CaseRecord`. It is written once, flat, into the
case's `extra_info` in pytest-benchmark's JSON (so saved runs, baselines and
`--benchmark-json` files all carry it), and everything downstream — the
verdict report, the plots, the run summaries, the xdist merge and
`python -m kernelwatch.compare` — reads it back with `CaseRecord.from_benchmark`.
Rates and fractions are derived here from the work and the median, and
formatted here, so that no two places can disagree about them.

Files written by older versions (other timer names, retired keys, the old
verdict labels) are brought up to date by src/kernelwatch/storage/schema.py when they
are loaded; this module reads only the current form.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field

from kernelwatch.timing.timer import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL
from kernelwatch.verdict.labels import Verdict

__all__ = ["DERIVED", "TIMER_CUPTI", "TIMER_EVENTS", "TIMER_WALL", "CaseRecord", "records_of"]

# Keys that to_extra_info writes beside the fields (derived figures): skipped on reading.
DERIVED = frozenset({"sample_count", "rate", "rate_unit", "fraction_of_ceiling", "fraction_of_datasheet", "throttled"})


@dataclass
class CaseRecord:
    """What one timed case measured, against what, and how it was judged."""

    case: str  # pytest node id: the baseline key
    median_s: float
    samples: list[float] = field(default_factory=list, repr=False)
    kernel: str | None = None
    shape: str | None = None
    params: dict = field(default_factory=dict)  # other case parameters (chunks, memory, ...)
    # work: one of the two gives the rate
    flops: float | None = None
    bytes: float | None = None
    # ceilings: measured in the same run, and the datasheet's (same unit as the rate, per second)
    ceiling: str | None = None
    ceiling_rate: float | None = None
    datasheet_rate: float | None = None
    # how it was timed
    timer: str | None = None
    timer_note: str = ""
    event_median_s: float | None = None  # the held-event timer's median of the same samples (CUPTI runs)
    rsd: float | None = None
    stopped_by: str | None = None
    sm_clock_mhz_min: int | None = None
    sm_clock_mhz_max: int | None = None
    throttle_reasons: list[str] = field(default_factory=list)
    retaken_for_throttle: bool = False
    host_copies: bool | None = None  # the GPU time includes host<->device copies (CUPTI saw them); None: unknown
    # the kernels CUPTI saw the launch run, first seen first: a library's (cuBLAS) by the name it chose; none
    # without CUPTI
    launched_kernels: list[str] = field(default_factory=list)
    # a host routine's samples cut into phases by CUPTI (src/kernelwatch/timing/phases.py): seconds per phase and sample
    phases: dict[str, list[float]] = field(default_factory=dict, repr=False)
    # where and when
    gpu_uuid: str | None = None
    pci_bus_id: str | None = None
    cuda_device: int | None = None
    worker: str | None = None
    timing_started: float | None = None
    timing_ended: float | None = None
    # what ran: hash of the kernel's machine code and launch configuration (kernelwatch.ab.identity)
    sass: str | None = None
    # the verdict (src/kernelwatch/verdict/labels.py), absent when not comparing
    verdict: str | None = None
    ratio: float | None = None
    p_value: float | None = None  # stored reference: one-sided Mann-Whitney
    ci_low: float | None = None  # same-run A/B: bootstrap interval of the ratio
    ci_high: float | None = None
    detectable: float | None = None
    verdict_reason: str | None = None
    reference: str | None = None  # what it was judged against: a baseline file, a GPU's history, a git ref
    reference_runs: int | None = None  # stored runs pooled into the reference
    # the stored runs pooled (ReferenceRun.as_dict each, oldest first), for a verdict against stored runs
    references: list[dict] = field(default_factory=list)
    # a slower case's commit window (src/kernelwatch/ab/commits.py: CommitWindow.as_dict): the commits since its
    # newest reference
    window: dict | None = None
    accepted_reason: str | None = None  # why a slowdown was accepted (verdict "accepted")
    # joules per launch and the powers behind it (src/kernelwatch/verdict/energy.py: energy_block), where measured
    energy: dict | None = None
    # its verdict (Verdict fields, and "fails": whether it failed the case's test), where judged
    energy_verdict: dict | None = None
    # each phase's verdict against this GPU's history (src/kernelwatch/verdict/phases.py: phase_fields), where judged
    phase_verdicts: list[dict] = field(default_factory=list)

    # ---- derived figures -------------------------------------------------------------
    @property
    def unit(self) -> str | None:
        return "TFLOP/s" if self.flops is not None else "GB/s" if self.bytes is not None else None

    @property
    def rate(self) -> float | None:
        """Work per second in the record's unit (TFLOP/s or GB/s)."""
        if self.flops is not None:
            return self.flops / self.median_s / 1e12
        if self.bytes is not None:
            return self.bytes / self.median_s / 1e9
        return None

    def _fraction(self, ceiling_rate: float | None) -> float | None:
        work = self.flops if self.flops is not None else self.bytes
        if work is None or not ceiling_rate:
            return None
        return work / self.median_s / ceiling_rate

    @property
    def fraction_of_ceiling(self) -> float | None:
        return self._fraction(self.ceiling_rate)

    @property
    def fraction_of_datasheet(self) -> float | None:
        return self._fraction(self.datasheet_rate)

    @property
    def throttled(self) -> bool:
        return bool(self.throttle_reasons)

    @property
    def fails_beside_time(self) -> bool:
        """Whether the case failed its test on a verdict other than its time's: more energy, or a slower phase."""
        return bool((self.energy_verdict or {}).get("fails") or any(v.get("fails") for v in self.phase_verdicts))

    def rate_text(self) -> str:
        """"46.88 TFLOP/s" or "4397 GB/s" ("" without work)."""
        rate = self.rate
        if rate is None:
            return ""
        return f"{rate:.2f} TFLOP/s" if self.unit == "TFLOP/s" else f"{rate:.0f} GB/s"

    def ceiling_text(self) -> str:
        """"91.2% of cuBLAS" ("" without a ceiling)."""
        fraction = self.fraction_of_ceiling
        return f"{100 * fraction:.1f}% of {self.ceiling}" if fraction is not None else ""

    def datasheet_text(self) -> str:
        fraction = self.fraction_of_datasheet
        return f"{100 * fraction:.1f}%" if fraction is not None else ""

    def label(self) -> str:
        """Kernel name and its distinguishing parameters, for tables."""
        name = self.kernel or self.case.rsplit("::", 1)[-1]
        extras = ", ".join(f"{k} {v}" for k, v in sorted(self.params.items()) if not isinstance(v, float))
        return f"{name} ({extras})" if extras else name

    def judged(self, verdict: Verdict) -> CaseRecord:
        """This record with `verdict`'s outcome (a new record: a record is never changed in place)."""
        return dataclasses.replace(
            self, verdict=verdict.label, ratio=verdict.ratio, p_value=verdict.p_value, ci_low=verdict.ci_low,
            ci_high=verdict.ci_high, detectable=verdict.detectable, verdict_reason=verdict.reason,
            reference=verdict.reference, reference_runs=verdict.reference_runs,
            references=[run.as_dict() for run in verdict.references])

    # ---- reading and writing -----------------------------------------------------------
    def to_extra_info(self) -> dict:
        """The flat dict written into the benchmark's extra_info (samples live in stats.data)."""
        info = {}
        for f in dataclasses.fields(self):
            if f.name in ("case", "samples", "params"):
                continue
            info[f.name] = getattr(self, f.name)
        info.update(self.params)
        info.update(sample_count=len(self.samples), rate=self.rate, rate_unit=self.unit, fraction_of_ceiling=self.fraction_of_ceiling,
                    fraction_of_datasheet=self.fraction_of_datasheet, throttled=self.throttled)
        return info

    @classmethod
    def from_benchmark(cls, bench: dict) -> CaseRecord:
        """Read the record of one benchmark of a pytest-benchmark JSON document in the current
        schema (src/kernelwatch/storage/schema.py brings older files up to it when they are loaded)."""
        info = dict(bench.get("extra_info") or {})
        stats = bench.get("stats") or {}
        samples = [float(x) for x in stats.get("data") or []]
        median = statistics.median(samples) if samples else float(stats.get("median", info.get("median_s", 0.0)))
        known = {f.name for f in dataclasses.fields(cls)} - {"case", "samples", "params", "median_s"}
        values = {key: info.pop(key) for key in list(info) if key in known}
        params = {k: v for k, v in info.items() if k not in DERIVED and k != "median_s"}
        return cls(case=bench["fullname"], median_s=median, samples=samples, params=params, **values)


def records_of(doc: dict) -> list[CaseRecord]:
    """Every case record of a saved run, in the file's order."""
    return [CaseRecord.from_benchmark(bench) for bench in doc.get("benchmarks", [])]
