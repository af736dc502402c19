"""The index's sparklines and a case page's energy lines: small SVG lines on one relative scale.

Each line draws its values over a centre (a sparkline: the series' reference, reference.py;
an energy line: its own median), the centre a dashed line across the middle, ± a scale from
top to bottom: the smallest of SCALES that holds every line of the page (`shared_scale`), so
0.3% of noise is drawn a tenth the height of a 3% step; a value beyond ±10% is drawn at the
edge and the line's tooltip counts it. Each run that did not pass (failed, accepted, its run
failed) carries the chart's mark for it (chart.state_mark), smaller.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Iterable, Sequence

from .chart import state_mark
from .reference import Reference
from .series import Point, Series

SPARK_WIDTH, SPARK_HEIGHT = 160, 32
SPARK_PAD = 4  # room around the line for the marks of its first and last runs and of its highest and lowest
# the sparklines' scale, ± over the reference: the smallest that holds every line on the page, the last at most
SCALES = (0.01, 0.02, 0.05, 0.10)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _deviations(values: Sequence[float], centre: float) -> list[float]:
    """Each value over `centre`, less one (0 where the centre is 0: nothing to be relative to)."""
    return [value / centre - 1 if centre else 0.0 for value in values]


def shared_scale(lines: Iterable[tuple[Sequence[float], float]]) -> float:
    """The one scale of the sparklines (values, centre) on a page: the smallest of SCALES that holds them all."""
    largest = max((abs(d) for values, centre in lines for d in _deviations(values, centre)), default=0.0)
    return next((scale for scale in SCALES if largest <= scale * (1 + 1e-9)), SCALES[-1])  # 1.01 / 1 - 1 > 0.01


def centre_of(one: Series, reference: Reference | None) -> float:
    return reference.median_s if reference is not None else statistics.median(one.medians())


def sparkline(series: Series, reference: Reference | None = None, scale: float | None = None) -> str:
    """A small inline SVG of the series' medians over `reference` (its median where None), the reference a
    dashed line across the middle, ± `scale` from top to bottom (where None: the smallest of SCALES that holds
    it); a failed, accepted or run-failed run carries its mark."""
    centre = centre_of(series, reference)
    values = series.medians()
    scale = scale or shared_scale([(values, centre)])
    source = reference.source if reference is not None else "the median of its runs"
    return _line(list(zip(values, series.points, strict=True)), centre, scale, "sparkline", "#1f77b4",
                 f"medians over the reference (the dashed line: {source})")


def energy_line(series: Series, scale: float | None = None) -> str:
    """The same for the joules per launch of the series' runs that measured energy, over their median ("" where
    none did)."""
    measured = [(p.energy_j, p) for p in series.points if p.energy_j is not None]
    if not measured:
        return ""
    centre = statistics.median(value for value, _ in measured)
    scale = scale or shared_scale([([value for value, _ in measured], centre)])
    return _line(measured, centre, scale, "energy-line", "#2e7d32",
                 "joules per launch over their median (the dashed line)")


def _line(values: Sequence[tuple[float, Point]], centre: float, scale: float, css: str, colour: str,
          what: str) -> str:
    """A small SVG line of (value, run) oldest first, ± `scale` around `centre` from top to bottom (a value
    beyond drawn at the edge), each run that did not pass marked as the chart marks it."""
    if not values:
        return ""
    deviations = _deviations([value for value, _ in values], centre)
    half = SPARK_HEIGHT / 2 - SPARK_PAD
    step = (SPARK_WIDTH - 2 * SPARK_PAD) / max(len(values) - 1, 1)
    xy = [(SPARK_PAD + i * step, SPARK_HEIGHT / 2 - max(-1.0, min(1.0, d / scale)) * half)
          for i, d in enumerate(deviations)]
    marks = "".join(state_mark(p, px, py, colour, size=3, css="mark")
                    for (px, py), (_, p) in zip(xy, values, strict=True) if p.state != "passed")
    beyond = sum(abs(d) > scale for d in deviations)
    tip = (f"{what}: ±{scale:.0%} from top to bottom, one scale for every line of the page; this one "
           f"{min(deviations):+.1%} to {max(deviations):+.1%}"
           + (f", {beyond} run{'s' if beyond != 1 else ''} beyond the scale drawn at its edge" if beyond else ""))
    return (f'<svg class="{css}" width="{SPARK_WIDTH}" height="{SPARK_HEIGHT}" data-scale="{scale:g}" '
            f'viewBox="0 0 {SPARK_WIDTH} {SPARK_HEIGHT}"><title>{_e(tip)}</title>'
            f'<line class="reference" x1="{SPARK_PAD}" x2="{SPARK_WIDTH - SPARK_PAD}" y1="{SPARK_HEIGHT / 2:g}" '
            f'y2="{SPARK_HEIGHT / 2:g}" stroke="#999" stroke-dasharray="2 2"/>'
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.2" '
            f'points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in xy)}"/>{marks}</svg>')
