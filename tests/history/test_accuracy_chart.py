"""kernelwatch.history.accuracy_chart: each check's mark by its state, the runs spread evenly along the chart, and
whole charts, case-page sections and index tables against their reviewed snapshots (__snapshots__/)."""

from __future__ import annotations

import hashlib
import html
import re
from collections import namedtuple
from datetime import date, timedelta
from types import SimpleNamespace

import pytest

from kernelwatch.history.accuracy import AccuracyKey, accuracy_steps
from kernelwatch.history.accuracy_chart import LEFT, RIGHT, WIDTH, accuracy_chart, accuracy_index, accuracy_section
from kernelwatch.verdict.accuracy import (
    LESS_ACCURATE,
    MARGIN_FLAG,
    MORE_ACCURATE,
    AccuracyRecord,
    StoredAccuracy,
    format_error,
)
from kernelwatch.verdict.labels import ACCEPTED, NEW, SAME


def point(run_id: int, state: str, error: float):
    record = SimpleNamespace(max_error=error, avg_error=error / 10, tolerance_max=1e-3, verdict=state,
                             margin=1 - error / 1e-3)
    return SimpleNamespace(record=record, state=state, run_id=run_id, started_at="2026-12-06 00:00:00",
                           commit="c" * 40, accepted_reason="meant" if state == "accepted" else None)


def marks(svg: str, state: str) -> list[str]:
    """The maximum-error mark of each point of `state`, as its element's text."""
    return re.findall(rf'<(?:path|circle) class="accuracy-point max {state}"[^>]*>', svg)


def test_a_passed_check_is_a_circle_a_failed_one_a_triangle_and_an_accepted_one_a_diamond():
    svg = accuracy_chart([point(1, "passed", 1e-5), point(2, "failed", 2e-3), point(3, "accepted", 2e-3)])
    (passed,), (failed,), (accepted,) = marks(svg, "passed"), marks(svg, "failed"), marks(svg, "accepted")
    assert passed.startswith("<circle")
    corners = {name: len(re.findall(r"[ML][\d.]+,[\d.]+", mark)) for name, mark in
               (("failed", failed), ("accepted", accepted))}
    assert corners == {"failed": 3, "accepted": 4}
    # the diamond: its top and bottom corners equally far above and below its left and right ones
    (top, right, bottom, left) = [tuple(map(float, xy)) for xy in re.findall(r"[ML]([\d.]+),([\d.]+)", accepted)]
    assert top[0] == bottom[0] and left[1] == right[1] and bottom[1] - left[1] == pytest.approx(left[1] - top[1])
    assert right[0] - top[0] == pytest.approx(top[0] - left[0])
    assert 'stroke="#d62728"' in failed and 'stroke="#ff7f0e"' in accepted  # red and orange, as the time chart


def test_the_maximum_and_the_average_errors_are_each_one_line_through_their_runs():
    one = accuracy_chart([point(1, "passed", 1e-5)])
    three = accuracy_chart([point(i, "passed", 1e-5 * i) for i in (1, 2, 3)])
    assert "<polyline" not in one  # a single run: marks only
    lines = re.findall(r'<polyline [^>]*points="([^"]*)"', three)
    assert len(lines) == 2 and all(len(line.split()) == 3 for line in lines)  # average (dashed) and maximum


def mark_x(mark: str) -> float:
    """A mark's centre along the run axis: a circle's cx, a path's first corner (the apex over its centre)."""
    found = re.search(r'cx="([\d.]+)"', mark) or re.search(r'd="M([\d.]+),', mark)
    return float(found.group(1))


@pytest.mark.parametrize("runs", [1, 2, 5])
def test_the_runs_sit_at_the_middles_of_equal_slots_across_the_plot(runs):
    states = ["passed", "failed", "accepted"]
    svg = accuracy_chart([point(i + 1, states[i % 3], 1e-5 * (i + 1)) for i in range(runs)])
    xs = sorted(mark_x(mark) for state in states for mark in marks(svg, state))
    slot = (WIDTH - LEFT - RIGHT) / runs
    assert xs == pytest.approx([LEFT + slot * (i + 0.5) for i in range(runs)], abs=0.06)


