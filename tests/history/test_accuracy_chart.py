"""kernelwatch.history.accuracy_chart: each check's mark by its state, and the runs spread evenly along the chart."""

from __future__ import annotations

import re
from collections import namedtuple
from types import SimpleNamespace

import pytest

from kernelwatch.history.accuracy_chart import LEFT, RIGHT, WIDTH, accuracy_chart, accuracy_index
from kernelwatch.verdict.accuracy import format_error


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
