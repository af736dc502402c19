"""The chart of a case's page: its runs left to right, their medians and middle halves, steps and acceptances.

Plain SVG written here (no library, nothing fetched when the page is read).

* x is by run: each run of the case (on any GPU) has its place, oldest left, so a day of
  ten runs is ten places apart and a week without runs is no gap. Up to `X_LABELS`
  places are labelled with the run, its date and its commit: the oldest, the newest and
  evenly between, never two closer than a label is wide (`labelled_places`).
* y has "nice" ticks (1, 2 or 5 times a power of ten, or 2.5) labelled with as many
  digits as it takes for no two labels to read the same.
* Each GPU is one colour (the legend names it by short UUID); a passed run is a circle, a
  failed one (slower, not accepted) a red triangle, an accepted slowdown an orange
  diamond, a run that failed besides its slower cases (a correctness test, or a run
  imported as failed) a grey cross. Every mark carries an SVG
  <title> with its run, date, commit, median, band and verdict.
* A step is a dashed line between its last run before and first run after, labelled above
  the frame with its commit range (once where two GPUs share it; on a second line where it
  would overlap another); an accepted slowdown a dotted line at its run, labelled "accepted". A label that
  would run past the right edge ends left of its line instead (`label_x`).
* `state_mark` draws a run's mark; the index's sparklines (src/kernelwatch/history/site.py) use
  the same shapes, smaller, so a run reads the same wherever it is drawn.

Elements a test (or a reader of the HTML) looks for carry classes and data attributes:
`svg.case-plot[data-points]`, `.point[data-run][data-state]` (circle for passed),
`line.step[data-before-run][data-after-run]`, `text.step-label`, `line.accepted[data-run]`, `text.x-tick`,
`text.y-tick`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

from kernelwatch.units import TIME_UNITS

from .series import Point, Series, SeriesKey
from .steps import STEP, Step

PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
FAILED_COLOUR, ACCEPTED_COLOUR, RUN_FAILED_COLOUR = "#d62728", "#ff7f0e", "#555555"
WIDTH, HEIGHT = 960, 360
LEFT, RIGHT, TOP, BOTTOM = 84, 48, 34, 64
X_LABELS = 8
# the widest character of an 11 px sans-serif label, and the room kept between two labels: where labels may go
CHAR_PX, LABEL_GAP_PX = 6.5, 8
STEP_LABEL_ROWS = 2  # lines of step labels above the frame (TOP leaves room for two)
Y_TICKS = 5


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def short_uuid(uuid: str | None) -> str:
    """"GPU-19ed6398" for a full GPU UUID: enough to tell a pool's GPUs apart, short enough for a table."""
    if not uuid:
        return "no UUID"
    return uuid[:12] if uuid.startswith("GPU-") else uuid[:8]


def nice_ticks(low: float, high: float, count: int = Y_TICKS) -> list[float]:
    """Round values from at or below `low` to at or above `high`, 1, 2, 2.5 or 5 times a power of ten apart:
    the largest such step that gives at least `count` - 1 ticks (so never two, and rarely more than nine)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    power = 10 ** math.floor(math.log10(high - low))
    for step in sorted((m * p for p in (power, power / 10, power / 100) for m in (1, 2, 2.5, 5)), reverse=True):
        first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
        if last - first + 1 >= count - 1:
            return [round(i * step, 15) for i in range(first, last + 1)]
    return [low, high]


def tick_labels(values: Sequence[float]) -> list[str]:
    """Labels of durations (seconds) in one unit, with the fewest decimals that keep them all different
    and each within 1% of the ticks' step of its value (so 2.9305 ms is not written 2.930 ms)."""
    unit, scale = _unit_of(max(abs(v) for v in values) if values else 0)
    scaled = [v / scale for v in values]
    gaps = [abs(b - a) for a, b in zip(scaled, scaled[1:], strict=False) if b != a]  # in any order
    tolerance = min(gaps) / 100 if gaps else 0.0
    for decimals in range(0, 9):
        labels = [f"{v:.{decimals}f}" for v in scaled]
        close = (all(abs(float(label) - v) <= tolerance for label, v in zip(labels, scaled, strict=True))
                 if gaps else decimals >= 3)
        if len(set(labels)) == len(labels) and close:
            break
    return [f"{label} {unit}" for label in labels]


