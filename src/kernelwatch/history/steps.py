"""Change points of a case's history: steps (and slow creeps) in its medians, per series.

Method (measured against apache-otava's E-divisive on the same synthetic
histories: docs/method.md#change-points):

1. The signal is the log of each run's median, so that a step is a ratio
   whatever the case's duration.
2. Its noise is read off the series itself: a robust scale of the successive
   differences (1.4826 x their MAD / sqrt 2). A step moves one difference only,
   so the scale is that of the run-to-run noise even in a series with steps.
3. ruptures' PELT with the least-squares cost (from prefix sums) segments the signal divided by
   that scale, with a penalty of `PENALTY` x log(n): candidates only.
4. Each candidate is judged on the runs beside it (up to `window` on each side,
   no further than the neighbouring change points): the ratio of the medians of
   the runs after to those before, a bootstrap interval of that ratio, and
   Welch's t-test on the log medians for its p-value (with fewer than
   `MIN_RUNS_FOR_WELCH` runs on a side, as for a step in the newest runs: the
   difference of the means over the series' own noise scale, since three runs
   cannot show their own spread). A candidate whose p-value
   is not below `alpha`, or whose ratio is not at least `detectable` away from
   1, or that stands where the fewest runs at a level (`min_size`) alone put
   it (a newer level of fewer runs: not settled yet), is dropped, and its
   neighbours are judged again on the merged runs, until every change point
   left passes (the merge step of Hunter/otava, with
   PELT's candidates).
5. Inside each stretch between the steps left, a slow creep is looked for: a
   flat line that bends into a straight ramp of at least `creep_min_runs` runs
   (a hinge), fitted by least squares at every bend position; the best fit
   whose slope has a t-statistic of at least `CREEP_T` and whose total rise is
   at least `creep_detectable` is a creep, unless one step fits those runs
   better than the bent line does (then it is a step smaller than
   `detectable`, and not reported).

Everything here is a pure function of a `Series`: no database, no files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import ruptures
from ruptures.base import BaseCost
from scipy import stats

from kernelwatch.verdict.labels import FASTER, SLOWER

from .series import Point, Series, SeriesKey, commit_range

STEP = "step"
CREEP = "creep"

# PELT's penalty per change point, in units of the noise variance times log(n): candidates only,
# the t-test and the detectable change decide (see the module docstring, docs/method.md#change-points for the figures).
PENALTY = 3.0
# the fewest runs at a level either side of a step (a step in the newest run alone is not told from a slow run)
MIN_RUNS_AT_LEVEL = 3
# the smallest noise scale assumed (relative): a series of identical medians has none
MIN_SCALE = 1e-4
# t-statistic of a creep's slope (a hinge fitted at its best bend: no nominal p-value holds; this one
# was set on synthetic clean histories, docs/method.md#change-points)
CREEP_T = 4.0
BOOTSTRAP_RESAMPLES = 2000
# fewer runs than this on a side of a step: its p-value uses the series' noise scale, not the side's own spread
MIN_RUNS_FOR_WELCH = 8
# a creep is no creep when one step leaves a residual sum of squares smaller by more than this many
# residual variances: then it is a step below the detectable change (docs/method.md#change-points)
STEP_OVER_CREEP = 8.0


@dataclass(frozen=True)
class Step:
    """One change of a series: between the run `before` and the run `after`.

    kind STEP: `before` is the last run of the old level, `after` the first of
    the new one, `index` is `after`'s position in the series. kind CREEP: the
    medians rose (or fell) steadily from `before` (the bend) to `after` (the
    last run of the ramp).  `ratio` is new over old (medians of the runs either
    side for a step, the fitted line's end over its start for a creep), with a
    `confidence` interval `ratio_low`..`ratio_high`.
    """

    key: SeriesKey
    kind: str
    direction: str
    index: int
    before: Point
    after: Point
    ratio: float
    ratio_low: float
    ratio_high: float
    p_value: float
    runs_before: int
    runs_after: int

    @property
    def commit_range(self) -> str:
        return commit_range(self.before, self.after)

    @property
    def change(self) -> float:
        """The relative change: +0.02 for 2% slower."""
        return self.ratio - 1


def noise_scale(logs: np.ndarray) -> float:
    """Robust run-to-run scale of a log signal: 1.4826 x MAD of its successive differences / sqrt(2)."""
    if logs.size < 3:
        return MIN_SCALE
    diffs = np.diff(logs)
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    return max(1.4826 * mad / math.sqrt(2), MIN_SCALE)


class PrefixSumL2(BaseCost):
    """ruptures' least-squares cost (CostL2) from prefix sums: O(1) a segment, not a variance each time."""

    model = "l2_prefix_sums"
    min_size = 1  # as CostL2's: a level of one run has a cost (0); Pelt's own min_size sets the fewest runs

    def fit(self, signal):
        self.signal = np.asarray(signal, dtype=float).reshape(len(signal), -1)
        values = self.signal[:, 0]
        self.sums = np.concatenate(([0.0], np.cumsum(values))).tolist()
        self.squares = np.concatenate(([0.0], np.cumsum(values * values))).tolist()
        return self

    def error(self, start, end):
        total = self.sums[end] - self.sums[start]
        return self.squares[end] - self.squares[start] - total * total / (end - start)


def _candidates(logs: np.ndarray, scale: float, min_size: int) -> list[int]:
    n = logs.size
    if n < 2 * min_size:
        return []
    algo = ruptures.Pelt(custom_cost=PrefixSumL2(), min_size=min_size, jump=1).fit(logs / scale)
    return [b for b in algo.predict(pen=PENALTY * math.log(n)) if b < n]


def _bootstrap_ratio(left: np.ndarray, right: np.ndarray, confidence: float,
                     rng: np.random.Generator) -> tuple[float, float]:
    lefts = rng.choice(left, size=(BOOTSTRAP_RESAMPLES, left.size))
    rights = rng.choice(right, size=(BOOTSTRAP_RESAMPLES, right.size))
    diffs = np.median(rights, axis=1) - np.median(lefts, axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(diffs, [tail, 1 - tail])
    return math.exp(low), math.exp(high)


def _judge(logs: np.ndarray, start: int, at: int, end: int, window: int, scale: float) -> tuple[float, float]:
    """(ratio, p-value) of a change at `at` between the stretches [start, at) and [at, end).

    The p-value is Welch's t-test where both sides have runs enough to show their own
    spread (MIN_RUNS_FOR_WELCH); with fewer (a step in the newest runs), the difference
    of means over the series' own noise scale, as a normal deviate.
    """
    left, right = logs[max(start, at - window):at], logs[at:min(end, at + window)]
    ratio = math.exp(float(np.median(right) - np.median(left)))
    if min(left.size, right.size) < MIN_RUNS_FOR_WELCH:
        z = (right.mean() - left.mean()) / (scale * math.sqrt(1 / left.size + 1 / right.size))
        return ratio, float(2 * stats.norm.sf(abs(z)))
    if np.ptp(left) == 0 and np.ptp(right) == 0:
        return ratio, 0.0 if ratio != 1 else 1.0
    p = float(stats.ttest_ind(right, left, equal_var=False).pvalue)
    return ratio, p if math.isfinite(p) else 1.0


def _merge(logs: np.ndarray, breaks: list[int], detectable: float, alpha: float, window: int,
           scale: float, min_size: int) -> list[int]:
    """Drop the weakest failing change point and judge again, until every one left passes. A change point
    fails where the test or the detectable change says so, and where `min_size` alone placed it (_held_back)."""
    breaks = list(breaks)
    while breaks:
        bounds = [0, *breaks, logs.size]
        judged = [_judge(logs, bounds[i], bounds[i + 1], bounds[i + 2], window, scale) for i in range(len(breaks))]
        failing = [i for i, (ratio, p) in enumerate(judged) if p >= alpha or abs(ratio - 1) < detectable
                   or _held_back(logs, bounds[i], bounds[i + 1], bounds[i + 2], min_size)]
        if not failing:
            return breaks
        weakest = max(failing, key=lambda i: (judged[i][1], -abs(judged[i][0] - 1)))
        del breaks[weakest]
    return breaks


def _creep(logs: np.ndarray, start: int, end: int, min_runs: int) -> tuple[int, float, float, float] | None:
    """The best hinge fit in [start, end): (bend index, slope per run, slope's standard error, t)."""
    y = logs[start:end]
    n = y.size
    if n < min_runs + 1:
        return None
    t = np.arange(n, dtype=float)
    bends = np.arange(0, n - min_runs)
    z = np.maximum(0.0, t[None, :] - bends[:, None])  # one row per bend
    zc = z - z.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    szz = (zc * zc).sum(axis=1)
    slope = (zc * yc).sum(axis=1) / szz
    residual = ((yc[None, :] - slope[:, None] * zc) ** 2).sum(axis=1) / max(n - 2, 1)
    se = np.sqrt(residual / szz)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.where(se > 0, slope / se, np.where(slope != 0, np.inf, 0.0))
    best = int(np.argmax(np.abs(tstat)))
    step_residual = _best_step_residual(y, min_runs)
    if (residual[best] - step_residual) * max(n - 2, 1) > STEP_OVER_CREEP * step_residual:
        return None  # one step explains these runs clearly better than a ramp: a step below the detectable change
    return start + int(bends[best]), float(slope[best]), float(se[best]), float(tstat[best])


def _step_fits(y: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every place of one step in `y` that leaves `min_size` values a side, and the residual sum of squares
    of the two levels' fit at each."""
    n = y.size
    sums, squares = np.cumsum(y), np.cumsum(y * y)
    at = np.arange(min_size, n - min_size + 1)
    left = squares[at - 1] - sums[at - 1] ** 2 / at
    right = (squares[-1] - squares[at - 1]) - (sums[-1] - sums[at - 1]) ** 2 / (n - at)
    return at, left + right


def _best_step_residual(y: np.ndarray, min_size: int) -> float:
    """Residual variance (n - 2 degrees of freedom) of the best fit of one step to `y`."""
    at, residuals = _step_fits(y, min_size)
    if at.size == 0:
        return math.inf
    return float(residuals.min()) / max(y.size - 2, 1)


def _held_back(logs: np.ndarray, start: int, at: int, end: int, min_size: int) -> bool:
    """Whether the change point `at` (between the runs start..end) stands where `min_size` alone put it: a side
    of it holds exactly `min_size` runs, and one step fits those runs best further into that side, where
    fewer runs are left. Such a level is not yet settled (two slower newest runs of eight placed a step one
    run early, naming the commits of a run that was not slower)."""
    if min_size <= 1 or min(at - start, end - at) != min_size:
        return False
    places, residuals = _step_fits(logs[start:end], 1)
    best = start + int(places[int(np.argmin(residuals))])
    return (end - at == min_size and best > at) or (at - start == min_size and best < at)


def _direction(ratio: float) -> str:
    return SLOWER if ratio > 1 else FASTER


def detect_steps(series: Series, detectable: float, *, alpha: float = 1e-3, window: int = 30,
                 min_size: int = MIN_RUNS_AT_LEVEL,
                 creep_detectable: float = 0.005, creep_min_runs: int = 10, confidence: float = 0.95,
                 seed: int = 0) -> list[Step]:
    """The steps and creeps of one series, oldest first.

    `detectable`: the case's smallest detectable change (a fraction, e.g. 0.015
    for the same-GPU floor, src/kernelwatch/verdict/noise.py): smaller steps are not reported.
    `alpha`: the largest p-value of a step. `window`: at most this many runs on
    each side judge a step. `min_size`: the fewest runs at a level (a step in
    the newest run alone is not told from a slow run). `creep_detectable`: the
    smallest total rise of a creep. `seed`: of the bootstrap, so that a report
    is the same every time it is made.
    """
    if not 0 < detectable < 1:
        raise ValueError(f"detectable must be a fraction in (0, 1), got {detectable!r}")
    points = series.points
    logs = np.log(np.array([p.median_s for p in points], dtype=float))
    rng = np.random.default_rng(seed)
    scale = noise_scale(logs)
    breaks = _merge(logs, _candidates(logs, scale, min_size), detectable, alpha, window, scale, min_size)
    bounds = [0, *breaks, logs.size]
    found: list[Step] = []
    for i, at in enumerate(breaks):
        start, end = bounds[i], bounds[i + 2]
        ratio, p = _judge(logs, start, at, end, window, scale)
        left, right = logs[max(start, at - window):at], logs[at:min(end, at + window)]
        low, high = _bootstrap_ratio(left, right, confidence, rng)
        found.append(Step(series.key, STEP, _direction(ratio), at, points[at - 1], points[at], ratio, low, high, p,
                          left.size, right.size))
    for start, end in zip(bounds, bounds[1:], strict=False):
        fit = _creep(logs, start, end, creep_min_runs)
        if fit is None:
            continue
        bend, slope, se, tstat = fit
        runs = end - 1 - bend
        ratio = math.exp(slope * runs)
        if abs(tstat) < CREEP_T or abs(ratio - 1) < creep_detectable:
            continue
        tcrit = float(stats.t.ppf(1 - (1 - confidence) / 2, max(end - start - 2, 1)))
        p = float(2 * stats.t.sf(abs(tstat), max(end - start - 2, 1)))
        found.append(Step(series.key, CREEP, _direction(ratio), end - 1, points[bend], points[end - 1], ratio,
                          math.exp((slope - tcrit * se) * runs), math.exp((slope + tcrit * se) * runs), p,
                          bend - start + 1, runs))
    return sorted(found, key=lambda step: (step.index, step.kind))


def detect_all(series: Iterable[Series], detectable: float | Callable[[Series], float],
               **options) -> dict[SeriesKey, list[Step]]:
    """`detect_steps` of every series; `detectable` a fraction, or a function of the series giving it."""
    result = {}
    for one in series:
        limit = detectable(one) if callable(detectable) else detectable
        result[one.key] = detect_steps(one, limit, **options)
    return result


def newest_first(steps: Iterable[Step]) -> list[Step]:
    """Steps ordered by the date of their first run after, newest first."""
    return sorted(steps, key=lambda step: (step.after.started_at, step.key.case), reverse=True)


def steps_in_newest(steps: Sequence[Step], series: Series, newest: int) -> list[Step]:
    """The steps of `series` whose first run after lies among its `newest` runs."""
    first = len(series.points) - newest
    return [step for step in steps if step.index >= first]
