"""Energy per launch: its interval, the record's energy block, and the energy verdicts.

Each window of src/kernelwatch/timing/energy.py gives one value of joules per launch
(several seconds of launches each, so the values are close to normal): the
estimate is their mean with a Student t interval. The record's block follows the
MLPerf power RFC's names where they fit (total joules, idle baseline watts,
active watts mean and peak, measurement method, sampling rate).

An energy verdict is judged like a time verdict, on its own figures and floor:
- the interval of one run is that of its windows; another process on the same GPU
  lands further off (its setup, the GPU's state), so the record also gives the
  interval in which a run of another process is expected: the windows' standard
  error with the spread between runs, `run_to_run`;
- against this GPU's own stored runs (never another GPU's: two H200s differ in
  power at the same work): the pooled windows of the newest `REFERENCE_RUNS`
  runs of the same machine code, since its latest accepted level; `more energy`
  when the ratio of means is past the detectable change and a one-sided Welch
  test says p < `ALPHA`;
- in a same-run A/B (interleaved periods of base and head): the mean of the
  pairs' log ratios with a t interval at 99%; `more energy` when the ratio is
  past the floor and the interval lies wholly above 1.
Whether `more energy` fails the case's test is the run's choice (--kernelwatch-energy-verdict,
default: it fails).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from kernelwatch.timing.energy import EnergyMeasurement
from kernelwatch.timing.power_trace import COUNTER_PERIOD_S
from kernelwatch.units import joule_unit
from kernelwatch.verdict.labels import NEW, SAME, Verdict
from kernelwatch.verdict.noise import StoredResult

MORE_ENERGY = "more energy"
LESS_ENERGY = "less energy"
CONFIDENCE = 0.95  # of the interval a record gives
PAIRED_CONFIDENCE = 0.99
# The smallest change of energy flagged against this GPU's history: the spread of one case's
# energy between processes on one GPU (set from the three-process measurement, docs/method.md#energy-between-processes).
ENERGY_FLOOR = 0.02
PAIRED_ENERGY_FLOOR = 0.015  # a same-run A/B: no process between the sides
# Between processes on one GPU joules per launch move more than one run's windows say: the pooled
# sd of log joules per launch of 4 cases over 3 + 2 processes on two H200 hosts was 0.62% with 12
# degrees of freedom (docs/method.md#energy-between-processes, 2026-12-02: 0.01-1.05% per case and host). Pooled with a case's own
# stored runs where there are any (run_to_run).
RUN_TO_RUN_SD = 0.0062
RUN_TO_RUN_DOF = 12
ALPHA = 0.01
Z = 3.0  # standard errors a change must exceed, as for time (src/kernelwatch/verdict/noise.py)
REFERENCE_RUNS = 3
# A measurement is extended (src/kernelwatch/timing/energy.py) until its 95% interval is this narrow or its
# extra windows are spent: issue 31's bar for a case of 50 µs or more (3% for the 1024² adds).
TARGET_HALF_WIDTH = 0.01
METHOD = "NVML total energy counter over windows cut at its updates, launches counted by CUDA events"


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, low, high): Student t interval of the mean; the mean alone (low = high) for one value."""
    data = np.asarray(values, dtype=float)
    if data.size == 0 or not np.all(np.isfinite(data)) or np.any(data <= 0):
        raise ValueError("joules per launch must be finite positive numbers, one per window at least")
    mean = float(data.mean())
    if data.size == 1:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, data.size - 1) * data.std(ddof=1) / math.sqrt(data.size))
    return mean, mean - half, mean + half


def precise_enough(values: Sequence[float]) -> bool:
    """Whether the interval of these windows' joules per launch is within `TARGET_HALF_WIDTH` of its mean."""
    if len(values) < 2:
        return False
    mean, low, high = mean_interval(values)
    return (high - low) / 2 / mean <= TARGET_HALF_WIDTH


def run_to_run(reference_runs: Sequence[StoredResult] = ()) -> tuple[float, int, str]:
    """(sd of log joules per launch between runs, its degrees of freedom, where it comes from): the
    H200 prior pooled with the spread of `reference_runs`' means where there are two or more."""
    means = [float(np.mean(run.energy)) for run in reference_runs if run.energy]
    if len(means) < 2:
        return RUN_TO_RUN_SD, RUN_TO_RUN_DOF, "the H200 prior"
    own = float(np.var(np.log(means), ddof=1))
    dof = RUN_TO_RUN_DOF + len(means) - 1
    sd = math.sqrt((RUN_TO_RUN_DOF * RUN_TO_RUN_SD**2 + (len(means) - 1) * own) / dof)
    return sd, dof, f"the H200 prior pooled with {len(means)} stored runs"


