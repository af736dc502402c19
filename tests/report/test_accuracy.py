"""kernelwatch.report.accuracy: the report's accuracy section, its rows' order and the margin left to the tolerance."""

from __future__ import annotations

from kernelwatch.report.accuracy import accuracy_counts, accuracy_section
from kernelwatch.verdict.accuracy import LESS_ACCURATE, AccuracyRecord
from kernelwatch.verdict.labels import SAME


def check(case: str, max_error: float, verdict: str | None, passed: bool = True) -> AccuracyRecord:
    return AccuracyRecord(f"s.py::{case}", max_error, max_error / 4, tolerance_max=1e-5, tolerance_avg=1e-5,
                          passed=passed, verdict=verdict)


def rows(section: str) -> list[list[str]]:
    """The table's rows below its header, as cells."""
    table = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table]


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
