"""The accuracy chart of a case's page, and the index's accuracy table (src/kernelwatch/history/site.py).

The chart draws a check's maximum error (filled marks) and average error (open marks) per run, left to right as
the time chart does, on a log scale, with its tolerance as a dashed red line; a failed check (less accurate, or
out of its tolerance) is a red triangle, an accepted one an orange diamond, as in the time chart. A step
(src/kernelwatch/history/accuracy.py) is a dashed vertical line at its first run after. Elements carry
`svg.accuracy-chart`, `.accuracy-point[data-run][data-state][data-error]`, `line.tolerance`,
`line.accuracy-step[data-after-run]`. The index's table flags a check with less than a tenth of its
tolerance left (`tr.accuracy-row[data-flag="near tolerance"]`).
"""

from __future__ import annotations

import html
import math

from kernelwatch.verdict.accuracy import format_error, inputs_text, margin_words

WIDTH, HEIGHT = 960, 260
LEFT, RIGHT, TOP, BOTTOM = 84, 48, 20, 40
COLOURS = {"passed": "#1f77b4", "failed": "#d62728", "accepted": "#ff7f0e"}


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def accuracy_chart(points, steps=()) -> str:
    """The SVG of one check's series (StoredAccuracy, oldest first)."""
    values = [v for p in points for v in (p.record.max_error, p.record.avg_error, p.record.tolerance_max)
              if v is not None and v > 0]
    if not values:
        return '<p class="notes">no finite error above zero to draw (exact results)</p>'
    low, high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    high = max(high, low + 1)
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(index: int) -> float:
        return LEFT + (width * (index + 0.5) / len(points))

    def y(value: float) -> float:
        return TOP + height * (high - math.log10(value)) / (high - low)

    parts = [f'<svg class="accuracy-chart" data-points="{len(points)}" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" '
             f'font-size="11">',
             f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{height}" fill="none" stroke="#999"/>']
    for power in range(low, high + 1):
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + width}" y1="{y(10 ** power):.1f}" y2="{y(10 ** power):.1f}" '
                     f'stroke="#eee"/><text class="y-tick" x="{LEFT - 6}" y="{y(10 ** power) + 4:.1f}" '
                     f'text-anchor="end">1e{power}</text>')
    tolerances = [(i, p.record.tolerance_max) for i, p in enumerate(points) if p.record.tolerance_max]
    for i, tolerance in tolerances:
        parts.append(f'<line class="tolerance" x1="{x(i) - width / len(points) / 2:.1f}" '
                     f'x2="{x(i) + width / len(points) / 2:.1f}" y1="{y(tolerance):.1f}" y2="{y(tolerance):.1f}" '
                     f'stroke="#d62728" stroke-dasharray="6,4"/>')
    if tolerances:
        parts.append(f'<text x="{LEFT + width - 4}" y="{y(tolerances[-1][1]) - 4:.1f}" text-anchor="end" '
                     f'fill="#d62728">tolerance {format_error(tolerances[-1][1])}</text>')
    for step in steps:
        i = points.index(step.after)
        parts.append(f'<line class="accuracy-step" data-after-run="{step.after.run_id}" x1="{x(i) - 0.5 * width / len(points):.1f}" '
                     f'x2="{x(i) - 0.5 * width / len(points):.1f}" y1="{TOP}" y2="{TOP + height}" stroke="#555" '
                     f'stroke-dasharray="3,3"><title>{_e(step.direction)} at run {step.after.run_id}, commits '
                     f'{_e(step.commit_range)}</title></line>')
    for name, filled in (("avg", False), ("max", True)):
        coords = [(x(i), y(getattr(p.record, f"{name}_error"))) for i, p in enumerate(points)
                  if (getattr(p.record, f"{name}_error") or 0) > 0]
        if len(coords) > 1:
            dash = "" if filled else 'stroke-dasharray="2,2" '
            line = " ".join(f"{a:.1f},{b:.1f}" for a, b in coords)
            parts.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1" {dash}points="{line}"/>')
        for i, p in enumerate(points):
            value = getattr(p.record, f"{name}_error")
            if not value or value <= 0:
                continue
            colour = COLOURS.get(p.state, "#555")
            tip = (f"run {p.run_id}, {p.started_at} UTC, commit {(p.commit or '?')[:12]}: {name} error "
                   f"{value:.6g}, verdict {p.record.verdict or 'not judged'} ({p.state}"
                   f"{': ' + p.accepted_reason if p.accepted_reason else ''})")
            data = (f'class="accuracy-point {name} {p.state}" data-run="{p.run_id}" data-state="{_e(p.state)}" '
                    f'data-error="{name}"')
            cx, cy = x(i), y(value)
            fill = colour if filled else "white"
            if p.state == "failed":
                shape = f'<path {data} d="M{cx:.1f},{cy - 6:.1f} L{cx + 5:.1f},{cy + 4:.1f} L{cx - 5:.1f},{cy + 4:.1f} Z"'
            elif p.state == "accepted":
                shape = f'<path {data} d="M{cx:.1f},{cy - 6:.1f} L{cx + 5:.1f},{cy:.1f} L{cx:.1f},{cy + 6:.1f} L{cx - 5:.1f},{cy:.1f} Z"'
            else:
                shape = f'<circle {data} cx="{cx:.1f}" cy="{cy:.1f}" r="4"'
            parts.append(f'{shape} fill="{fill}" stroke="{colour}" stroke-width="1.5"><title>{_e(tip)}</title>'
                         f'{"</path>" if shape.startswith("<path") else "</circle>"}')
    for i, p in enumerate(points):
        if len(points) <= 12 or i in (0, len(points) - 1) or i % max(1, len(points) // 8) == 0:
            parts.append(f'<text class="x-tick" x="{x(i):.1f}" y="{TOP + height + 16}" text-anchor="middle">'
                         f'{p.run_id}</text>')
    parts.append(f'<text x="{LEFT + width / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">run (filled: maximum '
                 f'error, open: average error; per element, log scale)</text></svg>')
    return "".join(parts)


def accuracy_section(points, steps=()) -> str:
    """A case page's accuracy section: the chart and a table of the checks, newest first."""
    rows = "".join(
        f'<tr class="accuracy-run" data-run="{p.run_id}" data-state="{_e(p.state)}"><td>{p.run_id}</td>'
        f"<td>{_e((p.commit or '?')[:12])}</td><td>{format_error(p.record.max_error)}</td>"
        f"<td>{format_error(p.record.avg_error)}</td><td>{format_error(p.record.tolerance_max)}</td>"
        f"<td>{'' if p.record.margin is None else f'{100 * p.record.margin:.1f}%'}</td>"
        f"<td>{_e(p.record.verdict or 'not judged')}</td><td>{_e(p.state)}</td></tr>" for p in reversed(points))
    newest = points[-1].record
    inputs = inputs_text(newest)
    return (f"<h2>Accuracy</h2><p>{_e(inputs)}; measure {_e(newest.measure or 'not given')}</p>"
            f"{accuracy_chart(points, steps)}<table><tr><th>run</th><th>commit</th><th>max error</th>"
            "<th>avg error</th><th>tolerance</th><th>margin left</th><th>verdict</th><th>state</th></tr>"
            f"{rows}</table>")


def accuracy_index(series, page_name) -> str:
    """The index's table of every check: newest errors, margin left (flagged under a tenth), newest verdict."""
    if not series:
        return ""
    lines = []
    for key, points in sorted(series.items(), key=lambda item: (item[1][-1].state != "failed", item[0].case)):
        newest = points[-1]
        margin = newest.record.margin
        words = margin_words(margin)
        flag = "near tolerance" if words else ""
        lines.append(f'<tr class="accuracy-row" data-kernel="{_e(key.case)}" data-state="{_e(newest.state)}" '
                     f'data-flag="{flag}"><td class="case"><a href="cases/{page_name(key.case)}">'
                     f'{_e(key.case.rsplit("::", 1)[-1])}</a></td><td>{_e(key.gpu or "no UUID")}</td><td>{len(points)}</td>'
                     f"<td>{format_error(newest.record.max_error)}</td><td>{format_error(newest.record.avg_error)}</td>"
                     f"<td>{'' if margin is None else f'{100 * margin:.1f}%'}"
                     f"{f' ⚠ {words}' if words else ''}"
                     f"</td><td>{_e(newest.record.verdict or 'not judged')}</td></tr>")
    return ("<h2>Accuracy</h2><table class=\"accuracy\"><tr><th>check</th><th>GPU</th><th>runs</th>"
            "<th>newest max error</th><th>avg error</th><th>margin left to tolerance</th><th>newest verdict</th></tr>"
            + "".join(lines) + "</table>")