def test_the_index_row_of_a_check_shows_its_newest_run():
    older, newest = point(1, "passed", 2e-6), point(2, "failed", 9.5e-4)
    key = namedtuple("Key", "case gpu")("s.py::test_k[a]", "GPU-a")
    row = accuracy_index({key: [older, newest]}, lambda case: "k.html")
    assert 'data-state="failed"' in row and 'data-flag="near tolerance"' in row  # 5% of the tolerance left
    cells = re.findall(r"<td>([^<]*)</td>", row)
    assert cells[:5] == ["GPU-a", "2", format_error(9.5e-4), format_error(9.5e-5), "5.0% ⚠ under a tenth left"]


# -- whole charts, sections and index tables against reviewed snapshots (tests/history/__snapshots__/) --------

def readable(markup: str) -> str:
    """The markup one element a line, for the snapshot's reader: it holds no newline of its own, so the
    snapshot still pins every character of it."""
    assert "\n" not in markup
    return markup.replace("><", ">\n<")


def sha(run_id: int) -> str:
    return hashlib.sha1(str(run_id).encode()).hexdigest()


def check(run_id: int, max_error: float | None, avg_error: float | None, *, outcome: str = "passed",
          verdict: str | None = SAME, tolerance: float | None = 1e-3, commit: str | None = "sha",
          accepted_reason: str | None = None, seed: int | None = 7, **inputs) -> StoredAccuracy:
    """A stored check of s.py::test_k[f32] with its record, as the history store reads one back."""
    inputs = {"shape": "256x256", "input_kind": "normal", "measure": "relative"} | inputs
    record = AccuracyRecord("s.py::test_k[f32]", max_error, avg_error, tolerance_max=tolerance,
                            tolerance_avg=tolerance, seed=seed, verdict=verdict, **inputs)
    started_at = f"{date(2026, 11, 30) + timedelta(days=run_id)} 03:00:00"
    return StoredAccuracy(run_id, sha(run_id) if commit == "sha" else commit, started_at, record, outcome,
                          accepted_reason)


ODD_REASON = """meant: <b>"fast" & 'loose'</b>"""


def mixed_history() -> list[StoredAccuracy]:
    """Eight runs of one check: passed, failed, accepted and not judged; errors from 1e-9 to 5e-3, an exact
    average (0), a check with no commit, one whose errors are not finite, and a tolerance that changes."""
    return [
        check(1, 2e-6, 5e-7, verdict=NEW),
        check(2, 2e-6, 5e-7),
        check(3, 2e-6, 5e-7, commit=None),
        check(4, 3e-9, 1e-9, verdict=MORE_ACCURATE),  # a step down from run 3 (no commit: "?")
        check(5, 9.6e-4, 1e-5, outcome="failed", verdict=LESS_ACCURATE),  # a step up, out of the band
        check(6, 9.6e-4, 0.0, outcome="failed", verdict=LESS_ACCURATE, accepted_reason=ODD_REASON),
        check(7, None, None, outcome="failed", verdict=NEW, tolerance=None),
        check(8, 9.6e-4, 2e-4, verdict=None, tolerance=5e-3, seed=None, input_kind=None, measure=None),
    ]


KEY = AccuracyKey("GPU-a", "s.py::test_k[f32]", "nightly")


