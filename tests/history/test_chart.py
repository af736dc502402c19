"""harness/history/chart.py: a case's chart read at a glance: x by run, y ticks that differ, failed runs apart."""

from __future__ import annotations

import dataclasses
import html
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest

from harness.history.chart import (
    ACCEPTED_COLOUR,
    BOTTOM,
    FAILED_COLOUR,
    HEIGHT,
    LEFT,
    RIGHT,
    TOP,
    WIDTH,
    case_plot,
    legend,
    nice_ticks,
    short_uuid,
    tick_labels,
)
from harness.history.series import Point, Series, SeriesKey
from harness.history.steps import CREEP, SLOWER, STEP, Step

START = datetime(2026, 12, 2, tzinfo=UTC)
CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"
KEY = SeriesKey(gpu="GPU-19ed6398-aaaa-bbbb-cccc-000000000001", case=CASE, timer="cupti", profile="nightly")


def point(run: int, median: float, *, hours: float | None = None, **fields) -> Point:
    return Point(run_id=str(run), started_at=START + timedelta(hours=run if hours is None else hours),
                 commit=f"{run:04d}abcdef0123456789abcdef0123456789ab", branch="main", median_s=median,
                 low_s=median * 0.999, high_s=median * 1.001, sample_count=40, gpu_uuid=KEY.gpu, **fields)


def svg_of(points, steps=(), key=KEY) -> ET.Element:
    one = Series(key, tuple(points))
    return ET.fromstring(case_plot(CASE, [one], {one.key: list(steps)}))


def marks(svg: ET.Element):
    return [element for element in svg.iter() if "point" in (element.get("class") or "").split()]


def step(one_points, before: int, after: int, kind: str = STEP) -> Step:
    return Step(key=KEY, kind=kind, direction=SLOWER, index=after, before=one_points[before],
                after=one_points[after], ratio=1.03, ratio_low=1.02, ratio_high=1.04, p_value=1e-6,
                runs_before=after, runs_after=len(one_points) - after)


def test_x_is_by_run_equally_spaced_whatever_the_time_between_runs():
    # three runs in one hour, then one a week later: four equal places from the left edge to the right
    svg = svg_of([point(1, 1e-3, hours=0), point(2, 1e-3, hours=0.2), point(3, 1e-3, hours=0.4),
                  point(4, 1e-3, hours=24 * 7)])
    xs = [float(c.get("cx")) for c in svg.iter("circle")]
    width = WIDTH - LEFT - RIGHT
    assert xs == pytest.approx([LEFT, LEFT + width / 3, LEFT + 2 * width / 3, LEFT + width], abs=0.06)


def test_every_mark_lies_inside_the_frame_and_a_slower_run_is_higher():
    points = [point(i, m) for i, m in enumerate((2.930e-3, 2.931e-3, 2.932e-3, 3.02e-3), start=1)]
    ys = [float(c.get("cy")) for c in svg_of(points).iter("circle")]
    assert all(TOP <= y <= HEIGHT - BOTTOM for y in ys)
    assert ys[3] < ys[0] and ys[2] < ys[0]  # a longer time is drawn higher


def test_the_y_ticks_read_differently_even_when_the_medians_agree_to_three_digits():
    # the dashboard's old ticks read "2.93 ms" three times for this case
    points = [point(i, m) for i, m in enumerate((2.9301e-3, 2.9312e-3, 2.9305e-3, 2.9318e-3), start=1)]
    labels = [t.text for t in svg_of(points).iter("text") if t.get("class") == "y-tick"]
    assert len(labels) >= 3 and len(set(labels)) == len(labels)
    assert all(label.endswith(" ms") for label in labels)


