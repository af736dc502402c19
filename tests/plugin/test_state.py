"""kernelwatch.plugin.state: the session's state as five typed parts, each defined in the room that owns it, and the
parts' own behaviour (the findings' failure counts, the code's worktrees closed)."""

from __future__ import annotations

import dataclasses
import types
import typing

import pytest

from kernelwatch.plugin.state import SuiteState
from kernelwatch.report.findings import Findings
from kernelwatch.verdict.accuracy import LESS_ACCURATE, AccuracyRecord
from kernelwatch.verdict.labels import SAME, SLOWER, Verdict
from kernelwatch.verdict.record import CaseRecord
from tests.support.suite_states import state_with

# each part and the room whose module defines it
OWNERS = {"measuring": "kernelwatch.timing.", "judging": "kernelwatch.verdict.", "stored": "kernelwatch.storage.",
          "code": "kernelwatch.cause.", "findings": "kernelwatch.report."}


def annotations_of(cls) -> dict[str, str]:
    return {f.name: str(f.type) for f in dataclasses.fields(cls)}


def test_the_state_is_its_device_its_options_and_five_parts_each_defined_in_its_room():
    fields = {f.name: f for f in dataclasses.fields(SuiteState)}
    assert set(fields) == {"device", "report_path", "compare_spec", *OWNERS}
    hints = typing.get_type_hints(SuiteState, localns={"CudaDevice": object})
    for part, room in OWNERS.items():
        assert hints[part].__module__.startswith(room), f"{part} is defined in {hints[part].__module__}, not {room}"


@pytest.mark.parametrize("part", sorted(OWNERS))
def test_no_field_of_a_part_is_typed_object_or_an_unparameterized_container(part):
    cls = typing.get_type_hints(SuiteState, localns={"CudaDevice": object})[part]
    loose = {name: hint for name, hint in annotations_of(cls).items()
             if "object" in hint or hint in ("dict", "list", "tuple") or hint.startswith(("dict |", "list |"))}
    assert not loose, f"{cls.__name__}: fields typed loosely: {loose}"


def test_the_field_rule_finds_a_field_typed_object():
    @dataclasses.dataclass
    class Loose:
        meter: object = None
        runs: dict = dataclasses.field(default_factory=dict)

    assert set(annotations_of(Loose)) == {"meter", "runs"}
    assert "object" in annotations_of(Loose)["meter"] and annotations_of(Loose)["runs"] == "dict"


def test_a_failed_test_is_counted_and_named_and_a_passing_one_is_not():
    state = state_with()
    for nodeid, failed in (("s.py::a", False), ("s.py::b", True), ("s.py::c", True)):
        state.pytest_runtest_logreport(types.SimpleNamespace(nodeid=nodeid, failed=failed))
    assert state.findings.failures == 2 and state.findings.failed_tests == ["s.py::b", "s.py::c"]


def _verdict(case: str, label: str) -> Verdict:
    return Verdict(case, label, 1e-3, 1.1e-3, 1.1, 0.02, "judged")


def test_other_failures_leave_out_the_cases_that_failed_on_a_verdict_and_count_the_rest():
    findings = Findings(failed_tests=["s.py::slower", "s.py::energy", "s.py::accuracy", "s.py::wrong", "s.py::error"])
    findings.add(CaseRecord("s.py::slower", 1e-3), _verdict("s.py::slower", SLOWER))
    findings.add(CaseRecord("s.py::energy", 1e-3, energy_verdict={"label": "more energy", "fails": True}),
                 _verdict("s.py::energy", SAME))
    findings.add_accuracy(AccuracyRecord("s.py::accuracy", 2e-6, 1e-6, verdict=LESS_ACCURATE))
    # a check that failed its tolerance is wrong, whatever its history says: it counts
    findings.add_accuracy(AccuracyRecord("s.py::wrong", 1.0, 1.0, passed=False, verdict=LESS_ACCURATE))
    assert findings.other_failures() == 2  # s.py::wrong and s.py::error
    assert [v.case for v in findings.verdicts] == ["s.py::slower", "s.py::energy"]
    assert len(findings.records) == 2 and findings.failures == 5


def test_a_record_without_a_verdict_is_kept_and_adds_no_verdict():
    findings = Findings()
    findings.add(CaseRecord("s.py::new", 1e-3), None)
    assert [r.case for r in findings.records] == ["s.py::new"] and findings.verdicts == []


def test_the_code_under_test_removes_the_worktrees_of_the_ref_and_the_cards_and_closes_without_either():
    closed = []
    state = state_with(ref=types.SimpleNamespace(close=lambda: closed.append("ref")),
                       reference_packages=types.SimpleNamespace(close=lambda: closed.append("cards")))
    state.code.close()
    assert closed == ["ref", "cards"]
    state_with().code.close()  # nothing checked out: nothing to remove, no error
