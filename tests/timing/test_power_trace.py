"""kernelwatch.timing.power_trace: energy windows cut at the counter's changes, launches placed by the replays' events."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kernelwatch.timing.power_trace import (
    COUNTER_PERIOD_S,
    Trace,
    counter_changes,
    idle_power,
    launch_timeline,
    on_grid,
    windows_of,
)
from kernelwatch.verdict.energy import mean_interval

PERIOD = 0.1
WATTS = 500.0
LAUNCH_S = 1e-3  # one launch a millisecond, one event each 10 launches


def synthetic(seconds: float = 2.0, poll: float = 5e-4, lag: float = 2e-4, busy: bool = True, warm: float = 0.0):
    """A counter that adds WATTS x PERIOD at each change (every PERIOD from 0.05 s), polled every `poll`;
    replays of 10 launches, each seen done `lag` after the GPU finished it (GPU clock 1.0 s behind)."""
    trace = Trace(warm_until=warm)
    t = 0.0
    while t < seconds:
        ticks = int((t + 0.05) / PERIOD)
        trace.polls.append((t, 1e6 + ticks * WATTS * PERIOD * 1e3))
        trace.instant.append((t, WATTS * 1.002))
        t += poll
    if busy:
        finished = [(i + 1) * 10 * LAUNCH_S for i in range(int(seconds / 0.01))]  # host clock
        trace.done = [(t + lag, t - 1.0, 10 * (i + 1)) for i, t in enumerate(finished)]
    trace.samples = [(0.01 + i * 0.02, WATTS * 0.998) for i in range(int(seconds / 0.02))]
    return trace


def test_a_change_is_timed_between_the_two_polls_that_saw_it():
    polls = [(0.0, 5), (0.1, 5), (0.2, 7), (0.3, 7), (0.4, 9)]
    assert counter_changes(polls) == [(pytest.approx(0.15), 7), (pytest.approx(0.35), 9)]


def test_a_counter_that_goes_back_changed_too():
    # a driver reload restarts the counter: the update still came, and it keeps the counter's rhythm
    polls = [(0.0, 5), (0.1, 7), (0.2, 2), (0.3, 2)]
    assert counter_changes(polls) == [(pytest.approx(0.05), 7), (pytest.approx(0.15), 2)]


def test_the_events_are_placed_by_the_soonest_seen_one():
    # GPU clock 10 s behind; seen 3, 1 and 2 ms late: the offset is the 1 ms one's
    times, launches = launch_timeline([(10.003, 0.0, 5), (10.011, 0.010, 10), (10.022, 0.020, 15)])
    assert list(times) == pytest.approx([10.001, 10.011, 10.021]) and list(launches) == [5, 10, 15]


def test_an_event_row_of_another_shape_is_refused_not_read_in_part():
    with pytest.raises(ValueError):
        launch_timeline([(10.003, 0.0, 5, "extra"), (10.011, 0.010, 10, "extra"), (10.022, 0.020, 15)])


def test_windows_span_whole_counter_periods_and_give_the_power_and_energy_per_launch():
    windows = windows_of(synthetic(), 5)
    assert len(windows) == 3  # 19 changes from 0.05 s to 1.85 s: three windows of five periods
    for window in windows:
        assert window.seconds == pytest.approx(0.5, abs=1e-3)
        assert window.power_w == pytest.approx(WATTS, rel=2e-3)
        assert window.launches == pytest.approx(500, rel=2e-3)
        assert window.joules_per_launch == pytest.approx(WATTS * LAUNCH_S, rel=3e-3)
        assert window.instant_w == pytest.approx(WATTS * 1.002) and window.sampled_w == pytest.approx(WATTS * 0.998)
    assert windows[1].start_s == windows[0].end_s  # one after another, no gap


def test_no_window_starts_before_the_warm_up_ends_and_count_caps_them():
    windows = windows_of(synthetic(warm=0.5), 5)
    assert windows[0].start_s >= 0.5 and len(windows) == 2
    assert len(windows_of(synthetic(), 2, count=4)) == 4
    assert windows_of(synthetic(), 2, count=0) == []  # at most none: none, not every window


def test_a_window_the_replays_did_not_cover_is_left_out():
    trace = synthetic()
    trace.done = [d for d in trace.done if d[0] < 1.0]  # the GPU's work stopped at 1 s
    assert all(w.end_s <= 1.0 for w in windows_of(trace, 5)) and len(windows_of(trace, 5)) == 1
    trace = synthetic()
    trace.done = [d for d in trace.done if d[0] > 0.5]  # the GPU's work started at 0.5 s: the windows after it count
    assert [round(w.start_s, 2) for w in windows_of(trace, 5)] == [0.55, 1.05]


def test_an_idle_trace_has_windows_without_launches():
    (window,) = windows_of(synthetic(busy=False), 18)
    assert window.launches == 0 and window.power_w == pytest.approx(WATTS, rel=2e-3)


def test_a_window_needs_one_period_or_more():
    with pytest.raises(ValueError, match="one counter period or more"):
        windows_of(synthetic(), 0)


def test_a_window_is_a_value_that_cannot_be_changed_and_can_be_a_key():
    window = windows_of(synthetic(), 5)[0]
    with pytest.raises(AttributeError):
        window.joules = 0.0
    assert {window: "first"}[window] == "first"


def test_a_trace_survives_json():
    trace = synthetic(seconds=0.3)
    assert Trace.from_dict(trace.as_dict()) == trace


def test_a_stored_trace_of_polls_alone_reads_back_with_nothing_warm_and_nothing_starved():
    polls = [(0.0, 1e6), (0.15, 1.05e6), (0.25, 1.1e6)]
    trace = Trace.from_dict({"polls": [list(p) for p in polls]})
    assert trace == Trace(polls=polls)
    assert (trace.warm_until, trace.starved_s, trace.samples_clock) == (0.0, 0.0, "")


# ---- traces recorded on an H200 by maintainers/checks/energy_check.py measure (tests/data/energy/README.md) ----
DATA = Path(__file__).parents[1] / "data" / "energy"
RECORDED = json.loads((DATA / "recorded.json").read_text())
RECORDED_WINDOWS = (5, 6)  # the plan the traces were recorded with: 6 windows of 5 counter periods


def recorded(name: str) -> Trace:
    return Trace.from_dict(json.loads((DATA / f"{name}.json").read_text()))


@pytest.mark.parametrize("name", sorted(RECORDED["cases"]))
def test_a_recorded_trace_gives_again_the_windows_the_gpu_run_cut(name):
    # the kept trace is thinned to the polls around each counter change: the windows are the same
    expected = RECORDED["cases"][name]
    windows = windows_of(recorded(name), *RECORDED_WINDOWS)
    assert [w.joules_per_launch for w in windows] == pytest.approx(expected["window_joules_per_launch"], rel=1e-9)
    assert [w.seconds for w in windows] == pytest.approx(expected["window_seconds"], rel=1e-9)


@pytest.mark.parametrize("name", sorted(RECORDED["cases"]))
def test_the_h200_counter_changes_every_100_ms_and_its_readings_agree_within_1_percent(name):
    trace = recorded(name)
    times = [t for t, _ in counter_changes(trace.polls)]
    periods = np.diff(times)
    assert np.median(periods) == pytest.approx(COUNTER_PERIOD_S, abs=2e-3)
    windows = windows_of(trace, *RECORDED_WINDOWS)
    assert len(windows) == RECORDED_WINDOWS[1]
    for window in windows:  # the cross-check: counter, POWER_INSTANT and the 50 Hz samples
        assert window.instant_w / window.power_w == pytest.approx(1.0, abs=0.01)
        assert window.sampled_w / window.power_w == pytest.approx(1.0, abs=0.01)
    mean, low, high = mean_interval([w.joules_per_launch for w in windows])
    assert (high - low) / 2 / mean < 0.01  # every one of these cases runs 190 µs or more


def test_the_recorded_idle_trace_has_no_launches_and_gives_the_idle_power():
    trace = recorded("idle")
    assert trace.done == [] and all(w.launches == 0 for w in windows_of(trace, 1))
    assert idle_power(trace) == pytest.approx(RECORDED["idle_w"], rel=1e-9)
    assert 50 < idle_power(trace) < 200  # an idle H200 with its clocks up draws 120-130 W here


def test_an_idle_trace_without_a_whole_period_has_no_idle_power():
    assert idle_power(Trace(polls=[(0.0, 1.0), (0.05, 1.0)])) is None


def late(trace: Trace, change_at: float, by: float) -> Trace:
    """`trace` with the counter change near `change_at` seen `by` seconds late (the polls in between
    still read the old value), as a stalled poll loop or a late update shows it."""
    polls, old = [], None
    for t, e in trace.polls:
        if change_at - 0.05 < t < change_at + by and old is not None and e != old:
            polls.append((t, old))
            continue
        polls.append((t, e))
        old = e
    trace.polls = polls
    return trace


def test_a_change_seen_late_is_off_the_grid_and_bounds_no_window():
    # the change at 0.55 s seen 43 ms late: cut there, the windows before and after it would be
    # 8.6% long and short; the window runs on to the next change on the grid instead
    trace = late(synthetic(), 0.55, 0.043)
    changes = counter_changes(trace.polls)
    assert [round(t, 2) for t, fine in zip((t for t, _ in changes), on_grid(changes), strict=True)
            if not fine] == [0.59]
    windows = windows_of(trace, 5)
    assert [round(w.seconds, 3) for w in windows] == [0.6, 0.5, 0.5]
    for window in windows:
        assert window.joules_per_launch == pytest.approx(WATTS * LAUNCH_S, rel=3e-3)


def test_changes_on_the_grid_within_the_jitter_are_all_kept():
    changes = [(0.05 + 0.1 * i + 0.003 * (-1) ** i, i) for i in range(20)]
    assert on_grid(changes).all() and on_grid(changes[:2]).all()


def test_the_last_change_seen_late_is_judged_against_the_two_before_it():
    # at either end a change has one neighbour: 30 ms late there is past twice the limit, and off
    trace = late(synthetic(), 1.95, 0.03)
    good = on_grid(counter_changes(trace.polls))
    assert not good[-1] and good[:-1].all()
    assert on_grid(counter_changes(late(synthetic(), 1.95, 0.015).polls)).all()  # within twice the limit


def test_a_change_exactly_off_grid_s_from_its_neighbours_midpoint_is_kept_and_just_past_it_is_not():
    at = [(-0.2, 0), (-0.1, 1), (0.01, 2), (0.1, 3), (0.2, 4)]  # midpoint of its neighbours 0: 0.01 off
    assert on_grid(at).all()
    past = [(-0.2, 0), (-0.1, 1), (0.0101, 2), (0.1, 3), (0.2, 4)]
    assert list(on_grid(past)) == [True, True, False, True, True]


def test_the_first_change_is_off_past_twice_the_limit_and_only_where_it_is_the_furthest():
    kept = [(0.0, 0), (0.115, 1), (0.215, 2), (0.315, 3), (0.415, 4)]  # 15 ms off at the end: within 20
    assert on_grid(kept).all()
    dropped = [(0.0, 0), (0.125, 1), (0.225, 2), (0.325, 3), (0.425, 4)]  # 25 ms off, its neighbour 12.5
    assert list(on_grid(dropped)) == [False, True, True, True, True]
    assert list(on_grid([(0.0, 0), (0.5, 1)])) == [True, True]  # two changes cannot be judged
    # three can: periods of 100 and 150 ms put both ends 50 ms off (past twice the limit), and neither bounds a window
    assert list(on_grid([(0.0, 0), (0.1, 1), (0.25, 2)])) == [False, True, False]


def test_two_changes_seen_late_together_are_both_off_the_grid():
    # a poll loop that stalled over two updates in a row: each is as far off its neighbours' midpoint as
    # the other (and as they are), so a tie is off; periods of 1/8 s, late by 1/32 s: 1/64 s off, exactly
    changes = [(i / 8 + (1 / 32 if i in (3, 4) else 0.0), i) for i in range(9)]
    good = on_grid(changes)
    assert not good[3] and not good[4]
    assert good[[0, 1, 6, 7, 8]].all()


def test_a_window_takes_readings_after_its_start_up_to_its_end_and_a_change_at_warm_until_starts_one():
    polls = [(0.0, 0), (0.25, 0), (0.5, 100_000), (0.75, 100_000), (1.0, 200_000), (1.25, 200_000), (1.5, 350_000)]
    trace = Trace(polls=polls, instant=[(0.375, 10.0), (0.5, 20.0), (0.875, 30.0), (1.5, 40.0)],
                  samples=[(0.375, 1.0), (0.625, 2.0), (1.4, 3.0)], warm_until=0.375)
    # changes at 0.375 (100 J), 0.875 (200 J), 1.375 (350 J): two windows of one period
    first, second = windows_of(trace, 1)
    assert (first.start_s, first.end_s, first.joules, first.launches) == (0.375, 0.875, 100.0, 0.0)
    assert first.instant_w == 25.0 and first.sampled_w == 2.0  # readings at its start belong to none
    assert (second.start_s, second.end_s, second.joules) == (0.875, 1.375, 150.0)
    assert second.instant_w is None and second.sampled_w is None and second.power_w == 300.0  # none after its end
    assert idle_power(trace) == 250.0  # one window of both periods: 250 J in 1 s
    trace.warm_until = 0.376
    assert [w.start_s for w in windows_of(trace, 1)] == [0.875]


def test_a_window_the_events_span_exactly_counts_its_launches_by_interpolation():
    polls = [(0.0, 0), (0.25, 0), (0.5, 100_000), (0.75, 100_000), (1.0, 200_000)]
    # GPU clock 0.25 s behind: events at 0.25, 0.5 and 1.0 s with 10, 30, 50 launches done
    trace = Trace(polls=polls, done=[(0.25, 0.0, 10), (0.5, 0.25, 30), (1.0, 0.75, 50)])
    (window,) = windows_of(trace, 1)  # 0.375 to 0.875 s: 20 to 45 launches done
    assert window.launches == 25.0 and window.launch_s == 0.02 and window.joules_per_launch == 4.0
    trace.done = trace.done[:-1] + [(0.875, 0.625, 50)]  # the last event at the window's end: covered
    assert windows_of(trace, 1)[0].launches == 30.0
    trace.done = trace.done[:-1] + [(0.75, 0.5, 50)]  # before its end: not covered
    assert windows_of(trace, 1) == []
    trace.done = [(0.375, 0.125, 10), (0.5, 0.25, 30), (1.0, 0.75, 50)]  # the first event at the window's start
    assert windows_of(trace, 1)[0].launches == 35.0
    trace.done[0] = (0.4, 0.15, 10)  # after its start: not covered
    assert windows_of(trace, 1) == []


def test_the_idle_power_spans_every_whole_period_even_where_changes_were_seen_late():
    # a poll loop that stalls every third period: the changes at 0.33, 0.63 and 0.93 s are off the grid, the
    # whole periods run from 0.0 to 1.0 s (1.1 s is off too), and the last three of them drew 130 J, not 100
    times = [0.0, 0.1, 0.2, 0.33, 0.4, 0.5, 0.63, 0.7, 0.8, 0.93, 1.0, 1.1]
    polls, counter = [], 0.0
    for t in times:
        polls.append((t - 1e-4, counter))
        counter += (130_000 if 0.7 < t <= 1.0 else 100_000)
        polls.append((t + 1e-4, counter))
    assert idle_power(Trace(polls=polls)) == pytest.approx(1090.0)  # 700 J + 3 x 130 J in 1 s