def _relative_se(values: Sequence[float]) -> float:
    """The standard error of the values' mean, as a fraction of it (0 for one value)."""
    return float(np.std(values, ddof=1)) / math.sqrt(len(values)) / float(np.mean(values)) if len(values) > 1 else 0.0


def energy_block(measurement: EnergyMeasurement, *, flops: float | None = None, bytes_moved: float | None = None,
                 reference_runs: Sequence[StoredResult] = ()) -> dict:
    """The record's `energy`: joules per launch with its interval (this run's windows, and where a run
    of another process is expected: `reference_runs` give the spread between runs with the prior),
    the powers, the work per joule."""
    windows = measurement.windows
    if not windows:
        raise ValueError("no energy window was measured (the replay did not span one counter period)")
    per_launch = measurement.joules_per_launch
    mean, low, high = mean_interval(per_launch)
    total_j, seconds = sum(w.joules for w in windows), sum(w.seconds for w in windows)
    watts = total_j / seconds
    idle = measurement.idle_w
    work = flops if flops is not None else bytes_moved
    instant = [w.instant_w for w in windows if w.instant_w is not None]
    sampled = [w.sampled_w for w in windows if w.sampled_w is not None]
    before, after = measurement.temperature_c
    sd, dof, source = run_to_run(reference_runs)
    spread = float(stats.t.ppf(0.5 + CONFIDENCE / 2, dof)) * math.hypot(_relative_se(per_launch), sd)
    return {
        "method": METHOD, "replay": measurement.replay, "sampling_rate_hz": 1 / COUNTER_PERIOD_S,
        "confidence": CONFIDENCE, "joules_per_launch": mean, "joules_per_launch_low": low,
        "joules_per_launch_high": high, "window_joules_per_launch": per_launch,
        "between_runs_low": mean * math.exp(-spread), "between_runs_high": mean * math.exp(spread),
        "run_to_run_sd": sd, "run_to_run_source": source,
        "window_seconds": [w.seconds for w in windows], "windows_added": measurement.windows_added,
        "total_joules": total_j, "measured_seconds": seconds,
        "launches": sum(w.launches for w in windows), "launch_seconds": measurement.launch_s,
        "active_watts_mean": watts, "active_watts_peak": max(w.power_w for w in windows),
        "idle_baseline_watts": idle,
        "active_joules_per_launch_above_idle": None if idle is None else (watts - idle) * measurement.launch_s,
        "instant_watts_mean": float(np.mean(instant)) if instant else None,
        "sampled_watts_mean": float(np.mean(sampled)) if sampled else None,
        "work_per_joule": None if work is None else work / mean / 1e9,
        "work_per_joule_unit": "GFLOP/J" if flops is not None else "GB/J" if bytes_moved is not None else None,
        "sm_clock_mhz_min": min(measurement.sm_clock_mhz, default=None),
        "sm_clock_mhz_max": max(measurement.sm_clock_mhz, default=None),
        "throttle_reasons": list(measurement.throttle), "temperature_c_before": before,
        "temperature_c_after": after, "power_limit_watts": measurement.power_limit_w,
        "gpu_starved_seconds": measurement.starved_s,
    }


def interval_text(block: dict) -> str:
    """"1.742 J (95% 1.735-1.749, ±0.4% this run; ±1.4% between runs)": a record's joules per launch for people."""
    mean, low, high = block["joules_per_launch"], block["joules_per_launch_low"], block["joules_per_launch_high"]
    scale, unit = joule_unit(mean)
    between = (f"; ±{(block['between_runs_high'] - block['between_runs_low']) / 2 / mean * 100:.1f}% between runs"
               if block.get("between_runs_high") is not None else "")
    return (f"{mean * scale:.4g} {unit} ({block['confidence'] * 100:g}% {low * scale:.4g}-{high * scale:.4g}, "
            f"±{(high - low) / 2 / mean * 100:.1f}% this run{between})")


