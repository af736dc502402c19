"""kernelwatch.history.accuracy: a check's steps found over its stored history, and how `changes` describes one."""

from __future__ import annotations

from kernelwatch.history.accuracy import AccuracyKey, accuracy_steps, describe_step
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
