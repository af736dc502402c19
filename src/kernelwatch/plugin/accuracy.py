"""The `kernelwatch_accuracy` fixture: a correctness check's errors recorded with the run (one path for all).

    def test_matmul_matches_float64(..., kernelwatch_accuracy):
        errors = relative_error(c, ref)
        kernelwatch_accuracy.record(errors, tolerance=(tol.max_error, tol.avg_error), shape="1000x1000x1000",
                                    kind="uniform", seed=seed, measure="relative", kernel=name)

`record` makes the check's AccuracyRecord (src/kernelwatch/verdict/accuracy.py), judges it against this GPU's
history in the store (`--kernelwatch-history`; `less accurate` / `more accurate` / `same` / `new`), follows a
less accurate case to its window of commits and an `Accept-Slowdown` trailer that names it (as `slower` is
followed: src/kernelwatch/plugin/regression.py), keeps it in the session's state (the run's JSON document,
the store, the report and the xdist merge read it there) and in the JUnit properties. A less accurate case
fails its test. The `kernelwatch` fixture's reference check records through this same object.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest

from kernelwatch.plugin.xdist import worker_id
from kernelwatch.verdict.accuracy import (
    LESS_ACCURATE,
    AccuracyRecord,
    finite_or_none,
    judge_accuracy,
    judge_pair,
    judged,
    row_words,
)
from kernelwatch.verdict.labels import ACCEPTED

if TYPE_CHECKING:
    from kernelwatch.plugin.state import SuiteState


class AccuracyChecks:
    """What the `kernelwatch_accuracy` fixture gives a test: `record(errors, ...)`, once per test."""

    def __init__(self, state: SuiteState, node):
        self.state, self.node = state, node
        self.recorded: AccuracyRecord | None = None

    def record(self, errors, *, tolerance=None, shape=None, kind=None, seed=None, measure=None,
               kernel=None, base=None, base_ref: str | None = None, fail: bool = True) -> AccuracyRecord:
        """Record one check: `errors` has max_error and avg_error (kernelwatch.metrics.ErrorStats) or is a
        (max, avg) pair; `tolerance` a number or a (max, avg) pair. Judged against this GPU's history where the
        run has one, or, with `base` (the base side's (max, avg) errors on the same inputs in this run, under
        --kernelwatch-compare-ref, named `base_ref`), against the base; a less accurate case fails the test
        (unless fail=False: the caller fails it)."""
        if self.recorded is not None:
            pytest.fail("kernelwatch_accuracy: one check recorded per test; parametrize the test for more",
                        pytrace=False)
        max_error, avg_error = (errors if isinstance(errors, (tuple, list))
                                else (errors.max_error, errors.avg_error))
        tol_max, tol_avg = ((tolerance, tolerance) if not isinstance(tolerance, (tuple, list))
                            else tuple(tolerance))
        passed = (tolerance is None or (max_error <= tol_max and avg_error <= tol_avg))
        state = self.state
        gpu = state.measuring.gpu
        record = AccuracyRecord(
            case=self.node.nodeid, max_error=finite_or_none(max_error), avg_error=finite_or_none(avg_error),
            tolerance_max=None if tol_max is None else float(tol_max),
            tolerance_avg=None if tol_avg is None else float(tol_avg), shape=shape, input_kind=kind,
            seed=None if seed is None else int(seed), measure=measure, kernel=kernel, passed=bool(passed),
            gpu_uuid=getattr(gpu, "uuid", None), worker=worker_id() or "main")
        if base is not None:
            base_record = dataclasses.replace(record, max_error=finite_or_none(base[0]),
                                              avg_error=finite_or_none(base[1]))
            record = judge_pair(record, base_record, base_ref or "the base")
            if record.fails and state.code.ref is not None and state.code.ref.accepted is not None:
                reason = state.code.ref.accepted
                record = dataclasses.replace(record, verdict=ACCEPTED, accepted_reason=reason,
                                             verdict_reason=f"{record.verdict_reason}; accepted: {reason}")
        elif state.code.ref is None and state.stored.store is not None and getattr(gpu, "uuid", None):
            record = judged(record, judge_accuracy(record, state.stored.accuracy_history.get(record.case, [])))
            record = follow_less_accurate(state, record)
        self.recorded = record
        state.findings.add_accuracy(record)
        self.node.user_properties += [("max_error", max_error), ("avg_error", avg_error)]
        if fail and record.fails:
            pytest.fail(failure_message(record), pytrace=False)
        return record


def follow_less_accurate(state: SuiteState, record: AccuracyRecord) -> AccuracyRecord:
    """A less accurate record with its window since the newest reference, accepted where an Accept-Slowdown
    trailer there names the case (cases=PATTERN): it then passes as `accepted`, and starts the new level."""
    if record.verdict != LESS_ACCURATE or not record.reference_commit:
        return record
    from kernelwatch.plugin.regression import acceptances_of, window_of
    from kernelwatch.verdict.acceptance import first_accepting

    found = window_of(state, record.reference_commit)
    acceptance = first_accepting(acceptances_of(state, found), record.case, code_changed=False)
    record = dataclasses.replace(record, window=found.as_dict())
    if acceptance is not None:
        record = dataclasses.replace(record, verdict=ACCEPTED, accepted_reason=acceptance.words(),
                                     verdict_reason=f"{record.verdict_reason}; accepted: {acceptance.words()}")
    return record


def failure_message(record: AccuracyRecord) -> str:
    from kernelwatch.ab.commits import CommitWindow

    window = ""
    if record.window is not None:
        found = CommitWindow.from_dict(record.window)
        window = (f"; window {found.range_text}: if meant, land a commit with the trailer "
                  f"'Accept-Slowdown: cases=PATTERN REASON' naming this case, or `kernelwatch acknowledge` it")
    return (f"less accurate than {record.reference or 'its reference'}: {record.verdict_reason} "
            f"({row_words(record)}){window}")
