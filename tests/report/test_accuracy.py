"""kernelwatch.report.accuracy: the report's accuracy section, its rows' order and the margin left to the tolerance."""

from __future__ import annotations

import dataclasses
import json
import re
from types import SimpleNamespace

from kernelwatch.report.accuracy import accuracy_counts, accuracy_section, failing, near_tolerance
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MARGIN_FLAG, MORE_ACCURATE, AccuracyRecord
from kernelwatch.verdict.labels import ACCEPTED, NEW, SAME


def check(case: str, max_error: float, verdict: str | None, passed: bool = True) -> AccuracyRecord:
    return AccuracyRecord(f"s.py::{case}", max_error, max_error / 4, tolerance_max=1e-5, tolerance_avg=1e-5,
                          passed=passed, verdict=verdict)


def rows(section: str) -> list[list[str]]:
    """The table's rows below its header, as cells (split at the separators a cell does not escape)."""
    table = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))] for line in table]


def test_less_accurate_checks_come_first_then_the_unjudged_among_the_same_by_name():
    records = [check("b_same_near", 9.5e-6, SAME), check("a_unjudged_out", 2e-5, None, passed=False),
               check("c_less", 3e-6, LESS_ACCURATE), check("d_same_far", 1e-7, SAME)]
    shown = rows(accuracy_section(records))
    # d is `same` with most of its tolerance left: counted, not shown; an unjudged check ranks as `same` does
    assert [row[0] for row in shown] == ["`s.py::c_less`", "`s.py::a_unjudged_out`", "`s.py::b_same_near`"]
    assert accuracy_counts(records) == "accuracy: 1 less accurate, 2 same"


def test_the_margin_left_is_a_percentage_of_the_tolerance_flagged_under_a_tenth():
    near, far = check("near", 9.5e-6, LESS_ACCURATE), check("far", 2.5e-6, LESS_ACCURATE)
    margins = {row[0]: row[-1] for row in rows(accuracy_section([near, far]))}
    assert margins == {"`s.py::near`": "5.0% (under a tenth left)", "`s.py::far`": "75.0%"}


# -- the whole section against reviewed snapshots (tests/report/__snapshots__/test_accuracy.ambr) ---------------

def judged_check(case: str, max_error: float | None, verdict: str | None, *, reference_max: float | None = None,
                 reason: str | None = None, reference: str | None = None, passed: bool = True,
                 tolerance: float | None = 1e-5) -> AccuracyRecord:
    """A check judged against a reference of `reference_max` (its average a quarter of it, as the check's)."""
    return AccuracyRecord(f"s.py::{case}", max_error, None if max_error is None else max_error / 4,
                          tolerance_max=tolerance, tolerance_avg=tolerance, passed=passed, verdict=verdict,
                          verdict_reason=reason, reference_max=reference_max,
                          reference_avg=None if reference_max is None else reference_max / 4, reference=reference)


def every_kind_of_check() -> list[AccuracyRecord]:
    """One check of each verdict, shown or not: near the tolerance or far from it, out of it, not finite,
    without a tolerance or a reference, a case id with a table's separator in it."""
    return [
        judged_check("test_same_far", 1e-7, SAME, reference_max=1e-7, reason="within the history of 3 run(s)",
                     reference="history run 11"),  # counted, not shown
        judged_check("test_same_near", 9.5e-6, SAME, reference_max=9.5e-6, reason="within the history of 3 run(s)",
                     reference="history run 11"),  # shown (5% left), its reason not
        judged_check("test_new", 2e-6, NEW, reason="no stored check of this case on these inputs on this GPU"),
        judged_check("test_accepted", 4e-6, ACCEPTED, reference_max=1e-6, reason="max error 4e-06 above 3 run(s) "
                     "bit for bit 1e-06", reference="history run 11"),
        judged_check("test_b_less", 6e-6, LESS_ACCURATE, reference_max=2e-6, reference="history run 11",
                     reason="max error 6e-06 above 3 run(s) bit for bit 2e-06"),
        judged_check("test_a_less[x|y]", 2e-5, LESS_ACCURATE, reference_max=1e-6, passed=False,
                     reason="max error 2e-05 above 3 run(s) from 8e-07 to 1e-06, band 6e-07..1.2e-06",
                     reference="main"),  # out of its tolerance too: a margin below zero
        judged_check("test_more", 1e-6, MORE_ACCURATE, reference_max=4e-6, tolerance=None,
                     reason="max error 1e-06 below 3 run(s) bit for bit 4e-06"),  # no reference named
        judged_check("test_unjudged_out", None, None, passed=False),  # not finite: not judged, failed
        judged_check("test_unjudged_in", 1e-7, None),  # not judged, well within: counted nowhere, not shown
        judged_check("test_strange", 1e-7, "unheard of", reason="a label of no known kind"),  # ranks last
    ]


def test_the_section_of_every_kind_of_check_is_its_reviewed_snapshot(snapshot):
    records = every_kind_of_check()
    section = accuracy_section(records, against="main (same run)")
    assert [row[:2] for row in rows(section)] == [
        ["`s.py::test_a_less[x\\|y]`", LESS_ACCURATE], ["`s.py::test_b_less`", LESS_ACCURATE],
        ["`s.py::test_more`", MORE_ACCURATE], ["`s.py::test_accepted`", ACCEPTED], ["`s.py::test_new`", NEW],
        ["`s.py::test_same_near`", SAME], ["`s.py::test_unjudged_out`", "not judged"],
        ["`s.py::test_strange`", "unheard of"]]
    assert accuracy_counts(records) == "accuracy: 2 less accurate, 1 more accurate, 1 accepted, 1 new, 2 same"
    assert [r.case for r in failing(records)] == ["s.py::test_b_less", "s.py::test_a_less[x|y]"]
    assert section == snapshot


def test_a_section_with_nothing_to_show_counts_its_checks(snapshot):
    far = [check("test_far", 1e-7, SAME), check("test_far_too", 2e-7, SAME)]
    unjudged = [check("test_unjudged", 1e-7, None)]
    assert accuracy_section([]) == "" and accuracy_counts([]) == "" and accuracy_counts(unjudged) == ""
    assert failing(far + unjudged) == []
    assert (accuracy_section(far), accuracy_section(unjudged)) == snapshot


def with_margin(record: AccuracyRecord, margin: float) -> SimpleNamespace:
    """The record with its margin set outright (no error and tolerance give 1 - max / tolerance a tenth exactly)."""
    return SimpleNamespace(**dataclasses.asdict(record), ratio=record.ratio, margin=margin)


def test_a_margin_of_exactly_a_tenth_is_not_flagged():
    at, under = (with_margin(check(name, 9e-6, LESS_ACCURATE), margin)
                 for name, margin in (("at", MARGIN_FLAG), ("under", MARGIN_FLAG - 1e-12)))
    assert not near_tolerance(at) and near_tolerance(under)
    assert {row[0]: row[-1] for row in rows(accuracy_section([at, under]))} == {
        "`s.py::at`": "10.0%", "`s.py::under`": "10.0% (under a tenth left)"}


def test_checks_read_back_from_json_give_the_same_section():
    # an xdist worker's records reach the report as JSON (src/kernelwatch/plugin/xdist.py): labels equal to the
    # verdict module's, but other string objects
    records = every_kind_of_check()
    sent = [AccuracyRecord.from_dict(json.loads(json.dumps(record.as_dict()))) for record in records]
    assert sent == records and sent[1].verdict is not SAME
    assert accuracy_section(sent) == accuracy_section(records)
    assert [r.case for r in failing(sent)] == ["s.py::test_b_less", "s.py::test_a_less[x|y]"]