def energy_reference(history: Sequence[StoredResult], gpu_uuid: str | None, sass: str | None) -> list[StoredResult]:
    """The stored runs (newest first) whose energy a case is judged against: this GPU's, of the same
    machine code, not throttled, not failed, none before the newest accepted level."""
    ordered = sorted(history, key=lambda run: run.started_at or "", reverse=True)
    chosen = []
    for run in ordered:
        usable = (run.energy and gpu_uuid is not None and run.gpu_uuid == gpu_uuid and not run.throttled
                  and run.outcome != "failed" and (sass is None or run.sass is None or run.sass == sass))
        if usable:
            chosen.append(run)
        if len(chosen) == REFERENCE_RUNS or (usable and run.starts_level):
            break
    return chosen


def judge_energy(case: str, current: Sequence[float], reference_runs: Sequence[StoredResult], *,
                 floor: float = ENERGY_FLOOR, reference: str | None = None) -> Verdict:
    """Joules per launch of this run's windows against the pooled windows of `reference_runs`."""
    if not reference_runs:
        mean = mean_interval(current)[0]
        return Verdict(case, NEW, None, mean, None, None, "no stored energy of this code on this GPU",
                       reference=reference)
    pooled = [value for run in reference_runs for value in run.energy]
    now, ref = mean_interval(current)[0], mean_interval(pooled)[0]
    ratio = now / ref
    relative_se = [_relative_se(v) for v in (current, pooled)]
    spread = run_to_run(reference_runs)[0]
    noise = Z * math.hypot(*relative_se, math.sqrt(1 + 1 / len(reference_runs)) * spread)
    detectable = max(floor, noise)
    because = f"{floor * 100:g}% floor" if detectable == floor else f"{Z:g} x noise"
    more = _welch_p(current, pooled, "greater")
    less = _welch_p(current, pooled, "less")
    if ratio > 1 + detectable and more < ALPHA:
        label, p, words = MORE_ENERGY, more, "more energy"
    elif ratio < 1 - detectable and less < ALPHA:
        label, p, words = LESS_ENERGY, less, "less energy"
    else:
        label, p, words = SAME, min(more, less), "within the detectable change or not significant"
    reason = (f"{words}: {ratio:.3f}x the joules per launch of {len(reference_runs)} stored runs "
              f"(detectable {detectable * 100:.1f}%, {because}; Welch p={p:.2g})")
    return Verdict(case, label, ref, now, ratio, detectable, reason, p_value=p, reference=reference,
                   reference_runs=len(reference_runs))


def _welch_p(current: Sequence[float], reference: Sequence[float], alternative: str) -> float:
    if len(current) < 2 or len(reference) < 2:
        return 1.0
    p = stats.ttest_ind(current, reference, equal_var=False, alternative=alternative).pvalue
    return 1.0 if math.isnan(p) else float(p)


def judge_energy_paired(case: str, base: Sequence[float], head: Sequence[float], *,
                        floor: float = PAIRED_ENERGY_FLOOR, reference: str | None = None) -> Verdict:
    """A same-run A/B of energy: pair i is (base[i], head[i]), taken one after the other."""
    if len(base) != len(head) or len(base) < 3:
        raise ValueError(f"an energy A/B needs three pairs or more of one value each, got {len(base)} and {len(head)}")
    logs = np.log(np.asarray(head, dtype=float) / np.asarray(base, dtype=float))
    mean = float(logs.mean())
    half = float(stats.t.ppf(0.5 + PAIRED_CONFIDENCE / 2, logs.size - 1) * logs.std(ddof=1) / math.sqrt(logs.size))
    ratio, low, high = math.exp(mean), math.exp(mean - half), math.exp(mean + half)
    if ratio > 1 + floor and low > 1:
        label = MORE_ENERGY
    elif ratio < 1 - floor and high < 1:
        label = LESS_ENERGY
    else:
        label = SAME
    reason = (f"{label}: {ratio:.3f}x the joules per launch of the base over {logs.size} interleaved pairs "
              f"({PAIRED_CONFIDENCE * 100:g}% {low:.3f}-{high:.3f}; floor {floor * 100:g}%)")
    return Verdict(case, label, float(np.mean(base)), float(np.mean(head)), ratio, floor, reason, ci_low=low,
                   ci_high=high, reference=reference)
