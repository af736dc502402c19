"""kernelwatch.plugin.accuracy: the `kernelwatch_accuracy` fixture's record of one check, called directly: within
its tolerance only where both errors are, and a less accurate check followed to its window of commits."""

from __future__ import annotations

import types

import pytest

from kernelwatch.ab.commits import Commit, CommitWindow
from kernelwatch.plugin.accuracy import AccuracyChecks, follow_less_accurate
from kernelwatch.verdict.accuracy import LESS_ACCURATE, AccuracyRecord
from kernelwatch.verdict.labels import ACCEPTED, SAME
from tests.plugins.fake_gpu import fake_info
from tests.support.suite_states import state_with

BASE, HEAD = "a" * 40, "b" * 40


def checks() -> AccuracyChecks:
    node = types.SimpleNamespace(nodeid="s.py::test_k[a]", user_properties=[])
    return AccuracyChecks(state_with(gpu=fake_info("GPU-test")), node)


@pytest.mark.parametrize("errors, tolerance, passed", [
    ((1e-6, 1e-6), 1e-5, True),
    ((2e-5, 1e-6), 1e-5, False),  # the maximum over its tolerance, the average well within: still a miss
    ((1e-6, 2e-5), 1e-5, False),
    ((1e-5, 1e-5), 1e-5, True),  # at the tolerance is within it
    ((2e-5, 1e-6), (3e-5, 1e-6), True),  # (max, avg) tolerances
    ((2e-5, 2e-6), (3e-5, 1e-6), False),
    ((2e-5, 2e-6), None, True),  # no tolerance: recorded, never a miss
])
def test_a_check_is_within_its_tolerance_only_where_both_errors_are(errors, tolerance, passed):
    record = checks().record(errors, tolerance=tolerance)
    assert record.passed is passed and (record.max_error, record.avg_error) == errors


def test_only_a_less_accurate_check_is_followed_to_its_window_and_a_trailer_naming_it_accepts_it():
    found = CommitWindow(BASE, HEAD, (Commit("c" * 40, "looser sum"),),
                         (("c" * 40, "cases=*test_k* the sum drops its compensation"),))
    state = state_with(head=(HEAD, False), windows={BASE: found})
    same = AccuracyRecord("s.py::test_k[a]", 1e-6, 1e-7, verdict=SAME, reference_commit=BASE)
    assert follow_less_accurate(state, same) is same
    less = AccuracyRecord("s.py::test_k[a]", 1e-5, 1e-6, verdict=LESS_ACCURATE, reference_commit=BASE)
    followed = follow_less_accurate(state, less)
    assert followed.window == found.as_dict()
    assert followed.verdict == ACCEPTED and followed.accepted_reason.startswith("the sum drops its compensation")
    other = AccuracyRecord("s.py::test_other", 1e-5, 1e-6, verdict=LESS_ACCURATE, reference_commit=BASE)
    assert follow_less_accurate(state, other).verdict == LESS_ACCURATE  # the trailer names another case
