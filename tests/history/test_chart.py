"""src/kernelwatch/history/chart.py: a case's chart read at a glance: x by run, y ticks that differ, failed runs apart."""

from __future__ import annotations

import dataclasses
import html
import math
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest

from kernelwatch.history.chart import (
    ACCEPTED_COLOUR,
    BOTTOM,
    FAILED_COLOUR,
    HEIGHT,
    LEFT,
    PALETTE,
    RIGHT,
    TOP,
    WIDTH,
    case_plot,
    colours,
    labelled_places,
    legend,
    mark_key,
    nice_ticks,
    precise,
    short_uuid,
    state_mark,
    tick_labels,
)
from kernelwatch.history.series import Point, Series, SeriesKey
from kernelwatch.history.steps import CREEP, FASTER, SLOWER, STEP, Step

START = datetime(2026, 12, 2, tzinfo=UTC)
CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"
KEY = SeriesKey(gpu="GPU-19ed6398-aaaa-bbbb-cccc-000000000001", case=CASE, timer="cupti", profile="nightly")
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM  # the frame inside the margins
PIXEL = 0.06  # coordinates are written with one decimal


def point(run: int, median: float, *, hours: float | None = None, **fields) -> Point:
    return Point(run_id=str(run), started_at=START + timedelta(hours=run if hours is None else hours),
                 commit=f"{run:04d}abcdef0123456789abcdef0123456789ab", branch="main", median_s=median,
                 low_s=median * 0.999, high_s=median * 1.001, sample_count=40, gpu_uuid=KEY.gpu, **fields)


def svg_of(points, steps=(), key=KEY) -> ET.Element:
    one = Series(key, tuple(points))
    return ET.fromstring(case_plot(CASE, [one], {one.key: list(steps)}))


def marks(svg: ET.Element):
    return [element for element in svg.iter() if "point" in (element.get("class") or "").split()]


def texts(svg: ET.Element, kind: str):
    return [text for text in svg.iter("text") if text.get("class") == kind]


def coordinates(element: ET.Element, *names: str) -> list[float]:
    return [float(element.get(name)) for name in names]


def step(one_points, before: int, after: int, kind: str = STEP) -> Step:
    return Step(key=KEY, kind=kind, direction=SLOWER, index=after, before=one_points[before],
                after=one_points[after], ratio=1.03, ratio_low=1.02, ratio_high=1.04, p_value=1e-6,
                runs_before=after, runs_after=len(one_points) - after)


def run_x(place: int, runs: int) -> float:
    """Where the run at `place` (0: the oldest) of `runs` is drawn: evenly from the frame's left edge to its right."""
    return LEFT + place / (runs - 1) * PLOT_WIDTH


def value_y(value: float, low: float, high: float) -> float:
    """Where a duration is drawn on an axis from `low` (the frame's bottom edge) to `high` (its top edge)."""
    return TOP + PLOT_HEIGHT - (value - low) / (high - low) * PLOT_HEIGHT


# --- y ticks: round steps, labels that differ ------------------------------------------------------------------------


@pytest.mark.parametrize("low, high, ticks", [
    (-10, -5, [-10, -8, -6, -4]),  # below zero as above it
    (0, 3, [0, 1, 2, 3]),  # steps of 1 give four ticks: enough, so no finer step
    (1, 4, [1, 2, 3, 4]),  # ends that are ticks get no tick beyond them
    (0, 5, [0, 2, 4, 6]),  # 2.5 gives three ticks, 2 four
    (0, 6, [0, 2.5, 5, 7.5]),  # 2.5 gives four
    (0.3, 0.6, [0.3, 0.4, 0.5, 0.6]),  # 0.3 / 0.1 is 2.9999999999999996 in floating point: 0.3 is still the first
    (0.6, 0.9, [0.6, 0.7, 0.8, 0.9]),  # 7 * 0.1 is 0.7000000000000001: the tick is 0.7
    (0.99e-3, 1.01e-3, [0.99e-3, 0.995e-3, 1e-3, 1.005e-3, 1.01e-3]),
    (2.9301e-3, 2.9318e-3, [2.93e-3, 2.9305e-3, 2.931e-3, 2.9315e-3, 2.932e-3]),
    (1e-12, 1.02e-12, [1e-12, 1.005e-12, 1.01e-12, 1.015e-12, 1.02e-12]),  # 5 fs apart: still exact
], ids=str)
def test_nice_ticks_take_the_largest_round_step_that_gives_four_ticks_from_below_low_to_above_high(low, high, ticks):
    assert nice_ticks(low, high) == ticks


