"""kernelwatch.history.accuracy: a check's steps found over its stored history, and how `changes` describes one."""

from __future__ import annotations

import dataclasses

import pytest

from kernelwatch.history.accuracy import AccuracyKey, accuracy_series, accuracy_steps, describe_step, is_open
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, AccuracyRecord, StoredAccuracy

KEY = AccuracyKey("GPU-a", "s.py::test_k[a]", "nightly")


def stored(run_id: int, max_error: float, *, failed: bool = False, tolerance: float | None = 1e-4) -> StoredAccuracy:
    record = AccuracyRecord(KEY.case, max_error, max_error / 4, tolerance_max=tolerance, tolerance_avg=tolerance,
                            shape="64x64", input_kind="normal", seed=1, measure="relative", passed=True)
    return StoredAccuracy(run_id, f"{run_id:040x}", f"2026-12-0{1 + run_id // 10} 0{run_id % 10}:00:00", record,
                          "failed" if failed else "passed")


def test_a_second_failing_check_of_a_step_is_that_step_after_an_earlier_step_of_the_other_way():
    # better (a step down), then worse and failing twice: the second failure is judged against the same newest
    # passed check as the first, so it belongs to the second step, not a third
    errors = [4e-6, 4e-6, 4e-6, 2e-6, 2e-6, 2e-6, 8e-6, 8e-6]
    points = [stored(i + 1, e, failed=i >= 6) for i, e in enumerate(errors)]
    steps = accuracy_steps(points, KEY)
    assert [(s.direction, s.before.run_id, s.after.run_id) for s in steps] == [(MORE_ACCURATE, 3, 4),
                                                                              (LESS_ACCURATE, 6, 7)]
    assert [p.run_id for p in steps[1].level] == [7, 8]


def test_a_step_says_the_margin_left_to_the_tolerance_where_the_check_has_one():
    for tolerance, said in ((1e-4, "margin left 92.0%"), (None, None)):
        points = [stored(i + 1, e, tolerance=tolerance) for i, e in enumerate([2e-6, 2e-6, 2e-6, 8e-6])]
        (step,) = accuracy_steps(points, KEY)
        errors_line = describe_step(step, points, newest=1)[2]
        assert errors_line.startswith("  errors before: max 2e-06")
        assert (said in errors_line) if said else ("margin" not in errors_line and "tolerance" not in errors_line)


# -- whole descriptions against reviewed snapshots (tests/history/__snapshots__/test_accuracy.ambr) -------------

def check(run_id: int, max_error: float, *, state: str = "passed", reason: str | None = None,
          commit: str | None = "hex", tolerance: float | None = 1e-4, input_kind: str | None = "normal",
          avg_error: float | None = None) -> StoredAccuracy:
    """A stored check of KEY's case: `state` passed, failed or accepted (an accepted one by `reason`)."""
    record = AccuracyRecord(KEY.case, max_error, max_error / 4 if avg_error is None else avg_error,
                            tolerance_max=tolerance, tolerance_avg=tolerance, shape="64x64", input_kind=input_kind,
                            seed=1, measure="relative", passed=True)
    return StoredAccuracy(run_id, f"{run_id:040x}" if commit == "hex" else commit,
                          f"2026-12-0{1 + run_id // 10} 0{run_id % 10}:00:00", record,
                          "failed" if state == "failed" else "passed", reason if state == "accepted" else None)


def eventful() -> list[StoredAccuracy]:
    """Twelve checks: better but failing (out of tolerance, say), then worse from the same reference and
    accepted by a trailer two runs later, a new level, and worse again, failing to the newest run."""
    return [check(1, 4e-6), check(2, 4e-6), check(3, 4e-6),
            check(4, 2e-6, state="failed"),  # more accurate than 1-3, yet failed: no reference for run 5
            check(5, 8e-6, state="failed"),  # less accurate than 1-3: a step of its own, from run 3 again
            check(6, 8e-6, state="failed"),
            check(7, 8e-6, state="accepted", reason="Accept-Slowdown: cases=test_k* 'wider <tile>'"),
            check(8, 8e-6), check(9, 8e-6),
            check(10, 3.2e-5, state="failed"),
            check(11, 3.2e-5, state="failed"), check(12, 3.2e-5, state="failed")]


def described(points: list[StoredAccuracy], newest: int) -> str:
    return "\n\n".join("\n".join(describe_step(step, points, newest)) for step in accuracy_steps(points, KEY))


def test_the_steps_of_an_eventful_history_and_their_descriptions_are_the_reviewed_snapshot(snapshot):
    points = eventful()
    steps = accuracy_steps(points, KEY)
    assert [(s.direction, s.before.run_id, s.after.run_id, [p.run_id for p in s.level], s.acknowledged)
            for s in steps] == [
        (MORE_ACCURATE, 3, 4, [4], None),
        (LESS_ACCURATE, 3, 5, [5, 6, 7, 8, 9], "Accept-Slowdown: cases=test_k* 'wider <tile>'"),
        (LESS_ACCURATE, 9, 10, [10, 11, 12], None)]
    assert [s.ratio for s in steps] == [0.5, 2.0, 4.0]
    assert [is_open(s, points, newest=1) for s in steps] == [False, False, True]  # the newest still fails
    assert described(points, newest=1) == snapshot