def _unit_of(seconds: float) -> tuple[str, float]:
    """(unit, its seconds) that writes `seconds` under a thousand: 1 µs is 1.000 µs, not 1000 ns (in floating
    point 1e-6 / 1e-9 is 999.9999999999999, so the quotient is rounded before it is compared)."""
    return next(((u, s) for u, s in TIME_UNITS if round(seconds / s, 9) < 1000), TIME_UNITS[-1])


def precise(seconds: float) -> str:
    """4 significant figures: enough to see a 0.2% move in a tooltip or the runs table. Rounded before the unit is
    chosen, so 999.96 µs reads 1.000 ms (not 1000.0 µs) and 9.9996 ms 10.00 ms."""
    if seconds > 0:
        seconds = float(f"{seconds:.4g}")
    unit, scale = _unit_of(seconds)
    value = seconds / scale
    return f"{value:.{max(0, 3 - math.floor(math.log10(value)))}f} {unit}" if value > 0 else f"0 {unit}"


def point_tip(p: Point) -> str:
    verdict = p.verdict or "not judged"
    state = f"{p.state}" + (f": {p.accepted_reason}" if p.accepted_reason else "")
    return (f"run {p.run_id}, {p.started_at:%Y-%m-%d %H:%M} UTC, commit {p.commit[:12]}"
            f"{f' ({p.branch})' if p.branch else ''}: median {precise(p.median_s)}, band "
            f"{precise(p.low_s)}-{precise(p.high_s)}, {p.sample_count} samples, verdict {verdict} ({state}), "
            f"{p.gpu_uuid or 'no UUID'}")


def state_mark(p: Point, cx: float, cy: float, colour: str, *, size: float = 5.0, css: str = "point") -> str:
    """The mark of run `p` at (cx, cy): a circle for a passed run, a red triangle for a failed one, an orange
    diamond for an accepted slowdown, a grey cross where its run failed; `size` is the half width of the
    triangle and the diamond (the chart's 5 px, the sparklines' 3). The same shapes on every drawing of a run."""
    data = (f'class="{css} {p.state.replace(" ", "-")}" data-run="{_e(p.run_id)}" data-state="{_e(p.state)}"')
    tip = f"<title>{_e(point_tip(p))}</title>"
    r = size
    if p.state == "failed":
        return (f'<path {data} d="M{cx:.1f},{cy - 1.1 * r:.1f} L{cx + r:.1f},{cy + 0.7 * r:.1f} '
                f'L{cx - r:.1f},{cy + 0.7 * r:.1f} Z" fill="{FAILED_COLOUR}" stroke="#7a0010" stroke-width="0.8">'
                f'{tip}</path>')
    if p.state == "accepted":
        return (f'<path {data} d="M{cx:.1f},{cy - r:.1f} L{cx + r:.1f},{cy:.1f} L{cx:.1f},{cy + r:.1f} '
                f'L{cx - r:.1f},{cy:.1f} Z" fill="{ACCEPTED_COLOUR}" stroke="#8a4500" stroke-width="0.8">{tip}</path>')
    if p.state == "run failed":
        c = 0.8 * r
        return (f'<path {data} d="M{cx - c:.1f},{cy - c:.1f} L{cx + c:.1f},{cy + c:.1f} M{cx - c:.1f},{cy + c:.1f} '
                f'L{cx + c:.1f},{cy - c:.1f}" stroke="{RUN_FAILED_COLOUR}" stroke-width="{0.4 * r:g}" fill="none">'
                f'{tip}</path>')
    return f'<circle {data} cx="{cx:.1f}" cy="{cy:.1f}" r="{0.6 * r:g}" fill="{colour}">{tip}</circle>'


def _short_range(step: Step) -> str:
    return f"{step.before.commit[:8]}..{step.after.commit[:8]}"


def colours(group: Sequence[Series]) -> dict[SeriesKey, str]:
    return {one.key: PALETTE[i % len(PALETTE)] for i, one in enumerate(group)}