def test_the_chart_of_a_mixed_history_is_its_reviewed_snapshot(snapshot):
    points = mixed_history()
    steps = accuracy_steps(points, KEY)
    assert [(s.direction, s.before.run_id, s.after.run_id) for s in steps] == [(MORE_ACCURATE, 3, 4),
                                                                              (LESS_ACCURATE, 4, 5)]
    svg = accuracy_chart(points, steps)
    # every run's maximum and every positive average: run 6's average is exact (0), run 7's errors not finite
    assert {(m[0], m[1]) for m in re.findall(r'data-run="(\d+)" data-state="\w+" data-error="(\w+)"', svg)} == {
        (str(run), name) for run in (1, 2, 3, 4, 5, 6, 8) for name in ("max", "avg") if (run, name) != (6, "avg")}
    assert ODD_REASON not in svg and html.escape(ODD_REASON) in svg
    assert readable(svg) == snapshot


def test_the_chart_of_a_single_run_in_one_decade_spans_one_decade(snapshot):
    # both errors at 1e-5 exactly and no tolerance: the axis still spans a decade, 1e-5 to 1e-4
    svg = accuracy_chart([check(3, 1e-5, 1e-5, tolerance=None, verdict=None)])
    assert re.findall(r'class="y-tick"[^>]*>([^<]*)<', svg) == ["1e-5", "1e-4"]
    assert "<polyline" not in svg and "tolerance" not in svg
    assert readable(svg) == snapshot


def test_a_chart_of_exact_results_under_a_tolerance_draws_the_tolerance_alone(snapshot):
    svg = accuracy_chart([check(1, 0.0, 0.0), check(2, 0.0, 0.0, tolerance=2e-4)])
    assert "accuracy-point" not in svg and svg.count('class="tolerance"') == 2
    assert readable(svg) == snapshot


def test_a_chart_with_nothing_above_zero_says_so():
    exact = [check(1, 0.0, 0.0, tolerance=None), check(2, 0.0, 0.0, tolerance=0.0), check(3, None, None, tolerance=None)]
    assert accuracy_chart(exact) == '<p class="notes">no finite error above zero to draw (exact results)</p>'


def test_errors_at_or_below_zero_are_left_out_of_the_marks_and_the_lines():
    # no check measures a negative error; one read back so is not drawn (as an exact one is not)
    svg = accuracy_chart([check(1, 1e-5, -1e-6), check(2, 2e-5, 0.0), check(3, 4e-5, 1e-6), check(4, 8e-5, 2e-6)])
    assert re.findall(r'data-run="(\d+)" data-state="passed" data-error="avg"', svg) == ["3", "4"]
    dashed, solid = re.findall(r'<polyline [^>]*points="([^"]*)"', svg)
    assert (len(dashed.split()), len(solid.split())) == (2, 4)


def test_an_average_with_a_single_positive_error_is_a_mark_without_a_line():
    svg = accuracy_chart([check(1, 1e-5, 0.0), check(2, 2e-5, 2e-6), check(3, 4e-5, None)])
    (line,) = re.findall(r'<polyline [^>]*>', svg)
    assert "stroke-dasharray" not in line  # the maximum's line, not the average's
    assert len(re.findall(r'data-error="avg"', svg)) == 1


@pytest.mark.parametrize(("runs", "ticked"), [
    (12, list(range(12))),
    (13, list(range(13))),  # 13 // 8 = 1: still every run
    (16, [0, 2, 4, 6, 8, 10, 12, 14, 15]),  # every second (16 // 8), and the newest
    (20, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 19]),
    (30, [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 29]),
])
def test_a_long_history_labels_every_few_runs_and_always_its_first_and_newest(runs, ticked):
    svg = accuracy_chart([check(100 + i, 1e-6 * (1 + i % 5), 1e-7) for i in range(runs)])
    assert [int(t) - 100 for t in re.findall(r'class="x-tick"[^>]*>(\d+)<', svg)] == ticked


def test_the_chart_of_a_long_history_is_its_reviewed_snapshot(snapshot):
    points = [check(100 + i, 1e-6 * (1 + i % 5), 1e-7 * (1 + i % 3),
                    outcome="failed" if i == 17 else "passed") for i in range(20)]
    assert readable(accuracy_chart(points)) == snapshot


