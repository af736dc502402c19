"""The store's histories as series, each with its detectable change and its steps: what `changes` and `site` read.

The detectable change of a series is the noise model's (src/kernelwatch/verdict/noise.py),
with the series' own run-to-run spread in place of the stored runs' spread:
the largest of

* the relative floor: 1.5% (`NoiseFloors.same_gpu`, or the threshold --threshold or
  $KERNELWATCH_THRESHOLD gives, as in a live run) for a series of one physical
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

import dataclasses
import functools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from kernelwatch.storage.history import HistoryStore
from kernelwatch.verdict.against_baseline import REFERENCE_RUNS, WALL_CLOCK_FLOORS
from kernelwatch.verdict.noise import MIN_VALUES_FOR_SPREAD, Detectable, NoiseFloors, floor_terms
from kernelwatch.verdict.record import TIMER_WALL

from .series import Point, Series, SeriesKey, series_from_rows
from .steps import MIN_RUNS_AT_LEVEL, SLOWER, STEP, Step, detect_steps, noise_scale

GPU_FLOORS = NoiseFloors()
# detect_steps needs a fraction below 1: a series noisier than this reports no step at all
MOST_DETECTABLE = 0.99


def detectable(series: Series, gpu_floors: NoiseFloors = GPU_FLOORS) -> Detectable:
    """The smallest change of `series` reported as a step (module docstring), and the term that set it;
    `gpu_floors`: those of a GPU-timed series (with the run's threshold: threshold.judging_floors)."""
    floors = WALL_CLOCK_FLOORS if series.key.timer == TIMER_WALL else gpu_floors
    uuids = {point.gpu_uuid for point in series.points}
    one_gpu = len(uuids) == 1 and None not in uuids
    medians = series.medians()
    terms = floor_terms(statistics.median(medians) if medians else math.inf, floors, same_gpu=one_gpu,
                        same_words="one GPU", other_words="several or unknown GPUs")
    if len(medians) >= MIN_VALUES_FOR_SPREAD:
        spread = noise_scale(np.log(np.asarray(medians, dtype=float)))
        terms.append((floors.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread,
                      f"{floors.z:g} x run-to-run spread {spread * 100:.2f}%"))
    fraction, because = max(terms, key=lambda term: term[0])
    return Detectable(min(fraction, MOST_DETECTABLE), because)


@dataclass(frozen=True)
class Failing:
    """A series whose newest runs failed (the nightly's verdict: slower) and were not accepted.

    `first` is the first run of that stretch and `before` the run before it (None: the series
    starts failed); `window` is the stored window of the first failed run (src/kernelwatch/ab/commits.py's
    `CommitWindow.as_dict`, None for a run recorded before windows were), `step` the detected slower step
    that holds it, if any.
    """

    key: SeriesKey
    first: Point
    before: Point | None
    newest: Point
    runs: int
    window: dict | None = None
    step: Step | None = None

    @property
    def commit_range(self) -> str:
        if self.window and self.window.get("base") and self.window.get("head"):
            return f"{self.window['base']}..{self.window['head']}"
        return f"{self.before.commit if self.before else '?'}..{self.first.commit}"


@dataclass(frozen=True)
class Analysis:
    """Every series of the store (as narrowed), its detectable change, its steps, the acknowledgements,
    and the series still failing."""

    series: list[Series]
    detectable: dict[SeriesKey, Detectable]
    steps: dict[SeriesKey, list[Step]]
    acknowledged: dict[tuple[str, str], str]  # {(case, run id as the series name it): reason}
    failing: dict[SeriesKey, Failing] = field(default_factory=dict)

    def reason(self, step: Step) -> str | None:
        """Why the change at `step` was accepted, or None: it is open.

        Acknowledged at its first run after, or a slowdown accepted (a trailer, an
        acknowledgement) at any run of its new level: from the step to the next one.
        """
        direct = self.acknowledged.get((step.key.case, step.after.run_id))
        if direct is not None or step.kind != STEP:
            return direct
        one = self._series[step.key]
        later = [s.index for s in self.steps.get(step.key, ()) if s.kind == STEP and s.index > step.index]
        level = one.points[step.index:min(later, default=len(one.points))]
        return next((f"{p.accepted_reason} (at run {p.run_id})" for p in level if p.accepted_reason), None)

    @functools.cached_property
    def _series(self) -> dict[SeriesKey, Series]:
        return {one.key: one for one in self.series}

    def too_short(self) -> list[Series]:
        """The series with too few runs for any step: fewer than MIN_RUNS_AT_LEVEL on each side."""
        return [one for one in self.series if len(one) < 2 * MIN_RUNS_AT_LEVEL]


def failing_stretch(one: Series, steps: list[Step]) -> Failing | None:
    """The newest runs of `one` that failed and were not accepted, or None where the newest run did not fail."""
    count = 0
    for point in reversed(one.points):
        if not point.failed:
            break
        count += 1
    if not count:
        return None
    at = len(one.points) - count
    # the step whose new level the stretch starts in holds it, where that step is slower (not an older slower
    # step across a faster one: the stretch is then a failure of its own, open until accepted)
    level = [s for s in steps if s.kind == STEP and s.index <= at]
    holding = level[-1] if level and level[-1].direction == SLOWER else None
    return Failing(one.key, one.points[at], one.points[at - 1] if at else None, one.points[-1], count,
                   step=holding)


def analyse(store: HistoryStore, *, by: str = "gpu_uuid", gpu: str | None = None,
            floors: NoiseFloors = GPU_FLOORS) -> Analysis:
    """Read every run's series (one query; failed cases too), judge their steps at `floors` (a GPU-timed series'),
    read the acknowledgements, and the windows of the series still failing."""
    series = []
    for key, rows in store.case_series(by=by, gpu=gpu).items():
        kept = [row for row in rows if not row.throttled]
        if kept:
            series.append(series_from_rows(key, kept))
    limits = {one.key: detectable(one, floors) for one in series}
    steps = {one.key: detect_steps(one, limits[one.key].fraction) for one in series}
    acknowledged = {(case, str(run_id)): reason for (case, run_id), reason in store.acknowledgements().items()}
    failing = {}
    for one in series:
        stretch = failing_stretch(one, steps[one.key])
        if stretch is not None:
            record = store.case_record(one.key.case, int(stretch.first.run_id)) or {}
            failing[one.key] = dataclasses.replace(stretch, window=record.get("window"))
    return Analysis(series, limits, steps, acknowledged, failing)


def no_change_at(store: HistoryStore, case: str, run_id: int) -> str | None:
    """Why there is nothing of `case` to acknowledge at run `run_id` (`acknowledge`), or None: the case failed there
    (the nightly's verdict), or a step of one of its series (per GPU or per GPU model, as `changes` reads them)
    has its first run after there. None too where the run holds no such case: the store's own refusal names it."""
    wanted, failed, steps_at = str(run_id), set(), set()
    held = False
    for by in ("gpu_uuid", "gpu_model"):
        for key, rows in store.case_series(by=by, case=case).items():
            held = held or any(row.run_id == wanted for row in rows)
            failed.update(row.run_id for row in rows if row.outcome == "failed")
            kept = [row for row in rows if not row.throttled]
            if kept:
                one = series_from_rows(key, kept)
                steps_at.update(s.after.run_id for s in detect_steps(one, detectable(one).fraction) if s.kind == STEP)
    if not held or wanted in failed or wanted in steps_at:
        return None

    def listed(runs: set[str]) -> str:
        ordered = sorted(runs, key=int)
        return ", ".join(ordered[:6]) + (f" and {len(ordered) - 6} more" if len(ordered) > 6 else "")

    where = "; ".join(part for part in (f"its steps start at runs {listed(steps_at)}" if steps_at else "",
                                        f"it failed at runs {listed(failed)}" if failed else "") if part)
    return (f"run {run_id} holds {case}, but the case neither failed there nor does a step of it start there: nothing "
            f"to acknowledge ({where or 'it has no step and never failed'}; `changes` lists them)")