def test_a_step_from_an_exact_history_and_a_step_more_accurate_are_described_so(snapshot):
    # errors of 0 up to run 3: a growth from 0 has no ratio (accepted by its own run); then a more accurate step
    # from that new level (never open); inputs without a kind, and no tolerance from run 5 on
    points = [check(1, 0.0, input_kind=None), check(2, 0.0, input_kind=None),
              check(3, 0.0, input_kind=None), check(4, 1e-7, input_kind=None, state="accepted", reason="exact no more"),
              check(5, 1e-7, tolerance=None, input_kind=None),
              check(6, 5e-8, avg_error=1e-8, tolerance=None, input_kind=None)]
    steps = accuracy_steps(points, KEY)
    assert [(s.direction, s.after.run_id, s.ratio) for s in steps] == [(LESS_ACCURATE, 4, None),
                                                                        (MORE_ACCURATE, 6, 0.5)]
    assert described(points, newest=3) == snapshot


@pytest.mark.parametrize(("runs", "newest", "is_open_then"), [
    (5, 1, False), (5, 2, True), (5, 3, True), (10, 2, False), (10, 5, False), (10, 6, False), (10, 7, True)])
def test_a_less_accurate_step_is_open_while_it_lies_in_the_newest_runs(runs, newest, is_open_then):
    # a step at run 4 of `runs`, passing afterwards: open only while run 4 is among the newest `newest`
    points = [check(i, 1e-6 if i < 4 else 9e-6) for i in range(1, runs + 1)]
    (step,) = accuracy_steps(points, KEY)
    assert is_open(step, points, newest) is is_open_then
    last = describe_step(step, points, newest)[-1]
    assert last.startswith("  OPEN: ") if is_open_then else last.startswith("  commits: ")


def test_a_step_is_open_while_its_case_fails_in_the_newest_check_however_old_it_is():
    points = [check(1, 1e-6), check(2, 1e-6), check(3, 9e-6, state="failed"), check(4, 9e-6, state="failed"),
              check(5, 9e-6, state="failed"), check(6, 9e-6, state="failed")]
    (step,) = accuracy_steps(points, KEY)
    assert is_open(step, points, newest=1)
    assert not is_open(step, points[:4] + [check(5, 9e-6, state="accepted", reason="meant")], newest=1)


def test_the_series_are_per_gpu_case_and_profile_oldest_first():
    def on(run_id: int, gpu: str, profile: str | None) -> StoredAccuracy:
        point = check(run_id, 1e-6)
        return dataclasses.replace(point, record=dataclasses.replace(point.record, gpu_uuid=gpu), profile=profile)

    history = {"s.py::a": [on(5, "GPU-b", "nightly"), on(4, "GPU-a", "nightly"), on(3, "GPU-a", None),
                           on(2, "GPU-a", "nightly"), on(1, "GPU-b", "nightly")],
               "s.py::b": [on(6, "GPU-a", "nightly")]}
    series = accuracy_series(history)
    assert {key: [p.run_id for p in points] for key, points in series.items()} == {
        AccuracyKey("GPU-b", "s.py::a", "nightly"): [1, 5], AccuracyKey("GPU-a", "s.py::a", "nightly"): [2, 4],
        AccuracyKey("GPU-a", "s.py::a", None): [3], AccuracyKey("GPU-a", "s.py::b", "nightly"): [6]}
    assert list(series) == [AccuracyKey("GPU-b", "s.py::a", "nightly"), AccuracyKey("GPU-a", "s.py::a", "nightly"),
                            AccuracyKey("GPU-a", "s.py::a", None), AccuracyKey("GPU-a", "s.py::b", "nightly")]


def test_a_step_without_a_commit_on_either_side_says_so_in_its_range():
    points = [check(1, 1e-6), check(2, 1e-6, commit=None), check(3, 9e-6, state="failed", commit=None)]
    (step,) = accuracy_steps(points, KEY)
    assert step.commit_range == "?..?"
    assert dataclasses.replace(step, before=points[0]).commit_range == f"{1:040x}..?"
    assert dataclasses.replace(step, after=points[0]).commit_range == f"?..{1:040x}"


def test_a_more_accurate_check_after_a_failing_less_accurate_one_is_a_step_of_its_own():
    # run 4 fails, so run 5 is judged against runs 1-3 too: the same check before, the other way
    points = [check(1, 4e-6), check(2, 4e-6), check(3, 4e-6), check(4, 8e-6, state="failed"), check(5, 2e-6)]
    steps = accuracy_steps(points, KEY)
    assert [(s.direction, s.before.run_id, s.after.run_id, [p.run_id for p in s.level]) for s in steps] == [
        (LESS_ACCURATE, 3, 4, [4]), (MORE_ACCURATE, 3, 5, [5])]
