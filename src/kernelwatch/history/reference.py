"""What the dashboard's index compares a series' newest run with: `reference_of`.

The caller's reference where it knows one; else the median of up to EARLIER_RUNS runs of
the level before the series' first open slower step (or before its failing runs, or the open
step that holds them), back to the step before that; else of its level since its latest
step. So a case listed as slower and failing is never compared with its own failed runs,
and an accepted (or acknowledged) slowdown is the new level. A failed run, or one whose run
failed besides its cases, is never a reference (the store's reference query leaves both out).
The sparklines (sparklines.py) draw each run over the same reference.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .analysis import Failing
from .series import Series
from .steps import SLOWER, STEP, Step

# the earlier runs a series' latest median is compared with when the caller names no reference
EARLIER_RUNS = 30
# states of a run that is never a reference (the store's reference query leaves them out too)
NOT_A_REFERENCE = ("failed", "run failed")


@dataclass(frozen=True)
class Reference:
    """What the index compares a series' newest run with: a median (seconds) and, in words, whence it came."""

    median_s: float
    source: str


def reference_of(one: Series, steps: Sequence[Step], reason: Callable[[Step], str | None],
                 failing: Failing | None = None, given: float | None = None) -> Reference | None:
    """The reference of `one`'s newest run: `given` where the caller knows one; else the median of up to
    EARLIER_RUNS runs before the series' first open slower step (or before its failing runs, or the step
    that holds them, whichever is earlier), back to the step before that; else of the runs since its latest
    step. Failed runs (and runs that failed besides their cases) are never a reference. None: no run to
    compare with (a series of one run, or failed from its first run)."""
    if given:
        return Reference(given, "the reference given")
    points = one.points
    level_steps = [s for s in steps if s.kind == STEP]
    ends = {s.index: f"before the open slower step at run {s.after.run_id}" for s in level_steps
            if s.direction == SLOWER and reason(s) is None}
    if failing is not None:
        holding = failing.step if failing.step is not None and reason(failing.step) is None else None
        at = holding.index if holding is not None else len(points) - failing.runs
        ends.setdefault(at, f"before the failing runs since run {failing.first.run_id}")
    end = min(ends, default=len(points) - 1)
    since = max((s.index for s in level_steps if s.index < end), default=0)
    pool = [p for p in points[since:end] if p.state not in NOT_A_REFERENCE][-EARLIER_RUNS:]
    if not pool:
        return None
    where = ends.get(end) or (f"since the step at run {points[since].run_id}" if since else "before it")
    runs = f"run {pool[0].run_id}" if len(pool) == 1 else f"{len(pool)} runs, {pool[0].run_id} to {pool[-1].run_id}"
    return Reference(statistics.median(p.median_s for p in pool), f"the median of {runs}, {where}")
