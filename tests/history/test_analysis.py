"""kernelwatch.history.analysis: the detectable change of a series, from its floors and its own spread."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from kernelwatch.history.analysis import (
    GPU_FLOORS,
    MOST_DETECTABLE,
    Analysis,
    Failing,
    analyse,
    detectable,
    failing_stretch,
    no_change_at,
)
from kernelwatch.history.series import Series, SeriesKey
from kernelwatch.history.steps import CREEP, FASTER, detect_steps, noise_scale
from kernelwatch.storage.history import open_store
from kernelwatch.verdict.against_baseline import REFERENCE_RUNS, WALL_CLOCK_FLOORS
from kernelwatch.verdict.noise import MIN_VALUES_FOR_SPREAD
from kernelwatch.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL
from tests.history.made_series import CASE, KEY, QUIET, a_point, a_series, a_step, with_points
from tests.history.rich_history import rich_case, rich_store_url

# equal to the constants, not the same objects: as a Step made from JSON or a database's text would hold them
TEXT_STEP, TEXT_SLOWER = "".join(["st", "ep"]), "".join(["slow", "er"])


def test_a_wall_clock_series_read_from_the_store_takes_the_wall_clock_floor():
    """A host routine's series is judged at the wall clock's 30%, the timer's name compared by value."""
    timer = "".join(list(TIMER_WALL))  # as read back from the store: equal, not the same object
    assert timer == TIMER_WALL and timer is not TIMER_WALL
    assert detectable(a_series(*QUIET, timer=timer)).fraction == WALL_CLOCK_FLOORS.same_gpu


@pytest.mark.parametrize("timer", [TIMER_CUPTI, TIMER_EVENTS, "unknown", "xpu trace"],
                         ids=["cupti", "events", "none stored", "a name after the wall clock's"])
def test_a_series_of_any_timer_but_the_wall_clock_takes_the_gpu_floors(timer):
    """Only the wall clock's own name takes its 30%: the name is compared for equality, not order ("unknown" is
    series_from_rows's word for a run that stored none; "xpu trace" sorts after "wall clock")."""
    assert detectable(a_series(*QUIET, timer=timer)).fraction == GPU_FLOORS.same_gpu


@pytest.mark.parametrize(("uuids", "floor"), [(["GPU-a"] * 20, GPU_FLOORS.same_gpu),
                                              (["GPU-a", "GPU-b"] * 10, GPU_FLOORS.other_gpu),
                                              (["GPU-a"] * 19 + [None], GPU_FLOORS.other_gpu)],
                         ids=["one GPU", "two GPUs", "one unknown"])
def test_only_a_series_of_one_known_gpu_takes_the_same_gpu_floor(uuids, floor):
    """Two UUIDs, or a run without one, is a series of several or unknown GPUs: the 5% floor."""
    assert detectable(a_series(*QUIET, uuids=uuids)).fraction == floor


def test_a_series_without_runs_names_no_gpu():
    """No run, no GPU: the floor is that of several or unknown GPUs, not the one-GPU floor."""
    found = detectable(Series(SeriesKey("NVIDIA H200", CASE, TIMER_CUPTI, "quick"), ()))
    assert found.fraction == GPU_FLOORS.other_gpu and "unknown" in found.because


def test_a_microsecond_case_takes_the_absolute_floor_over_its_median_in_microseconds():
    """0.3 µs over a 1 µs median is 30%: the absolute floor sets the limit, and its words give it in µs."""
    found = detectable(a_series(*[1e-6] * 20))
    assert found.fraction == pytest.approx(GPU_FLOORS.absolute_s / 1e-6)
    assert "absolute floor" in found.because
    assert float(found.because.split()[0]) * 1e-6 == pytest.approx(GPU_FLOORS.absolute_s)


def test_a_noisy_series_takes_z_root_one_plus_one_over_k_times_its_own_spread():
    """The spread term: z x sqrt(1 + 1/k) x noise_scale of the log medians (k = REFERENCE_RUNS), in percent."""
    medians = list(1e-3 * np.exp(np.random.default_rng(5).normal(0, 0.03, 20)))
    spread = noise_scale(np.log(np.asarray(medians)))
    found = detectable(a_series(*medians))
    assert found.fraction == pytest.approx(GPU_FLOORS.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread)
    assert float(re.search(r"spread ([0-9.]+)%", found.because).group(1)) == pytest.approx(spread * 100, abs=0.005)