def case_plot(case: str, group: Sequence[Series], steps: Mapping[SeriesKey, Sequence[Step]]) -> str:
    """One SVG of a case's series (each GPU, timer and profile of it): see the module docstring."""
    points = [p for one in group for p in one.points]
    runs = sorted({(p.started_at, p.run_id): p for p in points}.values(), key=lambda p: (p.started_at, p.run_id))
    place = {p.run_id: i for i, p in enumerate(runs)}
    span = max(len(runs) - 1, 1)
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(p: Point) -> float:
        return LEFT + (place[p.run_id] / span if len(runs) > 1 else 0.5) * width

    data_low, data_high = min(p.low_s for p in points), max(p.high_s for p in points)
    if data_high <= data_low:  # no spread at all: 1% either side
        data_low, data_high = data_low * 0.99, data_high * 1.01
    ticks = nice_ticks(data_low, data_high)
    low, high = ticks[0], ticks[-1]  # the axis runs from tick to tick: a label at both ends

    def y(value: float) -> float:
        return TOP + height - (value - low) / (high - low) * height

    parts = [f'<svg class="case-plot" data-case="{_e(case)}" data-points="{len(points)}" width="{WIDTH}" '
             f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img">',
             f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{height}" fill="none" stroke="#888"/>']
    for value, label in zip(ticks, tick_labels(ticks), strict=True):
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + width}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#eee"/>'
                     f'<text class="y-tick" x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{_e(label)}</text>')
    longest = max(len(f"run {p.run_id}") for p in runs)
    for i in labelled_places(len(runs), width / span, max(longest, len("12-31 23:59"))):
        p = runs[i]
        parts.append(f'<text class="x-tick" x="{x(p):.1f}" y="{TOP + height + 14}" text-anchor="middle">'
                     f'<tspan x="{x(p):.1f}">run {_e(p.run_id)}</tspan>'
                     f'<tspan x="{x(p):.1f}" dy="12">{p.started_at:%m-%d %H:%M}</tspan>'
                     f'<tspan x="{x(p):.1f}" dy="12">{_e(p.commit[:8])}</tspan></text>')
    colour_of = colours(group)
    step_labels: list[tuple[float, str]] = []  # (x, text) of each step's commit range, once
    for one in group:
        colour = colour_of[one.key]
        upper = [f"{x(p):.1f},{y(p.high_s):.1f}" for p in one.points]
        lower = [f"{x(p):.1f},{y(p.low_s):.1f}" for p in reversed(one.points)]
        parts.append(f'<g class="series" data-gpu="{_e(one.key.gpu)}"><title>{_e(legend_text(one.key))}</title>'
                     f'<polygon class="band" fill="{colour}" points="{" ".join(upper + lower)}"/>'
                     f'<polyline fill="none" stroke="{colour}" stroke-width="1.3" '
                     f'points="{" ".join(f"{x(p):.1f},{y(p.median_s):.1f}" for p in one.points)}"/>'
                     + "".join(state_mark(p, x(p), y(p.median_s), colour) for p in one.points) + "</g>")
        for s in steps.get(one.key, ()):
            line, label = _step_mark(s, x, colour, height)
            parts.append(line)
            if label is not None and label not in step_labels:
                step_labels.append(label)
        for p in one.points:
            if p.state == "accepted":
                parts.append(f'<line class="accepted" data-run="{_e(p.run_id)}" x1="{x(p):.1f}" y1="{TOP}" '
                             f'x2="{x(p):.1f}" y2="{TOP + height}" stroke="{ACCEPTED_COLOUR}" stroke-dasharray="2 3">'
                             f'<title>{_e(f"accepted at run {p.run_id} (commit {p.commit[:12]}): {p.accepted_reason}")}'
                             f'</title></line><text x="{label_x(x(p), f"accepted {p.commit[:8]}"):.1f}" y="{TOP + 12}" '
                             f'fill="#8a4500">accepted {_e(p.commit[:8])}</text>')
    parts += _step_labels(step_labels)
    parts.append("</svg>")
    return "".join(parts)


def labelled_places(count: int, place_px: float, chars: int) -> list[int]:
    """The places (0 = oldest) of `count` runs `place_px` apart that get an x label: the oldest, the newest and
    evenly between, at most `X_LABELS`, and never two closer than a label of `chars` characters is wide."""
    if count <= 1:
        return list(range(count))
    every = max(1, math.ceil(count / X_LABELS), math.ceil((chars * CHAR_PX + LABEL_GAP_PX) / place_px))
    intervals = (count - 1) // every
    if intervals == 0:
        return [count - 1]  # no room for two: the newest alone
    return [round(i * (count - 1) / intervals) for i in range(intervals + 1)]


def label_x(line_x: float, text: str) -> float:
    """Where a label of a vertical line starts: 3 px right of it, or, where it would run past the chart's right
    edge (near the newest run: RIGHT leaves 48 px), ending 3 px left of it."""
    width = len(text) * CHAR_PX
    return line_x + 3 if line_x + 3 + width <= WIDTH else line_x - 3 - width


