"""A static dashboard of the cases' histories: `write_site(out_dir, series, steps)`.

Plain HTML with inline SVG written here, and a few lines of inline JavaScript
for the index's filters: no library, no CDN, no font, nothing fetched when the
pages are read, so the folder works from a file:// URL or any static host.

* index.html: one row per series (case x GPU x timer x profile): the latest
  median over its reference (the caller's, else the median of the series'
  earlier runs since its latest step), a sparkline, and the open slower steps
  (not acknowledged); rows with open slower steps come first. Filters by GPU
  (model or UUID, as the series are keyed), by the UUIDs of the runs, and by
  kernel (any part of the case id).
* cases/<name>.html: one page per case: for each GPU the median per run and
  its spread band over time, steps drawn as dashed lines between the last run
  before and the first after, labelled with the commit range, creeps as a
  shaded stretch. Every point and step carries an SVG <title>: the run, its
  date, commit and values show on hover.

Elements a test (or a reader of the HTML) looks for carry classes and data
attributes: `tr.case-row[data-gpu][data-uuids][data-kernel]`, `circle.point
[data-run]` inside `svg.case-plot[data-points]`, `line.step[data-before-run]
[data-after-run]`.
"""

from __future__ import annotations

import hashlib
import html
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.units import format_duration, p_text