def test_the_detectable_change_of_any_series_is_a_fraction_detect_steps_takes():
    """However noisy a series is, its limit stays below 1, so that detect_steps judges it."""
    series = a_series(*list(1e-3 * np.exp(np.random.default_rng(6).normal(0, 1.0, 20))))  # a factor e run to run
    found = detectable(series)
    assert found.fraction == MOST_DETECTABLE and 0 < found.fraction < 1
    assert isinstance(detect_steps(series, found.fraction), list)


def test_the_spread_counts_from_the_fewest_medians_that_show_one():
    """With exactly MIN_VALUES_FOR_SPREAD medians the series' own spread already sets the limit."""
    medians = [1e-3 * (1.1 if i % 2 else 1.0) for i in range(MIN_VALUES_FOR_SPREAD)]
    spread = noise_scale(np.log(np.asarray(medians)))
    found = detectable(a_series(*medians))
    assert "spread" in found.because
    assert found.fraction == pytest.approx(GPU_FLOORS.z * math.sqrt(1 + 1 / REFERENCE_RUNS) * spread)


def test_an_analysis_is_frozen():
    """What `changes` and `site` read cannot be changed in place by one of them."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Analysis([], {}, {}, {}).series = []


def test_a_failing_stretch_is_frozen():
    """What `changes` and `site` read of a failing series cannot be changed in place by one of them."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Failing(KEY, a_point(0), None, a_point(0), 1).runs = 2


def test_the_split_of_the_series_and_the_gpu_must_be_named_when_analysing():
    """`by` and `gpu` are keyword-only: a positional "gpu_model" is refused, not taken for a GPU or a split."""
    with pytest.raises(TypeError):
        analyse(None, "gpu_model")


def test_a_failing_stretch_is_held_by_the_newest_slower_step_before_it():
    one = a_series(1e-3, 1e-3, 1.05e-3, 1.05e-3, 1.1e-3, 1.1e-3)
    one = dataclasses.replace(one, points=one.points[:-1] + (dataclasses.replace(one.points[-1], outcome="failed"),))
    older, newer = a_step(one, 1, 2), a_step(one, 3, 4)
    found = failing_stretch(one, [older, newer])
    assert found.runs == 1 and found.step is newer
    assert found.first is one.points[-1] and found.before is one.points[-2] and found.newest is one.points[-1]
    assert found.commit_range == f"{one.points[-2].commit}..{one.points[-1].commit}"


def test_a_slowdown_accepted_in_the_newest_level_is_the_reason_of_its_step_not_of_the_step_before():
    """Analysis.reason: a step's level runs from it to the next step; an acceptance in the newest level accepts
    the newest step, and the older step, whose level holds none, stays open."""
    one = with_points(a_series(*[1e-3] * 3, *[1.05e-3] * 4, *[1.1e-3] * 3), p8={"accepted_reason": "bounds checks"})
    older, newer = a_step(one, 2, 3), a_step(one, 6, 7)
    analysis = Analysis([one], {}, {one.key: [older, newer]}, {})
    assert analysis.reason(newer) == "bounds checks (at run r8)"
    assert analysis.reason(older) is None


def test_only_a_slower_step_at_or_before_the_first_failed_run_holds_a_failing_stretch():
    """Not a slower creep, nor a slower step after the stretch's first run (8), nor an older slower step across
    a faster one (the stretch starts in the faster step's level: tests/history/test_model.py's counterexample);
    and a step whose kind and direction were read back as text still holds it."""
    one = with_points(a_series(*[1e-3] * 4, *[1.05e-3] * 6), p8={"outcome": "failed"}, p9={"outcome": "failed"})
    holding = a_step(one, 3, 4)
    found = failing_stretch(one, [holding, a_step(one, 6, 7, kind=CREEP), a_step(one, 8, 9)])
    assert found.runs == 2 and found.step is holding
    assert failing_stretch(one, [holding, a_step(one, 5, 6, direction=FASTER)]).step is None
    read_back = dataclasses.replace(holding, kind=TEXT_STEP, direction=TEXT_SLOWER)
    assert failing_stretch(one, [read_back]).step is read_back


def test_an_acknowledgement_at_a_steps_first_run_is_its_reason_before_any_acceptance_at_its_level():
    one = with_points(a_series(*[1e-3] * 3, *[1.05e-3] * 4), p5={"accepted_reason": "bounds checks"})
    step = a_step(one, 2, 3)
    assert Analysis([one], {}, {one.key: [step]}, {(CASE, "r3"): "larger tiles"}).reason(step) == "larger tiles"


def test_a_creep_neither_ends_the_level_of_the_step_before_it_nor_is_accepted_by_that_level():
    """A creep is accepted by an acknowledgement at its own last run only; the step's level runs past it."""
    one = with_points(a_series(*[1e-3] * 3, *[1.05e-3] * 5), p6={"accepted_reason": "bounds checks"})
    step, creep = a_step(one, 2, 3), a_step(one, 4, 5, kind=CREEP)
    analysis = Analysis([one], {}, {one.key: [step, creep]}, {})
    assert analysis.reason(step) == "bounds checks (at run r6)"
    assert analysis.reason(creep) is None