def _step_labels(labels: Sequence[tuple[float, str]]) -> list[str]:
    """The steps' commit ranges above the frame, left to right, each on the first line (of two) where it overlaps
    no other; one with no room on either is left to its line's tooltip."""
    rows: list[list[tuple[float, float]]] = [[] for _ in range(STEP_LABEL_ROWS)]
    parts = []
    for mid, text in sorted(labels):
        left = label_x(mid, text)
        right = left + len(text) * CHAR_PX
        # each label keeps LABEL_GAP_PX / 2 on either side: LABEL_GAP_PX between two
        wide = (left - LABEL_GAP_PX / 2, right + LABEL_GAP_PX / 2)
        row = next((r for r, taken in enumerate(rows) if all(wide[1] < a or b < wide[0] for a, b in taken)), None)
        if row is None:
            continue
        rows[row].append(wide)
        parts.append(f'<text class="step-label" x="{left:.1f}" y="{TOP - 6 - 12 * row}">{_e(text)}</text>')
    return parts


def _step_mark(s: Step, x, colour: str, height: float) -> tuple[str, tuple[float, str] | None]:
    """A step's dashed line (a creep's stretch), and where its label goes: (x, its commit range), None for a creep."""
    tip = (f"{s.kind} {s.direction}: x{s.ratio:.3f} ({s.ratio_low:.3f}-{s.ratio_high:.3f}), between runs "
           f"{s.before.run_id} and {s.after.run_id}, commits {s.commit_range}")
    if s.kind == STEP:
        mid = (x(s.before) + x(s.after)) / 2
        return (f'<line class="step {s.direction}" data-before-run="{_e(s.before.run_id)}" '
                f'data-after-run="{_e(s.after.run_id)}" x1="{mid:.1f}" y1="{TOP}" x2="{mid:.1f}" '
                f'y2="{TOP + height}" stroke="{colour}"><title>{_e(tip)}</title></line>', (mid, _short_range(s)))
    return (f'<rect class="creep {s.direction}" data-before-run="{_e(s.before.run_id)}" '
            f'data-after-run="{_e(s.after.run_id)}" x="{x(s.before):.1f}" y="{TOP}" '
            f'width="{max(x(s.after) - x(s.before), 1):.1f}" height="{height}"><title>{_e(tip)}</title></rect>', None)


def short_gpu(gpu: str) -> str:
    """A series' GPU as a table shows it: a UUID shortened, a model name (`--by gpu_model`) whole."""
    return short_uuid(gpu) if gpu.startswith("GPU-") else gpu


def legend_text(key: SeriesKey) -> str:
    return f"{short_gpu(key.gpu)} ({key.timer}, {key.profile})"


def legend(group: Sequence[Series]) -> str:
    """The key of the chart: a colour per GPU (and timer, profile), then the marks of a run's state."""
    colour_of = colours(group)
    items = [f'<span class="legend-gpu" data-gpu="{_e(one.key.gpu)}"><svg width="18" height="10"><line x1="0" '
             f'y1="5" x2="18" y2="5" stroke="{colour_of[one.key]}" stroke-width="3"/></svg> '
             f'{_e(legend_text(one.key))}</span>' for one in group]
    return f'<p class="legend">{" ".join(items)} {mark_key()}</p>'


def mark_key(*, passed: bool = True) -> str:
    """The key of the marks of a run's state (the chart's and the sparklines'): one span each (a passed run's
    circle only where `passed`: a sparkline marks only the runs that did not pass)."""
    marks = ((("passed", "circle", "#444"),) if passed else ()) + (("failed: slower", "triangle", FAILED_COLOUR),
             ("accepted slowdown", "diamond", ACCEPTED_COLOUR), ("its run failed (a test besides its time)",
                                                                 "cross", RUN_FAILED_COLOUR))
    shapes = {"circle": '<circle cx="6" cy="6" r="3.5" fill="{c}"/>',
              "triangle": '<path d="M6,1 L11,10 L1,10 Z" fill="{c}"/>',
              "diamond": '<path d="M6,1 L11,6 L6,11 L1,6 Z" fill="{c}"/>',
              "cross": '<path d="M2,2 L10,10 M2,10 L10,2" stroke="{c}" stroke-width="2"/>'}
    return " ".join(f'<span class="legend-mark"><svg width="12" height="12">{shapes[shape].format(c=colour)}</svg> '
                    f'{_e(label)}</span>' for label, shape, colour in marks)