@pytest.mark.parametrize("low, high", [(2.9301e-3, 2.9318e-3), (1e-6, 9e-6), (0.5, 0.51), (4.1e-6, 4.3e-6)])
def test_nice_ticks_are_round_steps_spanning_the_range_and_their_labels_differ(low, high):
    ticks = nice_ticks(low, high)
    assert 4 <= len(ticks) <= 9 and ticks[0] <= low and ticks[-1] >= high  # the axis runs from tick to tick
    steps = {round(b - a, 18) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len({round(s / min(steps), 6) for s in steps}) == 1  # one step between all ticks
    mantissa = min(steps) / 10 ** __import__("math").floor(__import__("math").log10(min(steps)))
    assert round(mantissa, 6) in (1, 2, 2.5, 5)
    labels = tick_labels(ticks)
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("low, high", [(2e-3, 2e-3), (3e-3, 1e-3)], ids=["empty", "reversed"])
def test_nice_ticks_of_an_empty_or_reversed_range_are_its_low_end_alone(low, high):
    assert nice_ticks(low, high) == [low]


def test_tick_labels_take_one_unit_and_no_more_digits_than_needed():
    assert tick_labels([1e-3, 2e-3, 3e-3]) == ["1 ms", "2 ms", "3 ms"]
    assert tick_labels([2.9305e-3, 2.931e-3, 2.9315e-3]) == ["2.9305 ms", "2.9310 ms", "2.9315 ms"]
    assert tick_labels([2.93e-3, 2.94e-3]) == ["2.93 ms", "2.94 ms"]
    assert tick_labels([1e-3]) == ["1.000 ms"]  # one tick: its value to four figures
    assert tick_labels([250e-6, 500e-6]) == ["250 µs", "500 µs"]


def test_the_x_labels_name_the_run_its_date_and_its_commit():
    svg = svg_of([point(i, 1e-3) for i in range(1, 4)])
    labels = [" ".join(t.text for t in text.iter("tspan")) for text in svg.iter("text") if text.get("class") == "x-tick"]
    assert labels == [f"run {i} 12-02 {i:02d}:00 {i:04d}abcd" for i in range(1, 4)]


def test_at_most_eight_runs_are_labelled_and_the_newest_always_is():
    svg = svg_of([point(i, 1e-3) for i in range(1, 41)])
    labels = [next(text.iter("tspan")).text for text in svg.iter("text") if text.get("class") == "x-tick"]
    assert len(labels) <= 9 and labels[0] == "run 1" and labels[-1] == "run 40"


def test_a_failed_run_is_a_red_triangle_an_accepted_one_an_orange_diamond_and_both_say_so_on_hover():
    points = [point(1, 1e-3), point(2, 1.03e-3, outcome="failed", verdict="slower"),
              point(3, 1.03e-3, outcome="accepted", verdict="accepted", accepted_reason="tiles, by a trailer"),
              point(4, 1.03e-3, run_failed=True, verdict="same")]
    svg = svg_of(points)
    found = {mark.get("data-run"): mark for mark in marks(svg)}
    assert found["1"].tag == "circle" and found["1"].get("data-state") == "passed"
    assert found["2"].tag == "path" and found["2"].get("fill") == FAILED_COLOUR
    assert found["2"].get("data-state") == "failed" and "point failed" in found["2"].get("class")
    assert found["3"].get("fill") == ACCEPTED_COLOUR and found["3"].get("data-state") == "accepted"
    assert found["4"].get("data-state") == "run failed" and found["4"].get("fill") == "none"
    tip = found["2"].find("title").text
    assert tip.startswith("run 2, 2026-12-02 02:00 UTC, commit 0002abcdef01 (main): median 1.030 ms")
    assert "verdict slower (failed)" in tip and tip.endswith(KEY.gpu)
    assert "verdict accepted (accepted: tiles, by a trailer)" in found["3"].find("title").text
    accepted = [line for line in svg.iter("line") if line.get("class") == "accepted"]
    assert [line.get("data-run") for line in accepted] == ["3"]
    (label,) = [text for text in svg.iter("text") if (text.text or "").startswith("accepted")]
    assert TOP < float(label.get("y")) <= TOP + 12  # inside the plot, under its top edge


def test_a_step_is_a_dashed_line_midway_between_its_runs_labelled_with_its_commits():
    points = [point(i, 1e-3 if i < 4 else 1.03e-3) for i in range(1, 7)]
    svg = svg_of(points, [step(points, 2, 3)])
    line = next(line for line in svg.iter("line") if line.get("class") == "step slower")
    width = WIDTH - LEFT - RIGHT
    middle = LEFT + 2.5 * width / 5
    assert [float(line.get(a)) for a in ("x1", "y1", "x2", "y2")] == pytest.approx(
        [middle, TOP, middle, HEIGHT - BOTTOM], abs=0.06)
    assert (line.get("data-before-run"), line.get("data-after-run")) == ("3", "4")
    assert any(t.text == "0003abcd..0004abcd" for t in svg.iter("text"))


def test_a_creep_is_a_stretch_from_its_first_run_to_its_last_and_never_narrower_than_a_pixel():
    points = [point(i, 1e-3 * (1 + i / 100)) for i in range(1, 4)]
    rect = next(r for r in svg_of(points, [step(points, 0, 2, kind=CREEP)]).iter("rect")
                if "creep" in (r.get("class") or ""))
    assert float(rect.get("x")) == LEFT and float(rect.get("width")) == pytest.approx(WIDTH - LEFT - RIGHT)
    twin = [point(1, 1e-3), dataclasses.replace(point(1, 1e-3), run_id="1b")]
    rect = next(r for r in svg_of(twin, [step(twin, 0, 0, kind=CREEP)]).iter("rect")
                if "creep" in (r.get("class") or ""))
    assert float(rect.get("width")) == 1.0


def test_one_run_and_a_run_without_spread_are_drawn_inside_the_frame():
    [one] = svg_of([point(1, 1e-3)]).iter("circle")
    assert float(one.get("cx")) == pytest.approx(LEFT + (WIDTH - LEFT - RIGHT) / 2)
    flat = [dataclasses.replace(point(i, 1e-3), low_s=1e-3, high_s=1e-3) for i in range(1, 4)]
    ys = {float(c.get("cy")) for c in svg_of(flat).iter("circle")}
    assert len(ys) == 1 and TOP < ys.pop() < HEIGHT - BOTTOM


def test_the_legend_names_each_gpu_by_short_uuid_and_every_kind_of_mark():
    other = dataclasses.replace(KEY, gpu="GPU-52901b0c-0000-0000-0000-000000000002")
    text = legend([Series(KEY, (point(1, 1e-3),)), Series(other, (point(2, 1e-3),))])
    text = html.unescape(text)
    assert "GPU-19ed6398 (cupti, nightly)" in text and "GPU-52901b0c (cupti, nightly)" in text
    assert KEY.gpu not in re.sub(r'data-gpu="[^"]*"', "", text)
    for words in ("passed", "failed: slower", "accepted slowdown", "its run's correctness failed"):
        assert words in text


def test_a_short_uuid_is_the_prefix_and_eight_hex_digits():
    assert short_uuid("GPU-19ed6398-1f2e-3d4c-5b6a-000000000001") == "GPU-19ed6398"
    assert short_uuid(None) == "no UUID" and short_uuid("MIG-12345678-aaaa") == "MIG-1234"


def test_the_accepted_diamond_and_the_run_failed_cross_are_drawn_around_their_point():
    from harness.history.chart import _marker

    accepted = _marker(point(1, 1e-3, outcome="accepted", accepted_reason="tiles"), 10.0, 20.0, "#000")
    assert 'd="M10.0,15.0 L15.0,20.0 L10.0,25.0 L5.0,20.0 Z"' in accepted
    crossed = _marker(point(2, 1e-3, run_failed=True), 10.0, 20.0, "#000")
    assert 'd="M6.0,16.0 L14.0,24.0 M6.0,24.0 L14.0,16.0"' in crossed


def test_ticks_past_a_thousand_seconds_stay_in_seconds():
    from harness.history.chart import tick_labels

    assert tick_labels([2000.0, 4000.0]) == ["2000 s", "4000 s"]


def test_a_failed_runs_triangle_points_up_centred_on_its_run_with_a_level_base():
    # runs 1 and 3 passed, run 2 failed, all at one median: the triangle sits where run 2's circle would
    svg = svg_of([point(1, 1e-3), point(2, 1e-3, outcome="failed", verdict="slower"), point(3, 1e-3)])
    circles = list(svg.iter("circle"))
    cx = (float(circles[0].get("cx")) + float(circles[1].get("cx"))) / 2
    cy = float(circles[0].get("cy"))
    (triangle,) = [mark for mark in marks(svg) if mark.get("data-state") == "failed"]
    corners = [tuple(map(float, pair.split(","))) for pair in re.findall(r"[-\d.]+,[-\d.]+", triangle.get("d"))]
    assert len(corners) == 3 and triangle.get("d").endswith("Z")
    (apex_x, apex_y), (right_x, right_y), (left_x, left_y) = corners
    assert apex_x == pytest.approx(cx, abs=0.06) and (left_x + right_x) / 2 == pytest.approx(cx, abs=0.06)
    assert left_x < cx < right_x
    assert left_y == right_y and apex_y < cy < left_y  # pointing up, the base level below the run's place
    assert all(TOP - 6 <= y <= HEIGHT - BOTTOM + 6 for _, y in corners)