def test_a_step_whose_kind_was_read_back_as_text_has_a_level_and_ends_the_one_before_it():
    one = with_points(a_series(*[1e-3] * 3, *[1.05e-3] * 4, *[1.1e-3] * 3), p8={"accepted_reason": "bounds checks"})
    older, newer = a_step(one, 2, 3), a_step(one, 6, 7, kind=TEXT_STEP)
    analysis = Analysis([one], {}, {one.key: [older, newer]}, {})
    assert analysis.reason(newer) == "bounds checks (at run r8)"
    assert analysis.reason(older) is None


# -- a rich store's analysis, whole, against reviewed snapshots (tests/history/__snapshots__/test_analysis.ambr) ----

@pytest.fixture(scope="module")
def rich_url(tmp_path_factory):
    return rich_store_url(tmp_path_factory)  # tests/history/rich_history.py, recorded once: the tests only read it


def _runs(points) -> str:
    return " ".join(f"{p.run_id}{'' if p.state == 'passed' else f'({p.state})'}" for p in points)


def described(analysis: Analysis) -> str:
    """Everything `changes` and `site` read of an analysis, in words: each series with its runs and their states,
    its detectable change, its steps (with why each was accepted) and its failing stretch; then the
    acknowledgements and the series too short for a step."""
    lines = []
    for one in analysis.series:
        key = one.key
        limit = analysis.detectable[key]
        lines += [f"{key.case} on {key.gpu} ({key.timer}, {key.profile}): {_runs(one.points)}",
                  f"  detectable {limit.fraction:.4f} ({limit.because})"]
        for s in analysis.steps[key]:
            lines.append(f"  {s.kind} {s.direction} at {s.index}: {s.before.run_id} -> {s.after.run_id}, x{s.ratio:.4f} "
                         f"({s.ratio_low:.4f}-{s.ratio_high:.4f}), p {s.p_value:.3g}, {s.runs_before} before, "
                         f"{s.runs_after} after; reason {analysis.reason(s)!r}")
        failing = analysis.failing.get(key)
        if failing is not None:
            held = failing.step and f"the step at {failing.step.after.run_id}"
            lines.append(f"  failing since {failing.first.run_id} (before: {failing.before and failing.before.run_id}, "
                         f"newest {failing.newest.run_id}), {failing.runs} runs, commits {failing.commit_range}, "
                         f"window {failing.window and sorted(failing.window)}, held by {held}")
    lines += [f"acknowledged {case} at {run}: {reason}" for (case, run), reason in sorted(analysis.acknowledged.items())]
    lines.append(f"too short: {[(one.key.case, one.key.gpu, len(one)) for one in analysis.too_short()]}")
    return "\n".join(lines)


@pytest.mark.parametrize("how", [{}, {"by": "gpu_model"}, {"gpu": "GPU-bbbbbbbb-0000-0000-0000-000000000002"},
                                 {"floors": dataclasses.replace(GPU_FLOORS, same_gpu=0.05)}],
                         ids=["per-gpu", "per-model", "one-gpu", "five-percent"])
def test_the_analysis_of_a_rich_store_is_the_reviewed_snapshot(rich_url, snapshot, how):
    with open_store(rich_url) as store:
        assert described(analyse(store, **how)) == snapshot


def test_why_there_is_nothing_to_acknowledge_is_the_reviewed_snapshot(rich_url, snapshot):
    """`acknowledge`'s refusal, for runs of the rich store: None where the case failed there, a step of it starts
    there, or the run holds no such case; else its steps and failed runs, six at most by number."""
    asked = [("trailer", 17),  # failed in exactly six runs (9-14), accepted at 15: all six listed
             ("still-failing", 5),  # failed in seven (12-18): six listed, "and 1 more"
             ("quietly-slower", 17), ("creep", 10), ("throttled", 17),  # a step, a creep (no step), nothing
             ("open", 2),  # a run of the other GPU: its model's series holds the step
             ("open", 16), ("open", 17), ("acknowledged", 12), ("trailer", 15),  # a step's first run, failed runs
             ("failing", 2), ("failing", 99)]  # runs that do not hold the case: the store's own refusal says so
    with open_store(rich_url) as store:
        answers = [f"{name} at {run}: {no_change_at(store, rich_case(name), run)}" for name, run in asked]
    assert "\n".join(answers) == snapshot