def test_the_accuracy_section_of_a_case_page_is_its_reviewed_snapshot(snapshot):
    points = mixed_history()
    section = accuracy_section(points, accuracy_steps(points, KEY))
    # the table: newest first; the inputs line: the newest check's (no seed, no input kind, no measure)
    assert re.findall(r'<tr class="accuracy-run" data-run="(\d+)"', section) == [str(r) for r in range(8, 0, -1)]
    assert "<p>inputs 256x256, kind not given, seed not given; measure not given</p>" in section
    assert readable(section) == snapshot


def test_the_accuracy_section_names_the_newest_inputs():
    section = accuracy_section([check(1, 1e-6, 1e-7, shape=None), check(2, 2e-6, 1e-7, shape="8x8")])
    assert "<p>inputs 8x8, normal, seed 7; measure relative</p>" in section
    section = accuracy_section([check(2, 2e-6, 1e-7, shape=None, seed=0)])
    assert "<p>inputs ?, normal, seed 0; measure relative</p>" in section


def index_series() -> dict[AccuracyKey, list[StoredAccuracy]]:
    """Checks on two GPUs: failing and passing, near their tolerance or not, unjudged, without a tolerance."""
    def key(case: str, gpu: str | None = "GPU-a") -> AccuracyKey:
        return AccuracyKey(gpu, case, "nightly")

    return {
        key("s.py::test_z_far"): [check(1, 1e-6, 1e-7), check(2, 2e-4, 1e-5)],  # 80% left
        key("s.py::test_m_near", "GPU-b"): [check(3, 9.5e-4, 1e-4, verdict=None)],  # 5% left, not judged
        key("s.py::test_m_near"): [check(4, 8.8e-4, 1e-4, verdict=SAME)],  # 12% left
        key("s.py::test_y_failing"): [check(5, 2e-6, 2e-7),
                                      check(6, 3e-3, 1e-3, outcome="failed", verdict=LESS_ACCURATE)],  # past it
        key("s.py::test_b_failing", "GPU-b"): [check(7, None, None, outcome="failed", verdict=NEW)],  # not finite
        key("plain_id<&>\"x\""): [check(8, 1e-6, 2e-7, tolerance=None, outcome="accepted", verdict=ACCEPTED)],
    }


def test_the_index_table_is_its_reviewed_snapshot(snapshot):
    table = accuracy_index(index_series(), lambda case: f"{case.rsplit('::', 1)[-1][:6]}.html")
    # failing checks first, then by case id (the GPU's order among equal ids: the series')
    assert [(kernel, state) for kernel, state in re.findall(r'data-kernel="([^"]*)" data-state="(\w+)"', table)] == [
        ("s.py::test_b_failing", "failed"), ("s.py::test_y_failing", "failed"),
        ("plain_id&lt;&amp;&gt;&quot;x&quot;", "accepted"), ("s.py::test_m_near", "passed"),
        ("s.py::test_m_near", "passed"), ("s.py::test_z_far", "passed")]
    assert re.findall(r'data-flag="([^"]*)"', table) == ["", "near tolerance", "", "near tolerance", "", ""]
    assert readable(table) == snapshot


def test_a_margin_of_exactly_a_tenth_is_not_flagged_and_the_index_of_nothing_is_empty():
    key = namedtuple("Key", "case gpu")
    at, under = point(1, "passed", 9e-4), point(2, "passed", 9e-4)
    at.record.margin, under.record.margin = MARGIN_FLAG, MARGIN_FLAG - 1e-9
    table = accuracy_index({key("s.py::a", "G"): [at], key("s.py::b", "G"): [under]}, lambda case: "p.html")
    assert re.findall(r'data-flag="([^"]*)"', table) == ["", "near tolerance"]
    assert "<td>10.0%</td>" in table and "<td>10.0% ⚠ under a tenth left</td>" in table
    assert accuracy_index({}, lambda case: "p.html") == ""
