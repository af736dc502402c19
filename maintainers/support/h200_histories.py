"""Synthetic case histories with the run-to-run noise the H200 shows.

The noise of one case's median from run to run has two parts:

* the process-to-process spread on one GPU (`run_sd`). The committed runs
  (baselines/NVIDIA_H200/000*.json) are five runs on five different GPUs, so no
  case has two runs on one GPU there. Their spread (sd of the log medians over
  the five) mixes host-to-host differences in, so it is an upper bound of the
  one-GPU spread. The one-GPU spread measured directly (docs/method.md#between-process-spread): at most 0.37%
  for GPU-timed cases of 50 us or more on three hosts. So `run_sd` is the
  case's five-GPU spread clipped to 0.2%..0.5%: the quiet cases get 0.2%, the
  noisy ones (and every case whose hosts differ by more) 0.5%, above every
  one-GPU figure measured.
* the standard error of one run's median from its samples: 1.2533 x rsd /
  sqrt(samples), with the case's newest rsd and sample count (extra_info).

Host routines timed by the wall clock spread 3-20% between the five hosts;
their `run_sd` is that spread itself (not clipped): no claim about a 2% step
is made for them, and `gpu_timed_profiles` leaves them out.

Draws are Student-t with 6 degrees of freedom scaled to the combined sd: a
process that runs slow now and then is what makes the tails heavier than a
normal's.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import numpy as np

from kernelwatch.history.series import Point, Series, SeriesKey
from kernelwatch.timing.profile import MEDIAN_SE_FACTOR

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "baselines" / "NVIDIA_H200").glob("000*.json"))
RUN_SD_RANGE = (0.002, 0.005)
T_DOF = 6
START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


@dataclass(frozen=True)
class CaseNoise:
    """One case's median and its run-to-run noise (relative sd of the median)."""

    case: str
    timer: str
    median_s: float
    run_sd: float
    sample_se: float

    @property
    def sd(self) -> float:
        return math.hypot(self.run_sd, self.sample_se)


@cache
def case_profiles() -> tuple[CaseNoise, ...]:
    """Every case of the committed H200 runs with its noise, in the newest run's order."""
    medians: dict[str, list[float]] = {}
    newest: dict[str, dict] = {}
    for path in RUNS:
        for bench in json.loads(path.read_text())["benchmarks"]:
            medians.setdefault(bench["fullname"], []).append(statistics.median(bench["stats"]["data"]))
            newest[bench["fullname"]] = bench
    profiles = []
    for case, bench in newest.items():
        info = bench["extra_info"]
        spread = statistics.stdev(np.log(medians[case])) if len(medians[case]) >= 2 else RUN_SD_RANGE[1]
        wall = (info.get("timer") or "").startswith("wall")
        run_sd = spread if wall else min(max(spread, RUN_SD_RANGE[0]), RUN_SD_RANGE[1])
        samples = len(bench["stats"]["data"])
        sample_se = MEDIAN_SE_FACTOR * (info.get("rsd") or 0.0) / math.sqrt(samples)
        profiles.append(CaseNoise(case, "wall clock" if wall else "cupti", medians[case][-1], run_sd, sample_se))
    return tuple(profiles)


def gpu_timed_profiles() -> tuple[CaseNoise, ...]:
    return tuple(p for p in case_profiles() if p.timer != "wall clock")


def relative_medians(noise: CaseNoise, runs: int, rng: np.random.Generator, *, step_at: int | None = None,
                     step: float = 0.0, creep_from: int | None = None, creep: float = 0.0) -> np.ndarray:
    """Medians relative to the case's (1.0 = unchanged) for `runs` runs.

    `step`: from run `step_at` on, every median is (1 + step) times higher.
    `creep`: from run `creep_from` on the medians rise linearly, by `creep` in
    all over the runs to the end (1% over 30 runs: creep_from=runs-30, 0.01).
    """
    level = np.ones(runs)
    if step_at is not None:
        level[step_at:] *= 1 + step
    if creep_from is not None:
        length = runs - creep_from
        level[creep_from:] *= 1 + creep * np.arange(1, length + 1) / length
    t = rng.standard_t(T_DOF, size=runs) * math.sqrt((T_DOF - 2) / T_DOF)  # unit variance
    return level * np.exp(noise.sd * t)


def synthetic_series(noise: CaseNoise, relative: np.ndarray, *, gpu: str = "GPU-synthetic-0",
                     profile: str = "quick", first_run: int = 1) -> Series:
    """A series of `noise`'s case with the given relative medians, one run a day, commit c<run>."""
    points = []
    for i, factor in enumerate(relative):
        median = noise.median_s * float(factor)
        run = first_run + i
        points.append(Point(run_id=f"run-{run:04d}", started_at=START + timedelta(days=i), commit=f"c{run:04d}",
                            branch="main", median_s=median, low_s=median * (1 - noise.sd),
                            high_s=median * (1 + noise.sd), sample_count=100, gpu_uuid=gpu))
    return Series(SeriesKey(gpu=gpu, case=noise.case, timer=noise.timer, profile=profile), tuple(points))