@pytest.mark.parametrize("low, high", [(2.9301e-3, 2.9318e-3), (1e-6, 9e-6), (0.5, 0.51), (4.1e-6, 4.3e-6)])
def test_nice_ticks_are_round_steps_spanning_the_range_and_their_labels_differ(low, high):
    ticks = nice_ticks(low, high)
    assert 4 <= len(ticks) <= 9 and ticks[0] <= low and ticks[-1] >= high  # the axis runs from tick to tick
    steps = {round(b - a, 18) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len({round(s / min(steps), 6) for s in steps}) == 1  # one step between all ticks
    mantissa = min(steps) / 10 ** math.floor(math.log10(min(steps)))
    assert round(mantissa, 6) in (1, 2, 2.5, 5)
    labels = tick_labels(ticks)
    assert len(set(labels)) == len(labels)


def test_nice_ticks_asked_for_many_go_down_to_a_hundredth_of_the_ranges_power_of_ten():
    # twenty steps over 0..1: a tenth gives eleven ticks, too few; 0.05 (5 times a hundredth) gives twenty-one
    assert nice_ticks(0, 1, count=21) == [i / 20 for i in range(21)]


@pytest.mark.parametrize("low, high", [(2e-3, 2e-3), (3e-3, 1e-3)], ids=["empty", "reversed"])
def test_nice_ticks_of_an_empty_or_reversed_range_are_its_low_end_alone(low, high):
    assert nice_ticks(low, high) == [low]


@pytest.mark.parametrize("low, high", [(-math.inf, 1.0), (0.0, math.inf), (math.nan, 1.0)], ids=str)
def test_nice_ticks_of_a_range_with_an_end_not_finite_are_its_low_end_alone(low, high):
    (tick,) = nice_ticks(low, high)
    assert tick == low or (math.isnan(tick) and math.isnan(low))


def test_tick_labels_take_one_unit_and_no_more_digits_than_needed():
    assert tick_labels([1e-3, 2e-3, 3e-3]) == ["1 ms", "2 ms", "3 ms"]
    assert tick_labels([2.9305e-3, 2.931e-3, 2.9315e-3]) == ["2.9305 ms", "2.9310 ms", "2.9315 ms"]
    assert tick_labels([2.93e-3, 2.94e-3]) == ["2.93 ms", "2.94 ms"]
    assert tick_labels([1e-3]) == ["1.000 ms"]  # one tick: its value to four figures
    assert tick_labels([250e-6, 500e-6]) == ["250 µs", "500 µs"]


def test_tick_labels_change_unit_at_a_thousand():
    assert tick_labels([996e-6, 997e-6, 998e-6, 999e-6]) == ["996 µs", "997 µs", "998 µs", "999 µs"]
    assert tick_labels([0.5, 1.0]) == ["0.5 s", "1.0 s"]  # a thousand milliseconds is a second
    assert tick_labels([2000.0, 4000.0]) == ["2000 s", "4000 s"]  # past a thousand seconds: still seconds
    # a microsecond is 1 µs, though 1e-6 / 1e-9 is 999.9999999999999 in floating point
    assert tick_labels([1e-6]) == ["1.000 µs"] and tick_labels([1e-6, 2e-6]) == ["1 µs", "2 µs"]
    # and a millisecond a float's rounding left 3e-10 µs short of a thousand is a millisecond, not 1000 µs
    assert tick_labels([(1000 - 3e-10) * 1e-6]) == ["1.000 ms"]


def test_ticks_in_any_order_get_the_labels_they_would_get_in_ascending_order():
    ascending = [1e-3, 1.5e-3, 2e-3, 2.5e-3]
    assert tick_labels(ascending) == ["1.0 ms", "1.5 ms", "2.0 ms", "2.5 ms"]
    assert tick_labels(ascending[::-1]) == tick_labels(ascending)[::-1]
    assert tick_labels([2e-3, 1e-3, 1.5e-3]) == ["2.0 ms", "1.0 ms", "1.5 ms"]


def test_a_tick_label_may_be_off_its_value_by_one_percent_of_the_step_and_no_more():
    # steps of 50 s: 0.5 s off is 1%, so "0" will do for 0.5; steps of 49.75 s: 0.5 s off is over 1%
    assert tick_labels([0.5, 50.5]) == ["0 s", "50 s"]
    assert tick_labels([0.5, 50.25]) == ["0.5 s", "50.2 s"]


def test_tick_labels_take_up_to_eight_decimals_to_differ_and_never_more():
    assert tick_labels([1.00000001, 1.00000002]) == ["1.00000001 s", "1.00000002 s"]
    labels = tick_labels([1.000000001, 1.000000002])  # nine decimals would tell these apart: too long a label
    assert all(len(label.split()[0].split(".")[1]) <= 8 for label in labels)


def test_any_number_of_ticks_is_labelled():
    assert tick_labels([i * 1e-3 for i in range(1, 301)]) == [f"{i} ms" for i in range(1, 301)]


@pytest.mark.parametrize("seconds, text", [
    (2.930e-3, "2.930 ms"),
    (29.31e-3, "29.31 ms"),
    (123.4e-6, "123.4 µs"),
    (999e-6, "999.0 µs"),  # under a thousand of a unit: that unit
    (1.0, "1.000 s"),  # a thousand milliseconds: the next unit
    (1e-9, "1.000 ns"),
    (1e-6, "1.000 µs"),  # 1e-6 / 1e-9 is 999.9999999999999: still the next unit
    (999.9e-9, "999.9 ns"),
    (2000.0, "2000 s"),  # past a thousand seconds: still seconds, and whole
    (20000.0, "20000 s"),
    (0.0, "0 ns"),
], ids=str)
def test_precise_writes_four_significant_figures_in_the_unit_that_keeps_the_value_under_a_thousand(seconds, text):
    assert precise(seconds) == text


@pytest.mark.parametrize("seconds, text", [(999.96e-6, "1.000 ms"), (9.9996e-3, "10.00 ms"), (0.99996, "1.000 s")],
                         ids=str)
def test_precise_rounds_to_four_figures_before_it_picks_the_unit_and_the_decimals(seconds, text):
    assert precise(seconds) == text


# --- the frame and where runs and values are drawn -------------------------------------------------------------------


def test_the_chart_is_960_by_360_with_its_frame_inset_for_the_axis_labels():
    svg = svg_of([point(1, 1e-3), point(2, 1.1e-3)])
    assert (svg.get("width"), svg.get("height"), svg.get("viewBox")) == ("960", "360", "0 0 960 360")
    frame = svg.find("rect")
    # 84 px on the left for the y labels, 48 on the right, 34 above for the step labels, 64 below for the x labels
    assert coordinates(frame, "x", "y", "width", "height") == [84, 34, 960 - 84 - 48, 360 - 34 - 64]


def test_x_is_by_run_equally_spaced_whatever_the_time_between_runs():
    # three runs in one hour, then one a week later: four equal places from the left edge to the right
    svg = svg_of([point(1, 1e-3, hours=0), point(2, 1e-3, hours=0.2), point(3, 1e-3, hours=0.4),
                  point(4, 1e-3, hours=24 * 7)])
    xs = [float(c.get("cx")) for c in svg.iter("circle")]
    assert xs == pytest.approx([LEFT, LEFT + PLOT_WIDTH / 3, LEFT + 2 * PLOT_WIDTH / 3, LEFT + PLOT_WIDTH], abs=PIXEL)


def test_two_runs_sit_on_the_frames_left_and_right_edges():
    xs = [float(c.get("cx")) for c in svg_of([point(1, 1e-3), point(2, 1.1e-3)]).iter("circle")]
    assert xs == pytest.approx([LEFT, WIDTH - RIGHT], abs=PIXEL)


def test_a_points_y_is_its_median_mapped_linearly_from_the_lowest_tick_at_the_bottom_to_the_highest_at_the_top():
    medians = (1.0e-3, 1.2e-3, 1.49e-3)
    svg = svg_of([point(i, m) for i, m in enumerate(medians, start=1)])
    # the bands span 0.999 to 1.4915 ms: a tick every 0.25 ms from 0.75 to 1.5 ms, the axis from the first to the last
    assert [t.text for t in texts(svg, "y-tick")] == ["0.75 ms", "1.00 ms", "1.25 ms", "1.50 ms"]
    ys = [float(c.get("cy")) for c in svg.iter("circle")]
    assert ys == pytest.approx([value_y(m, 0.75e-3, 1.5e-3) for m in medians], abs=PIXEL)


def test_each_y_tick_is_a_gridline_across_the_frame_labelled_just_left_of_the_frame_level_with_it():
    svg = svg_of([point(i, m) for i, m in enumerate((1.0e-3, 1.2e-3, 1.49e-3), start=1)])
    ticks = [0.75e-3, 1.0e-3, 1.25e-3, 1.5e-3]
    gridlines = [line for line in svg.iter("line") if line.get("stroke") == "#eee"]
    labels = texts(svg, "y-tick")
    assert len(gridlines) == len(labels) == len(ticks)
    for value, line, label in zip(ticks, gridlines, labels, strict=True):
        y = value_y(value, ticks[0], ticks[-1])
        assert coordinates(line, "x1", "x2") == [LEFT, WIDTH - RIGHT]
        assert coordinates(line, "y1", "y2") == pytest.approx([y, y], abs=PIXEL)
        # right-aligned 6 px left of the frame, the baseline 4 px under the line: the text's middle on it
        assert label.get("text-anchor") == "end" and float(label.get("x")) == LEFT - 6
        assert float(label.get("y")) == pytest.approx(y + 4, abs=PIXEL)
    assert coordinates(gridlines[0], "y1")[0] == pytest.approx(HEIGHT - BOTTOM) and float(gridlines[-1].get("y1")) == TOP


def test_every_mark_lies_inside_the_frame_and_a_slower_run_is_higher():
    points = [point(i, m) for i, m in enumerate((2.930e-3, 2.931e-3, 2.932e-3, 3.02e-3), start=1)]
    ys = [float(c.get("cy")) for c in svg_of(points).iter("circle")]
    assert all(TOP <= y <= HEIGHT - BOTTOM for y in ys)
    assert ys[3] < ys[0] and ys[2] < ys[0]  # a longer time is drawn higher


def test_the_y_ticks_read_differently_even_when_the_medians_agree_to_three_digits():
    # the dashboard's old ticks read "2.93 ms" three times for this case
    points = [point(i, m) for i, m in enumerate((2.9301e-3, 2.9312e-3, 2.9305e-3, 2.9318e-3), start=1)]
    labels = [t.text for t in texts(svg_of(points), "y-tick")]
    assert len(labels) >= 3 and len(set(labels)) == len(labels)
    assert all(label.endswith(" ms") for label in labels)


def test_one_run_is_drawn_in_the_middle_of_the_frame():
    [one] = svg_of([point(1, 1e-3)]).iter("circle")
    assert float(one.get("cx")) == pytest.approx(LEFT + PLOT_WIDTH / 2)


def test_runs_without_spread_are_drawn_at_mid_height_on_an_axis_one_percent_either_side():
    # equal values that are separate objects, as a store reads them back
    flat = [dataclasses.replace(point(i, 1e-3), low_s=float("1e-3"), median_s=float("1e-3"), high_s=float("1e-3"))
            for i in range(1, 4)]
    svg = svg_of(flat)
    assert [t.text for t in texts(svg, "y-tick")] == ["0.990 ms", "0.995 ms", "1.000 ms", "1.005 ms", "1.010 ms"]
    ys = [float(c.get("cy")) for c in svg.iter("circle")]
    assert ys == pytest.approx([TOP + PLOT_HEIGHT / 2] * 3, abs=PIXEL)


# --- the x labels ----------------------------------------------------------------------------------------------------


def test_the_x_labels_name_the_run_its_date_and_its_commit():
    svg = svg_of([point(i, 1e-3) for i in range(1, 4)])
    labels = [" ".join(t.text for t in text.iter("tspan")) for text in texts(svg, "x-tick")]
    assert labels == [f"run {i} 12-02 {i:02d}:00 {i:04d}abcd" for i in range(1, 4)]


@pytest.mark.parametrize("runs, labelled", [
    (8, list(range(1, 9))),  # eight runs: each
    (9, [1, 3, 5, 7, 9]),  # nine: every other one
    (20, [1, 4, 7, 11, 14, 17, 20]),  # six gaps of 3 runs or more: never the 19th beside the 20th
    (40, [1, 7, 12, 18, 23, 29, 34, 40]),  # seven gaps of 5 runs or more
    (300, [1, 44, 86, 129, 172, 215, 257, 300]),  # seven gaps of 38 runs or more
])
def test_at_most_eight_runs_are_labelled_evenly_from_the_oldest_to_the_newest(runs, labelled):
    svg = svg_of([point(i, 1e-3) for i in range(1, runs + 1)])
    assert [next(text.iter("tspan")).text for text in texts(svg, "x-tick")] == [f"run {run}" for run in labelled]


@pytest.mark.parametrize("count", range(1, 61))
@pytest.mark.parametrize("chars", [6, 12, 40])
def test_labelled_places_are_never_closer_than_a_label_is_wide_and_the_newest_is_one(count, chars):
    place_px = PLOT_WIDTH / max(count - 1, 1)
    places = labelled_places(count, place_px, chars)
    assert places[-1] == count - 1 and places == sorted(set(places)) and len(places) <= 8
    assert all((b - a) * place_px >= chars * 6.5 + 8 for a, b in zip(places, places[1:], strict=False))


@pytest.mark.parametrize("count, place_px, chars, places", [
    (2, 100.0, 20, [1]),  # a label 138 px wide, the runs 100 px apart: no room for two, the newest alone
    (3, 60.0, 20, [2]),  # 120 px between the oldest and the newest: still no room for two
    (3, 69.0, 20, [0, 2]),  # 138 px: just room for the oldest and the newest
    (1, 828.0, 40, [0]),  # a single run is labelled however wide its label
    (0, 828.0, 11, []),
])
def test_where_two_labels_have_no_room_only_the_newest_run_is_labelled(count, place_px, chars, places):
    assert labelled_places(count, place_px, chars) == places


def test_a_chart_of_two_runs_whose_labels_would_overlap_labels_the_newest_alone():
    # run ids of 122 characters: labels of 126 (819 px, and 8 between) for runs 828 px apart; one more and no room
    def labelled(id_chars: int) -> list[str]:
        runs = [dataclasses.replace(point(i, 1e-3), run_id=str(i) * id_chars) for i in (1, 2)]
        return [next(text.iter("tspan")).text.removeprefix("run ")[0] for text in texts(svg_of(runs), "x-tick")]

    assert labelled(122) == ["1", "2"] and labelled(123) == ["2"]


def test_an_x_label_is_under_its_run_below_the_frame_one_line_per_field():
    svg = svg_of([point(i, 1e-3) for i in range(1, 5)])
    for place, text in enumerate(texts(svg, "x-tick")):
        x = run_x(place, 4)
        assert text.get("text-anchor") == "middle" and float(text.get("x")) == pytest.approx(x, abs=PIXEL)
        assert float(text.get("y")) == HEIGHT - BOTTOM + 14  # the first line's baseline 14 px under the frame
        spans = list(text.iter("tspan"))
        assert [float(span.get("x")) for span in spans] == pytest.approx([x] * 3, abs=PIXEL)
        assert [span.get("dy") for span in spans] == [None, "12", "12"]


# --- marks, steps and acceptances ------------------------------------------------------------------------------------


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


def test_the_triangle_diamond_and_cross_are_drawn_around_their_point():
    failed = state_mark(point(1, 1e-3, outcome="failed"), 10.0, 20.0, "#000")
    assert 'd="M10.0,14.5 L15.0,23.5 L5.0,23.5 Z"' in failed  # apex 5.5 px up, a 10 px base 3.5 px down
    accepted = state_mark(point(1, 1e-3, outcome="accepted", accepted_reason="tiles"), 10.0, 20.0, "#000")
    assert 'd="M10.0,15.0 L15.0,20.0 L10.0,25.0 L5.0,20.0 Z"' in accepted
    crossed = state_mark(point(2, 1e-3, run_failed=True), 10.0, 20.0, "#000")
    assert 'd="M6.0,16.0 L14.0,24.0 M6.0,24.0 L14.0,16.0"' in crossed


def test_a_smaller_mark_is_the_same_shape_scaled_and_carries_its_run_and_state():
    small = state_mark(point(1, 1e-3, outcome="failed"), 10.0, 20.0, "#000", size=3, css="mark")
    assert 'd="M10.0,16.7 L13.0,22.1 L7.0,22.1 Z"' in small  # the chart's triangle at 3/5 of its size
    assert 'class="mark failed" data-run="1" data-state="failed"' in small and "<title>run 1, " in small
    assert 'r="1.8"' in state_mark(point(1, 1e-3), 10.0, 20.0, "#000", size=3)


def test_a_marks_size_and_class_are_given_by_name_only():
    # the chart and the sparklines name them (size=3, css="mark"): a fifth argument by position is refused
    with pytest.raises(TypeError):
        state_mark(point(1, 1e-3), 10.0, 20.0, "#000", 3)  # type: ignore[misc]


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
    assert apex_x == pytest.approx(cx, abs=PIXEL) and (left_x + right_x) / 2 == pytest.approx(cx, abs=PIXEL)
    assert left_x < cx < right_x
    assert left_y == right_y and apex_y < cy < left_y  # pointing up, the base level below the run's place
    assert all(TOP - 6 <= y <= HEIGHT - BOTTOM + 6 for _, y in corners)


def test_an_accepted_slowdown_is_a_dotted_line_down_the_frame_at_its_run_labelled_with_its_commit():
    points = [point(1, 1e-3), point(2, 1e-3),
              point(3, 1.03e-3, outcome="accepted", verdict="accepted", accepted_reason="tiles, by a trailer"),
              point(4, 1.03e-3)]
    svg = svg_of(points)
    x = run_x(2, 4)
    (line,) = [line for line in svg.iter("line") if line.get("class") == "accepted"]
    assert coordinates(line, "x1", "y1", "x2", "y2") == pytest.approx([x, TOP, x, HEIGHT - BOTTOM], abs=PIXEL)
    assert line.find("title").text == "accepted at run 3 (commit 0003abcdef01): tiles, by a trailer"
    (label,) = [text for text in svg.iter("text") if (text.text or "").startswith("accepted")]
    assert label.text == "accepted 0003abcd"
    # 3 px right of the line, its baseline 12 px under the frame's top edge
    assert coordinates(label, "x", "y") == pytest.approx([x + 3, TOP + 12], abs=PIXEL)


def test_a_step_is_a_dashed_line_midway_between_its_runs_labelled_with_its_commits():
    points = [point(i, 1e-3 if i < 4 else 1.03e-3) for i in range(1, 7)]
    svg = svg_of(points, [step(points, 2, 3)])
    line = next(line for line in svg.iter("line") if line.get("class") == "step slower")
    middle = (run_x(2, 6) + run_x(3, 6)) / 2
    assert coordinates(line, "x1", "y1", "x2", "y2") == pytest.approx([middle, TOP, middle, HEIGHT - BOTTOM], abs=PIXEL)
    assert (line.get("data-before-run"), line.get("data-after-run")) == ("3", "4")
    (label,) = [t for t in svg.iter("text") if t.text == "0003abcd..0004abcd"]
    # above the frame: 3 px right of the line, the baseline 6 px over the frame's top edge
    assert coordinates(label, "x", "y") == pytest.approx([middle + 3, TOP - 6], abs=PIXEL)


def test_a_step_two_gpus_share_is_labelled_once():
    points = [point(i, 1e-3 if i < 4 else 1.03e-3) for i in range(1, 7)]
    other = dataclasses.replace(KEY, gpu="GPU-52901b0c-0000-0000-0000-000000000002")
    group = [Series(KEY, tuple(points)), Series(other, tuple(points))]
    svg = ET.fromstring(case_plot(CASE, group, {KEY: [step(points, 2, 3)], other: [step(points, 2, 3)]}))
    assert len([line for line in svg.iter("line") if line.get("class") == "step slower"]) == 2
    assert [t.text for t in texts(svg, "step-label")] == ["0003abcd..0004abcd"]


def test_the_labels_of_steps_close_together_go_on_a_second_line_and_a_third_is_left_to_its_tooltip():
    # steps between runs 3-4, 4-5 and 5-6 of 40: 21 px apart, each label about 120 px wide
    points = [point(i, 1e-3 * (1.03 if i > 3 else 1)) for i in range(1, 41)]
    svg = svg_of(points, [step(points, 2, 3), step(points, 3, 4), step(points, 4, 5)])
    labels = texts(svg, "step-label")
    assert [t.text for t in labels] == ["0003abcd..0004abcd", "0004abcd..0005abcd"]
    assert [float(t.get("y")) for t in labels] == [TOP - 6, TOP - 18]
    assert len([line for line in svg.iter("line") if line.get("class") == "step slower"]) == 3  # every line drawn


@pytest.mark.parametrize("runs, rows", [
    (25, [0, 1]),  # 3.5 places of 34.5 px: the second label would start 3.75 px after the first ends
    (24, [0, 0]),  # 3.5 places of 36 px: 9 px after it, more than the room kept between two labels
])
def test_a_step_label_goes_on_the_second_line_where_it_would_come_within_a_few_pixels_of_the_first(runs, rows):
    # steps between runs 1-2 and 4-6 (the first label 18 characters, 117 px, wide from 3 px right of its line)
    points = [point(i, 1e-3 * (1.03 if i > 1 else 1)) for i in range(1, runs + 1)]
    svg = svg_of(points, [step(points, 0, 1), step(points, 3, 5)])
    labels = texts(svg, "step-label")
    assert [t.text for t in labels] == ["0001abcd..0002abcd", "0004abcd..0006abcd"]
    assert [float(t.get("y")) for t in labels] == [TOP - 6 - 12 * row for row in rows]
    first_right = float(labels[0].get("x")) + 18 * 6.5
    assert float(labels[1].get("x")) - first_right == pytest.approx(3.75 if runs == 25 else 9, abs=PIXEL)


def test_a_step_label_that_would_come_within_the_room_kept_between_labels_goes_on_the_second_line():
    # eleven runs, 82.8 px apart: steps between runs 1-2 and 2-4, their labels 7.2 px apart on one line
    points = [point(i, 1e-3 * (1.03 if i > 1 else 1)) for i in range(1, 12)]
    labels = texts(svg_of(points, [step(points, 0, 1), step(points, 1, 3)]), "step-label")
    assert float(labels[1].get("x")) - float(labels[0].get("x")) - 18 * 6.5 == pytest.approx(7.2, abs=PIXEL)
    assert [float(t.get("y")) for t in labels] == [TOP - 6, TOP - 18]


def test_the_label_of_a_step_three_runs_before_the_newest_of_forty_is_inside_the_chart():
    points = [point(i, 1e-3 * (1.03 if i > 37 else 1)) for i in range(1, 41)]
    (label,) = texts(svg_of(points, [step(points, 36, 37)]), "step-label")
    assert float(label.get("x")) + len(label.text) * 6.5 <= WIDTH


def test_a_step_whose_kind_was_read_back_as_text_is_still_drawn_as_a_step():
    points = [point(i, 1e-3 if i < 3 else 1.03e-3) for i in range(1, 5)]
    kind = "".join(["st", "ep"])  # equal to STEP, not the same object: as JSON or a database gives it back
    svg = svg_of(points, [step(points, 1, 2, kind=kind)])
    assert [line.get("data-after-run") for line in svg.iter("line") if line.get("class") == "step slower"] == ["3"]
    assert not [rect for rect in svg.iter("rect") if "creep" in (rect.get("class") or "")]


def test_a_creep_is_a_stretch_from_its_first_run_to_its_last_and_never_narrower_than_a_pixel():
    points = [point(i, 1e-3 * (1 + i / 100)) for i in range(1, 4)]
    rect = next(r for r in svg_of(points, [step(points, 0, 2, kind=CREEP)]).iter("rect")
                if "creep" in (r.get("class") or ""))
    assert float(rect.get("x")) == LEFT and float(rect.get("width")) == pytest.approx(PLOT_WIDTH)
    twin = [point(1, 1e-3), dataclasses.replace(point(1, 1e-3), run_id="1b")]
    rect = next(r for r in svg_of(twin, [step(twin, 0, 0, kind=CREEP)]).iter("rect")
                if "creep" in (r.get("class") or ""))
    assert float(rect.get("width")) == 1.0


# --- legend, colours, names ------------------------------------------------------------------------------------------


def test_the_legend_names_each_gpu_by_short_uuid_and_every_kind_of_mark():
    other = dataclasses.replace(KEY, gpu="GPU-52901b0c-0000-0000-0000-000000000002")
    text = legend([Series(KEY, (point(1, 1e-3),)), Series(other, (point(2, 1e-3),))])
    text = html.unescape(text)
    assert "GPU-19ed6398 (cupti, nightly)" in text and "GPU-52901b0c (cupti, nightly)" in text
    assert KEY.gpu not in re.sub(r'data-gpu="[^"]*"', "", text)
    for words in ("passed", "failed: slower", "accepted slowdown", "its run failed (a test besides its time)"):
        assert words in text


def test_the_key_of_the_sparklines_leaves_out_the_passed_runs_circle():
    assert "passed" not in mark_key(passed=False) and mark_key(passed=False).count("legend-mark") == 3


def test_series_take_the_palettes_colours_in_turn_and_start_again_after_the_last():
    group = [Series(dataclasses.replace(KEY, gpu=f"GPU-{i:08x}"), (point(1, 1e-3),)) for i in range(17)]
    assert len(set(PALETTE)) == len(PALETTE) == 8
    assert list(colours(group).values()) == [*PALETTE, *PALETTE, PALETTE[0]]


def test_quotes_and_angle_brackets_in_a_case_name_survive_in_the_svg():
    case = 'suites/test_x.py::test_y[say "hi" <&>]'
    one = Series(dataclasses.replace(KEY, case=case), (point(1, 1e-3),))
    assert ET.fromstring(case_plot(case, [one], {})).get("data-case") == case


def test_a_short_uuid_is_the_prefix_and_eight_hex_digits():
    assert short_uuid("GPU-19ed6398-1f2e-3d4c-5b6a-000000000001") == "GPU-19ed6398"
    assert short_uuid(None) == "no UUID" and short_uuid("MIG-12345678-aaaa") == "MIG-1234"


# --- the whole chart, compared with its reviewed snapshot (tests/history/__snapshots__/test_chart.ambr) ---------------
# Each chart below is built to reach some of the module's branches; together they reach every one. The snapshot
# holds the SVG one element a line (the SVG itself is one line: `_readable` checks so), so that a change reads as
# the elements it moved. Refresh with `pytest tests/history/test_chart.py --snapshot-update`, then read the diff.

OTHER = dataclasses.replace(KEY, gpu="GPU-52901b0c-0000-0000-0000-000000000002")


def _readable(svg: str) -> str:
    """The SVG, checked to be one well-formed line, one element a line."""
    assert "\n" not in svg
    ET.fromstring(svg)
    return svg.replace("><", ">\n<")


def _two_gpus_in_every_state():
    """Runs 1-10, each on two GPUs (GPU b 20% slower): a step both share at 4-5, a step of GPU a alone at 5-6 (its
    label overlaps the first: the second line), a faster step of GPU b at 8-9, a creep of GPU b over runs 6-9; GPU a's
    run 5 failed, 6 accepted, 8's run failed, run 2 not judged and on no branch."""
    def of(gpu: str, scale: float) -> list[Point]:
        points = []
        for run in range(1, 11):
            fields = {"verdict": "same"}
            if gpu == KEY.gpu and run == 5:
                fields |= {"outcome": "failed", "verdict": "slower"}
            if gpu == KEY.gpu and run == 6:
                fields |= {"outcome": "accepted", "verdict": "accepted", "accepted_reason": "bigger tiles, by a trailer"}
            if gpu == KEY.gpu and run == 8:
                fields |= {"run_failed": True}
            one = point(run, scale * (1.01e-3 if run < 5 else 1.06e-3) * (1 + ((run * 7) % 5 - 2) / 1000), **fields)
            one = dataclasses.replace(one, gpu_uuid=gpu)
            points.append(dataclasses.replace(one, branch=None, verdict=None) if run == 2 else one)
        return points

    a, b = of(KEY.gpu, 1.0), of(OTHER.gpu, 1.2)
    faster = dataclasses.replace(step(b, 7, 8), key=OTHER, direction=FASTER, ratio=0.97, ratio_low=0.96,
                                 ratio_high=0.98)
    steps = {KEY: [step(a, 3, 4), step(a, 4, 5)],
             OTHER: [dataclasses.replace(step(b, 3, 4), key=OTHER), dataclasses.replace(step(b, 5, 8, CREEP), key=OTHER),
                     faster]}
    return CASE, [Series(KEY, tuple(a)), Series(OTHER, tuple(b))], steps


def _forty_runs_in_microseconds():
    """40 runs of about 4.2 µs: eight x labels of the forty; steps at runs 20-21, 21-22 and 22-23 (the third label has
    no room on either line: its line's tooltip alone) and 30-31."""
    points = [point(run, 4.2e-6 * (1.03 if run > 20 else 1) * (1 + ((run * 13) % 7 - 3) / 1000)) for run in range(1, 41)]
    return CASE, [Series(KEY, tuple(points))], {KEY: [step(points, 19, 20), step(points, 20, 21),
                                                      step(points, 21, 22), step(points, 29, 30)]}


def _nanoseconds_to_microseconds():
    """Five runs from 850 ns to 1.15 µs: the ticks in µs (the largest), the tooltips in ns and µs."""
    medians = (850e-9, 920e-9, 999.9e-9, 1.0e-6, 1.15e-6)
    return CASE, [Series(KEY, tuple(point(run, m) for run, m in enumerate(medians, start=1)))], {}


def _milliseconds_to_seconds():
    """Four runs from 0.9 s to 1.4 s with wide bands: the ticks in s, the tooltips in ms and s."""
    points = [dataclasses.replace(point(run, m), low_s=m * 0.9, high_s=m * 1.1)
              for run, m in enumerate((0.9, 0.9995, 1.2, 1.4), start=1)]
    return CASE, [Series(KEY, tuple(points))], {}


def _one_run():
    """A single run: in the middle of the frame, labelled."""
    return CASE, [Series(KEY, (point(7, 2.5e-3),))], {KEY: []}


def _flat():
    """Three runs of exactly 1 ms and no spread: the axis 1% either side, every mark at mid-height."""
    flat = [dataclasses.replace(point(run, 1e-3), low_s=1e-3, high_s=1e-3) for run in range(1, 4)]
    return CASE, [Series(KEY, tuple(flat))], {}


def _odd_characters():
    """Quotes, angle brackets and ampersands in every text the chart shows: the case, the GPU (a model, not a UUID),
    the timer and profile, the runs, the commits, the branch and the acceptance's reason; the GPU UUID of a run
    unknown."""
    key = SeriesKey(gpu='NVIDIA "H200" <SXM> & co', case='suites/test_x.py::test_y[say "hi" <&>]',
                    timer="cu<pti>", profile="night & 'day'")
    points = [Point(run_id=f'r<{run}>&"', started_at=START + timedelta(hours=run), commit=f"<{run}>&'\"abcdef0123",
                    branch="feat/<x>&'y'", median_s=m, low_s=m * 0.99, high_s=m * 1.01, sample_count=7, gpu_uuid=None,
                    **fields)
              for run, m, fields in [(1, 1e-3, {}), (2, 1.1e-3, {"outcome": "accepted", "verdict": "a<b>",
                                                                    "accepted_reason": 'tiles "by" <trailer> & co'}),
                                     (3, 1.1e-3, {})]]
    one_step = dataclasses.replace(step(points, 0, 1), key=key)
    return key.case, [Series(key, tuple(points))], {key: [one_step]}


def _long_run_ids():
    """Twelve runs named by 36-character ids: their x labels (40 characters) are wider than a date's, so no two
    closer than four places: three of the twelve are labelled."""
    points = [dataclasses.replace(point(run, 1e-3 * (1 + run / 100)), run_id=f"{run:08d}-aaaa-bbbb-cccc-dddddddddddd")
              for run in range(1, 13)]
    return CASE, [Series(KEY, tuple(points))], {}


def _nine_gpus():
    """Nine GPUs of one run each, runs 1-9: the palette's eight colours, then its first again."""
    group = [Series(dataclasses.replace(KEY, gpu=f"GPU-{i:08x}-0000"),
                    (dataclasses.replace(point(i, 1e-3 * (1 + i / 50)), gpu_uuid=f"GPU-{i:08x}-0000"),))
             for i in range(1, 10)]
    return CASE, group, {}


CHARTS = {"two-gpus-in-every-state": _two_gpus_in_every_state, "forty-runs-in-microseconds": _forty_runs_in_microseconds,
          "nanoseconds-to-microseconds": _nanoseconds_to_microseconds,
          "milliseconds-to-seconds": _milliseconds_to_seconds, "one-run": _one_run, "flat": _flat,
          "odd-characters": _odd_characters, "long-run-ids": _long_run_ids, "nine-gpus": _nine_gpus}


@pytest.mark.parametrize("name", CHARTS)
def test_the_whole_chart_is_the_reviewed_one(name, snapshot):
    case, group, steps = CHARTS[name]()
    assert _readable(case_plot(case, group, steps)) == snapshot


@pytest.mark.parametrize("name", ["two-gpus-in-every-state", "odd-characters", "nine-gpus"])
def test_the_whole_legend_is_the_reviewed_one(name, snapshot):
    _, group, _ = CHARTS[name]()
    text = legend(group)
    assert "\n" not in text
    assert text.replace("><", ">\n<") == snapshot


def test_the_sparklines_key_of_marks_is_the_reviewed_one(snapshot):
    assert mark_key(passed=False).replace("><", ">\n<") == snapshot
