"""The store's histories as series, each with its detectable change and its steps: what `changes` and `site` read.

The detectable change of a series is the noise model's (harness/verdict/noise.py),
with the series' own run-to-run spread in place of the stored runs' spread:
the largest of

* the relative floor: 1.5% (`NoiseFloors.same_gpu`) for a series of one physical
  GPU (every run names the same UUID), 5% (`other_gpu`) for one that mixes GPUs
  or has runs without a UUID (``--by gpu_model``): hosts of one model differ by a
  few percent, so a change of runner reads as a step;
* the absolute floor over the series' median (0.3 µs: small kernels);
* ``z`` x sqrt(1 + 1/k) x the series' spread, k = `REFERENCE_RUNS`: what the
  nightly verdict against this GPU's own history can detect for this case (this
  run's process once, a reference pooled from k runs).  The spread is
  `steps.noise_scale`: a robust scale of the successive differences of the log
  medians, which a step moves only once, so a series with steps does not inflate
  its own limit.

Host routines timed by wall clock take `WALL_CLOCK_FLOORS` (30%), as their
verdicts do.  Throttled results are left out of every series: a slow run for a
reason NVML names is no step.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from harness.storage.history import HistoryStore
from harness.verdict.against_baseline import REFERENCE_RUNS, WALL_CLOCK_FLOORS
from harness.verdict.noise import MIN_VALUES_FOR_SPREAD, Detectable, NoiseFloors
from harness.verdict.record import TIMER_WALL

from .series import Series, SeriesKey, series_from_rows
from .steps import Step, detect_steps, noise_scale

GPU_FLOORS = NoiseFloors()
# detect_steps needs a fraction below 1: a series noisier than this reports no step at all
MOST_DETECTABLE = 0.99


def detectable(series: Series) -> Detectable:
    """The smallest change of `series` reported as a step (module docstring), and the term that set it."""
    floors = WALL_CLOCK_FLOORS if series.key.timer == TIMER_WALL else GPU_FLOORS
    uuids = {point.gpu_uuid for point in series.points}
    one_gpu = len(uuids) == 1 and None not in uuids
    relative = floors.same_gpu if one_gpu else floors.other_gpu
    terms = [(relative, f"{relative * 100:g}% floor, {'one GPU' if one_gpu else 'several or unknown GPUs'}")]
    medians = series.medians()
    if medians and floors.absolute_s:
        terms.append((floors.absolute_s / statistics.median(medians), f"{floors.absolute_s * 1e6:g} µs absolute floor"))
    if len(medians) >= MIN_VALUES_FOR_SPREAD:
        spread = noise_scale(np.log(np.asarray(medians, dtype=float)))
        terms.append((floors.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread,
                      f"{floors.z:g} x run-to-run spread {spread * 100:.2f}%"))
    fraction, because = max(terms, key=lambda term: term[0])
    return Detectable(min(fraction, MOST_DETECTABLE), because)


@dataclass(frozen=True)
class Analysis:
    """Every series of the store (as narrowed), its detectable change, its steps, and the acknowledgements."""

    series: list[Series]
    detectable: dict[SeriesKey, Detectable]
    steps: dict[SeriesKey, list[Step]]
    acknowledged: dict[tuple[str, str], str]  # {(case, run id as the series name it): reason}

    def reason(self, step: Step) -> str | None:
        """Why the change at `step` was accepted, or None: it is open."""
        return self.acknowledged.get((step.key.case, step.after.run_id))


def analyse(store: HistoryStore, *, by: str = "gpu_uuid", gpu: str | None = None) -> Analysis:
    """Read the passed runs' series (one query), judge their steps, read the acknowledgements."""
    series = []
    for key, rows in store.case_series(by=by, gpu=gpu).items():
        kept = [row for row in rows if not row.throttled]
        if kept:
            series.append(series_from_rows(key, kept))
    limits = {one.key: detectable(one) for one in series}
    steps = {one.key: detect_steps(one, limits[one.key].fraction) for one in series}
    acknowledged = {(case, str(run_id)): reason for (case, run_id), reason in store.acknowledgements().items()}
    return Analysis(series, limits, steps, acknowledged)
