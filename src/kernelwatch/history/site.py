"""A static dashboard of the cases' histories: `write_site(out_dir, series, steps)`.

Plain HTML with inline SVG (src/kernelwatch/history/chart.py) and a few lines of inline
JavaScript for the index's filters: no library, no CDN, no font, nothing fetched
when the pages are read, so the folder works from a file:// URL or any static host.

* index.html: one row per series (case x GPU x timer x profile): the GPU by short
  UUID, the newest run's verdict, the newest median over its reference (reference.py:
  the caller's, else the median of up to 30 earlier runs of the level before the
  series' first open slower step or its failing runs, else of its level since its
  latest step; failed runs are never a reference), a sparkline, the newest joules per
  launch where measured, and what needs attention: the case failing in its newest
  runs, its open slower steps (not accepted). Failing cases come first, then open
  slower steps, then the rest. Filters by GPU (model or UUID, as the series are keyed),
  by the UUIDs of the runs, and by kernel (any part of the case id).
* Every sparkline (sparklines.py) draws its runs' medians over that same reference (a
  dashed line), all on one relative scale (the smallest of ±1, 2, 5 and 10% that holds
  every row), said in the column's header; a failed, accepted or run-failed run carries
  the chart's mark for it. The energy lines of a case page are drawn so too, over each
  line's median.
* No page is wider than a 1280 px window: the index's header cells and its attention
  cell wrap, a long case id breaks, and the energy column is left out where no run
  measured energy.
* cases/<name>.html: one page per case: the chart (every run, failed ones drawn
  apart), its legend, the steps with their commit ranges and whether they were
  accepted, and a table of every run, newest first: date, commit, GPU, median, band,
  samples, energy per launch where measured, verdict and state; under "Energy per
  launch", each GPU's joules per launch over the runs that measured it.

Elements a test (or a reader of the HTML) looks for carry classes and data
attributes: `tr.case-row[data-gpu][data-uuids][data-kernel][data-state]`,
`tr.run-row[data-run][data-state]`, and those of the chart (its module docstring).
"""

from __future__ import annotations

import hashlib
import html
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from kernelwatch.units import format_joules, p_text