from .series import Series, SeriesKey, gpu_uuids
from .steps import SLOWER, STEP, Step

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
WIDTH, HEIGHT, MARGIN = 900, 320, 56
SPARK_WIDTH, SPARK_HEIGHT = 160, 28
# the earlier runs a series' latest median is compared with when the caller names no reference
EARLIER_RUNS = 30

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
td, th { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; text-align: left; vertical-align: middle; }
.slower { color: #b00020; font-weight: bold; }
.faster { color: #2e7d32; }
.filters label { margin-right: 1em; }
svg text { font-size: 11px; }
.band { fill-opacity: 0.18; stroke: none; }
.step { stroke-dasharray: 5 3; stroke-width: 1.5; }
.creep { fill: #ffb300; fill-opacity: 0.15; }
"""

FILTER_SCRIPT = """
(function () {
  var gpu = document.getElementById('filter-gpu');
  var uuid = document.getElementById('filter-uuid');
  var kernel = document.getElementById('filter-kernel');
  function apply() {
    var rows = document.querySelectorAll('tr.case-row');
    var shown = 0;
    rows.forEach(function (row) {
      var ok = (!gpu.value || row.dataset.gpu === gpu.value) &&
               (!uuid.value || row.dataset.uuids.split(' ').indexOf(uuid.value) >= 0) &&
               (!kernel.value || row.dataset.kernel.toLowerCase().indexOf(kernel.value.toLowerCase()) >= 0);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' series';
  }
  [gpu, uuid].forEach(function (el) { el.addEventListener('change', apply); });
  kernel.addEventListener('input', apply);
  apply();
})();
"""


def case_page_name(case: str) -> str:
    """The file name of a case's page: readable, safe, unique per case id."""
    readable = "".join(c if c.isalnum() or c in "-_" else "_" for c in case.rsplit("::", 1)[-1])[:60]
    return f"{readable}-{hashlib.sha256(case.encode()).hexdigest()[:10]}.html"


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: str, script: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>"
            f"<body>{body}{f'<script>{script}</script>' if script else ''}</body></html>\n")


def _open_slower(steps: Sequence[Step], acknowledged: Mapping[tuple[str, str], str]) -> list[Step]:
    return [s for s in steps if s.direction == SLOWER and (s.key.case, s.after.run_id) not in acknowledged]


def _latest_ratio(series: Series, steps: Sequence[Step], reference: float | None) -> float | None:
    if not series.points:
        return None
    latest = series.points[-1].median_s
    if reference:
        return latest / reference
    since = max((s.index for s in steps if s.kind == STEP), default=0)
    earlier = [p.median_s for p in series.points[since:-1]][-EARLIER_RUNS:]
    return latest / statistics.median(earlier) if earlier else None


def sparkline(series: Series) -> str:
    """A small inline SVG of the series' medians (no axes)."""
    medians = series.medians()
    if not medians:
        return ""
    low, high = min(medians), max(medians)
    span = (high - low) or high * 1e-3
    step = SPARK_WIDTH / max(len(medians) - 1, 1)
    coords = " ".join(f"{i * step:.1f},{SPARK_HEIGHT - 2 - (m - low) / span * (SPARK_HEIGHT - 4):.1f}"
                      for i, m in enumerate(medians))
    return (f'<svg class="sparkline" width="{SPARK_WIDTH}" height="{SPARK_HEIGHT}" '
            f'viewBox="0 0 {SPARK_WIDTH} {SPARK_HEIGHT}"><polyline fill="none" stroke="#1f77b4" '
            f'stroke-width="1.2" points="{coords}"/></svg>')


def _case_plot(case: str, group: Sequence[Series], steps: Mapping[SeriesKey, Sequence[Step]]) -> str:
    """One SVG: per series its band, median line and points, its steps and creeps."""
    points = [p for one in group for p in one.points]
    times = [p.started_at.timestamp() for p in points]
    t0, t1 = min(times), max(times)
    t_span = (t1 - t0) or 1.0
    y_low, y_high = min(p.low_s for p in points), max(p.high_s for p in points)
    y_pad = (y_high - y_low) * 0.08 or y_high * 0.01
    y_low, y_high = y_low - y_pad, y_high + y_pad

    def x(point) -> float:
        return MARGIN + (point.started_at.timestamp() - t0) / t_span * (WIDTH - 2 * MARGIN)

    def y(value: float) -> float:
        return HEIGHT - MARGIN + (MARGIN - HEIGHT + MARGIN) * (value - y_low) / (y_high - y_low)

    parts = [f'<svg class="case-plot" data-case="{_e(case)}" data-points="{len(points)}" width="{WIDTH}" '
             f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img">',
             f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" y2="{HEIGHT - MARGIN}" stroke="#888"/>',
             f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" stroke="#888"/>']
    for value in (y_low + (y_high - y_low) * f for f in (0.1, 0.5, 0.9)):
        parts.append(f'<text x="{MARGIN - 4}" y="{y(value) + 4:.1f}" text-anchor="end">{_e(format_duration(value))}'
                     f'</text>')
    for point in (points[times.index(t0)], points[times.index(t1)]):
        parts.append(f'<text x="{x(point):.1f}" y="{HEIGHT - MARGIN + 16}" text-anchor="middle">'
                     f'{_e(point.started_at.date().isoformat())}</text>')
    for colour, one in zip(PALETTE * (len(group) // len(PALETTE) + 1), group, strict=False):
        label = _e(f"{one.key.gpu} ({one.key.timer}, {one.key.profile})")
        upper = [f"{x(p):.1f},{y(p.high_s):.1f}" for p in one.points]
        lower = [f"{x(p):.1f},{y(p.low_s):.1f}" for p in reversed(one.points)]
        parts.append(f'<g class="series" data-gpu="{_e(one.key.gpu)}"><title>{label}</title>'
                     f'<polygon class="band" fill="{colour}" points="{" ".join(upper + lower)}"/>'
                     f'<polyline fill="none" stroke="{colour}" stroke-width="1.3" '
                     f'points="{" ".join(f"{x(p):.1f},{y(p.median_s):.1f}" for p in one.points)}"/>')
        for p in one.points:
            tip = (f"{p.run_id} {p.started_at.isoformat(timespec='minutes')} commit {p.commit[:12]}"
                   f"{f' ({p.branch})' if p.branch else ''}: median {format_duration(p.median_s)}, band "
                   f"{format_duration(p.low_s)}-{format_duration(p.high_s)}, {p.sample_count} samples, "
                   f"{p.gpu_uuid or 'no UUID'}")
            parts.append(f'<circle class="point" data-run="{_e(p.run_id)}" cx="{x(p):.1f}" cy="{y(p.median_s):.1f}" '
                         f'r="2.6" fill="{colour}"><title>{_e(tip)}</title></circle>')
        parts.append("</g>")
        for s in steps.get(one.key, ()):
            tip = (f"{s.kind} {s.direction}: x{s.ratio:.3f} ({s.ratio_low:.3f}-{s.ratio_high:.3f}), "
                   f"p {p_text(s.p_value)}, between {s.before.run_id} and {s.after.run_id}, commits {s.commit_range}")
            if s.kind == STEP:
                mid = (x(s.before) + x(s.after)) / 2
                parts.append(f'<line class="step {s.direction}" data-before-run="{_e(s.before.run_id)}" '
                             f'data-after-run="{_e(s.after.run_id)}" x1="{mid:.1f}" y1="{MARGIN}" x2="{mid:.1f}" '
                             f'y2="{HEIGHT - MARGIN}" stroke="{colour}"><title>{_e(tip)}</title></line>'
                             f'<text x="{mid + 3:.1f}" y="{MARGIN - 6}">{_e(_short_range(s))}</text>')
            else:
                parts.append(f'<rect class="creep {s.direction}" data-before-run="{_e(s.before.run_id)}" '
                             f'data-after-run="{_e(s.after.run_id)}" x="{x(s.before):.1f}" y="{MARGIN}" '
                             f'width="{max(x(s.after) - x(s.before), 1):.1f}" height="{HEIGHT - 2 * MARGIN}">'
                             f'<title>{_e(tip)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def _short_range(step: Step) -> str:
    return f"{step.before.commit[:8]}..{step.after.commit[:8]}"


def _steps_table(group: Sequence[Series], steps: Mapping[SeriesKey, Sequence[Step]],
                 acknowledged: Mapping[tuple[str, str], str]) -> str:
    rows = []
    for one in group:
        for s in steps.get(one.key, ()):
            reason = acknowledged.get((s.key.case, s.after.run_id))
            rows.append(f'<tr class="step-row"><td>{_e(one.key.gpu)}</td><td>{_e(s.kind)}</td>'
                        f'<td class="{s.direction}">{_e(s.direction)} x{s.ratio:.3f}</td>'
                        f'<td>{s.ratio_low:.3f}-{s.ratio_high:.3f}</td><td>{p_text(s.p_value)}</td>'
                        f'<td>{_e(s.before.run_id)} ({_e(s.before.started_at.date())}) &rarr; {_e(s.after.run_id)} '
                        f'({_e(s.after.started_at.date())})</td><td><code>{_e(s.commit_range)}</code></td>'
                        f'<td>{_e(f"acknowledged: {reason}" if reason else "open")}</td></tr>')
    if not rows:
        return "<p>No steps.</p>"
    return ("<table><tr><th>GPU</th><th>kind</th><th>change</th><th>95% interval</th><th>p</th><th>runs</th>"
            "<th>commits</th><th>state</th></tr>" + "".join(rows) + "</table>")


def write_site(out_dir, series: Iterable[Series], steps: Mapping[SeriesKey, Sequence[Step]], *,
               acknowledged: Mapping[tuple[str, str], str] | None = None,
               references: Mapping[SeriesKey, float] | None = None,
               title: str = "Kernel suite: history") -> Path:
    """Write index.html and one page per case into `out_dir`; returns the index's path.

    `steps`: each series' detected steps (harness.history.steps.detect_all).
    `acknowledged`: {(case, run id of the first run after the step): reason}.
    `references`: a reference median (seconds) per series, where one is known.
    """
    out = Path(out_dir)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    acknowledged = acknowledged or {}
    references = references or {}
    every = [one for one in series if one.points]
    by_case: dict[str, list[Series]] = {}
    for one in every:
        by_case.setdefault(one.key.case, []).append(one)

    for case, group in by_case.items():
        body = (f'<p><a href="../index.html">&larr; all cases</a></p><h1>{_e(case)}</h1>'
                f"{_case_plot(case, group, steps)}<h2>Steps</h2>{_steps_table(group, steps, acknowledged)}")
        (out / "cases" / case_page_name(case)).write_text(_page(case, body), encoding="utf-8")

    rows = []
    for one in every:
        own = list(steps.get(one.key, ()))
        ratio = _latest_ratio(one, own, references.get(one.key))
        open_slower = _open_slower(own, acknowledged)
        rows.append((not open_slower, one.key.case, one.key.gpu, one, ratio, open_slower))
    rows.sort(key=lambda row: row[:3])
    lines = []
    for _, case, gpu, one, ratio, open_slower in rows:
        uuids = " ".join(gpu_uuids([one]))
        ratio_text = "" if ratio is None else f"{ratio:.3f}"
        opened = ", ".join(f"x{s.ratio:.3f} at {s.after.run_id} ({_short_range(s)})" for s in open_slower)
        lines.append(f'<tr class="case-row" data-gpu="{_e(gpu)}" data-uuids="{_e(uuids)}" data-kernel="{_e(case)}">'
                     f'<td><a href="cases/{case_page_name(case)}">{_e(case)}</a></td><td>{_e(gpu)}</td>'
                     f"<td>{_e(one.key.timer)}</td><td>{_e(one.key.profile)}</td><td>{len(one)}</td>"
                     f"<td>{ratio_text}</td><td>{sparkline(one)}</td>"
                     f'<td class="{"slower" if open_slower else ""}">{_e(opened)}</td></tr>')
    gpus = sorted({one.key.gpu for one in every})
    options = "".join(f'<option value="{_e(g)}">{_e(g)}</option>' for g in gpus)
    uuid_options = "".join(f'<option value="{_e(u)}">{_e(u)}</option>' for u in gpu_uuids(every))
    body = (f"<h1>{_e(title)}</h1>"
            '<p class="filters"><label>GPU <select id="filter-gpu"><option value="">all</option>'
            f'{options}</select></label><label>UUID <select id="filter-uuid"><option value="">all</option>'
            f'{uuid_options}</select></label><label>kernel <input id="filter-kernel" type="search" '
            'placeholder="part of the case id"></label><span id="shown"></span></p>'
            "<table><tr><th>case</th><th>GPU</th><th>timer</th><th>profile</th><th>runs</th>"
            "<th>latest / reference</th><th>history</th><th>open slower steps</th></tr>"
            + "".join(lines) + "</table>")
    index = out / "index.html"
    index.write_text(_page(title, body, FILTER_SCRIPT), encoding="utf-8")
    return index