from .accuracy import accuracy_steps
from .accuracy_chart import accuracy_index, accuracy_section
from .analysis import Failing, failing_stretch
from .chart import case_plot, legend, mark_key, precise, short_gpu, short_uuid
from .reference import EARLIER_RUNS, Reference, reference_of
from .series import Series, SeriesKey, gpu_uuids
from .sparklines import centre_of, energy_line, shared_scale, sparkline
from .steps import SLOWER, STEP, Step

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; font-size: 14px; }
td.nowrap, th { white-space: nowrap; }
table { border-collapse: collapse; }
h1 { overflow-wrap: anywhere; }
table.cases th { white-space: normal; }
table.cases td.case { min-width: 13em; }
table.cases td:last-child { min-width: 12em; width: 20em; }
.notes { color: #555; max-width: 70em; }
td, th { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; text-align: left; vertical-align: middle; }
.slower, .failed { color: #b00020; font-weight: bold; }
.accepted { color: #8a4500; }
.faster { color: #2e7d32; }
.filters label { margin-right: 1em; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
svg text { font-size: 11px; }
.band { fill-opacity: 0.18; stroke: none; }
.step { stroke-dasharray: 5 3; stroke-width: 1.5; }
.creep { fill: #ffb300; fill-opacity: 0.15; }
table.runs td, table.steps td { white-space: nowrap; }
table.runs td:last-child, table.steps td:last-child { white-space: normal; }
tr.run-row.failed td { background: #fdecee; }
tr.run-row.accepted td { background: #fff4e5; }
code { font-size: 0.95em; }
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


def _breakable(name: str) -> str:
    """A test's name, escaped, that may break after "[", "-", "," and "/" (a case's parameters) and nowhere else."""
    return "".join(_e(c) + ("<wbr>" if c in "[-,/" else "") for c in name)


def _page(title: str, body: str, script: str = "") -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head>"
            f"<body>{body}{f'<script>{script}</script>' if script else ''}</body></html>\n")


def _ratio_cell(one: Series, reference: Reference | None) -> str:
    if reference is None:
        return '<td class="nowrap" title="no earlier run to compare with"></td>'
    newest = one.points[-1]
    why = (f"run {newest.run_id}: {precise(newest.median_s)} over {precise(reference.median_s)}, "
           f"{reference.source}")
    return f'<td class="nowrap" title="{_e(why)}">{newest.median_s / reference.median_s:.3f}</td>'


def _energy_section(group: Sequence[Series]) -> str:
    """The case page's energy: per GPU, its joules per launch over the runs that measured it."""
    measured = [one for one in group if any(p.energy_j is not None for p in one.points)]
    if not measured:
        return ""
    joules = [[p.energy_j for p in one.points if p.energy_j is not None] for one in measured]
    scale = shared_scale((values, statistics.median(values)) for values in joules)
    rows = "".join(f'<tr class="energy-row"><td>{_e(short_gpu(one.key.gpu))}</td><td>{energy_line(one, scale)}</td>'
                   f'<td>{_e(_newest_energy(one))}</td>'
                   f'<td>{sum(p.energy_j is not None for p in one.points)}</td></tr>' for one in measured)
    return ("<h2>Energy per launch</h2><p>Joules per launch of the runs that measured it (docs/method.md, "
            f"\"Energy per launch\"); each line over its median (the dashed line), every line on one scale, "
            f"±{scale:.0%} from top to bottom.</p>"
            "<table><tr><th>GPU</th><th>history</th><th>newest</th><th>runs</th></tr>"
            + rows + "</table>")


def _short_range(step: Step) -> str:
    return f"{step.before.commit[:8]}..{step.after.commit[:8]}"


def _can_be_open(step: Step) -> bool:
    """A slower step, as `changes` counts one: open until acknowledged. A slower creep is shown, never open."""
    return step.kind == STEP and step.direction == SLOWER


def _steps_table(group: Sequence[Series], steps: Mapping[SeriesKey, Sequence[Step]],
                 reason: Callable[[Step], str | None]) -> str:
    rows = []
    for one in group:
        for s in steps.get(one.key, ()):
            why = reason(s)
            state = f"acknowledged: {why}" if why else "open" if _can_be_open(s) else ""
            rows.append(f'<tr class="step-row"><td>{_e(short_gpu(one.key.gpu))}</td><td>{_e(s.kind)}</td>'
                        f'<td class="{s.direction}">{_e(s.direction)} x{s.ratio:.3f}</td>'
                        f'<td>{s.ratio_low:.3f}-{s.ratio_high:.3f}</td><td>{_e(p_text(s.p_value))}</td>'
                        f'<td>{_e(s.before.run_id)} ({_e(s.before.started_at.date())}) &rarr; {_e(s.after.run_id)} '
                        f'({_e(s.after.started_at.date())})</td><td><code title="{_e(s.commit_range)}">'
                        f'{_e(s.before.commit[:12])}..{_e(s.after.commit[:12])}</code></td>'
                        f'<td>{_e(state)}</td></tr>')
    if not rows:
        return "<p>No steps.</p>"
    return ('<table class="steps"><tr><th>GPU</th><th>kind</th><th>change</th><th>95% interval</th><th>p</th>'
            "<th>runs</th><th>commits</th><th>state</th></tr>" + "".join(rows) + "</table>")


def _runs_table(group: Sequence[Series]) -> str:
    """Every run of the case on every GPU, newest first (with its joules per launch where any run has one)."""
    rows = sorted(((p, one) for one in group for p in one.points), key=lambda pair: (pair[0].started_at,
                                                                                   pair[0].run_id), reverse=True)
    energy = any(p.energy_j is not None for p, _ in rows)

    def joules(point) -> str:
        if not energy:
            return ""
        return f"<td>{_e(format_joules(point.energy_j)) if point.energy_j is not None else ''}</td>"

    lines = [f'<tr class="run-row {p.state.replace(" ", "-")}" data-run="{_e(p.run_id)}" data-state="{_e(p.state)}">'
             f'<td>{_e(p.run_id)}</td><td>{p.started_at:%Y-%m-%d %H:%M}</td><td><code>{_e(p.commit[:12])}</code></td>'
             f'<td>{_e(p.branch or "")}</td><td>{_e(short_uuid(p.gpu_uuid))}</td><td>{_e(precise(p.median_s))}</td>'
             f'<td>{_e(precise(p.low_s))}-{_e(precise(p.high_s))}</td><td>{p.sample_count}</td>{joules(p)}'
             f'<td>{_e(p.verdict or "not judged")}</td><td class="{p.state.replace(" ", "-")}">{_e(p.state)}'
             f'{_e(": " + p.accepted_reason) if p.accepted_reason else ""}</td></tr>' for p, one in rows]
    return ("<table class=\"runs\"><tr><th>run</th><th>date (UTC)</th><th>commit</th><th>branch</th><th>GPU</th>"
            f"<th>median</th><th>middle half</th><th>samples</th>{'<th>energy per launch</th>' if energy else ''}"
            "<th>verdict</th><th>state</th></tr>"
            + "".join(lines) + "</table>")


def _newest_energy(one: Series) -> str:
    """The newest measured joules per launch of a series, "" where none was measured."""
    measured = [p.energy_j for p in one.points if p.energy_j is not None]
    return format_joules(measured[-1]) if measured else ""


def _attention(one: Series, open_slower: Sequence[Step], failing: Failing | None) -> str:
    parts = []
    if failing is not None:
        parts.append(f"failing since run {failing.first.run_id} ({failing.runs} run{'s' if failing.runs != 1 else ''}"
                     f", commits {failing.commit_range[:8]}..{failing.commit_range.split('..')[-1][:8]})")
    parts += [f"x{s.ratio:.3f} at {s.after.run_id} ({_short_range(s)})" for s in open_slower
              if failing is None or failing.step != s]
    return "; ".join(parts)


def write_site(out_dir, series: Iterable[Series], steps: Mapping[SeriesKey, Sequence[Step]], *,
               acknowledged: Mapping[tuple[str, str], str] | None = None,
               references: Mapping[SeriesKey, float] | None = None,
               reason: Callable[[Step], str | None] | None = None,
               title: str = "kernelwatch: history", accuracy: Mapping | None = None) -> Path:
    """Write index.html and one page per case into `out_dir`; returns the index's path.

    `steps`: each series' detected steps (kernelwatch.history.steps.detect_all).
    `acknowledged`: {(case, run id of the first run after the step): reason}.
    `reason`: why a step was accepted, or None (default: its acknowledgement); `changes`'s
    Analysis.reason also counts a slowdown accepted at a run of the step's new level.
    `references`: a reference median (seconds) per series, where one is known.
    `accuracy`: each check's stored errors (src/kernelwatch/history/accuracy.py: accuracy_series), drawn under
    the case's time chart (or alone, for a check that is not timed) and listed in the index.
    """
    out = Path(out_dir)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    acknowledged = acknowledged or {}
    references = references or {}
    if reason is None:
        def reason(step: Step) -> str | None:
            return acknowledged.get((step.key.case, step.after.run_id))
    every = [one for one in series if one.points]
    by_case: dict[str, list[Series]] = {}
    for one in every:
        by_case.setdefault(one.key.case, []).append(one)

    accuracy = accuracy or {}
    checks: dict[str, str] = {}
    for key, points in accuracy.items():
        checks[key.case] = checks.get(key.case, "") + accuracy_section(points, accuracy_steps(points, key))
    for case, group in by_case.items():
        body = (f'<p><a href="../index.html">&larr; all cases</a></p><h1>{_e(case)}</h1>'
                f"{case_plot(case, group, steps)}{legend(group)}{checks.pop(case, '')}<h2>Steps</h2>"
                f"{_steps_table(group, steps, reason)}{_energy_section(group)}<h2>Runs</h2>{_runs_table(group)}")
        (out / "cases" / case_page_name(case)).write_text(_page(case, body), encoding="utf-8")
    for case, section in checks.items():  # checks that are not timed: their accuracy alone
        body = f'<p><a href="../index.html">&larr; all cases</a></p><h1>{_e(case)}</h1>{section}'
        (out / "cases" / case_page_name(case)).write_text(_page(case, body), encoding="utf-8")

    rows = []
    for one in every:
        own = list(steps.get(one.key, ()))
        open_slower = [s for s in own if _can_be_open(s) and reason(s) is None]
        failing = failing_stretch(one, own)
        rank = 0 if failing is not None else 1 if open_slower else 2
        reference = reference_of(one, own, reason, failing, references.get(one.key))
        rows.append((rank, one.key.case, one.key.gpu, one, reference, _attention(one, open_slower, failing)))
    rows.sort(key=lambda row: row[:3])
    scale = shared_scale((one.medians(), centre_of(one, reference)) for _, _, _, one, reference, _ in rows)
    energy = any(p.energy_j is not None for one in every for p in one.points)
    lines = []
    for rank, case, gpu, one, reference, attention in rows:
        newest = one.points[-1]
        state = ("failing", "open step", "quiet")[rank]
        lines.append(f'<tr class="case-row" data-gpu="{_e(gpu)}" data-uuids="{_e(" ".join(gpu_uuids([one])))}" '
                     f'data-kernel="{_e(case)}" data-state="{state}">'
                     f'<td class="case"><a href="cases/{case_page_name(case)}" title="{_e(case)}">'
                     f'{_breakable(case.rsplit("::", 1)[-1])}</a></td>'
                     f'<td class="nowrap" title="{_e(gpu)}">{_e(short_gpu(gpu))}</td>'
                     f'<td class="nowrap">{_e(one.key.timer)}</td><td>{_e(one.key.profile)}</td><td>{len(one)}</td>'
                     f'<td class="{_e(newest.state.replace(" ", "-"))}">{_e(newest.verdict or "not judged")}'
                     f'{" (" + _e(newest.state) + ")" if newest.state != "passed" else ""}</td>'
                     f'{_ratio_cell(one, reference)}<td>{sparkline(one, reference, scale)}</td>'
                     + (f'<td class="nowrap">{_e(_newest_energy(one))}</td>' if energy else "")
                     + f'<td class="{"slower" if rank < 2 else ""}">{_e(attention)}</td></tr>')
    gpus = sorted({one.key.gpu for one in every})
    options = "".join(f'<option value="{_e(g)}">{_e(short_gpu(g))}</option>'
                      for g in gpus)
    uuid_options = "".join(f'<option value="{_e(u)}">{_e(short_uuid(u))}</option>' for u in gpu_uuids(every))
    body = (f"<h1>{_e(title)}</h1>"
            '<p class="filters"><label>GPU <select id="filter-gpu"><option value="">all</option>'
            f'{options}</select></label><label>UUID <select id="filter-uuid"><option value="">all</option>'
            f'{uuid_options}</select></label><label>kernel <input id="filter-kernel" type="search" '
            'placeholder="part of the case id"></label><span id="shown"></span></p>'
            '<table class="cases"><tr><th>case</th><th>GPU</th><th>timer</th><th>profile</th><th>runs</th>'
            f"<th>newest verdict</th><th>latest / reference</th><th>history (±{scale:.0%})</th>"
            f"{'<th>energy per launch</th>' if energy else ''}<th>failing, open slower steps</th></tr>"
            + "".join(lines) + "</table>"
            f'<p class="notes">latest / reference: the newest run\'s median over the median of up to {EARLIER_RUNS} '
            "earlier runs: those before the first open slower step or the failing runs where there are any, "
            "else those since the latest step (a reference given for a series takes their place); a failed run is "
            f"never a reference. History: each run's median over that reference (the dashed line), every row on "
            f"one scale, ±{scale:.0%} from top to bottom (a run beyond it at the edge).</p>"
            f'<p class="legend">{mark_key(passed=False)}</p>' + accuracy_index(accuracy, case_page_name))
    index = out / "index.html"
    index.write_text(_page(title, body, FILTER_SCRIPT), encoding="utf-8")
    return index
