"""kernelwatch.report.session_report: the terminal summary's sections built from a session's findings alone (the
report's text, and the plugin handing them over, are tested in tests/plugin/test_reporting.py)."""

from __future__ import annotations

from kernelwatch.report.findings import Findings
from kernelwatch.report.session_report import summary_sections
from kernelwatch.verdict.accuracy import LESS_ACCURATE, MORE_ACCURATE, AccuracyRecord
from kernelwatch.verdict.labels import ACCEPTED, SAME


def sections(findings: Findings) -> dict:
    return {s.title: s for s in summary_sections(findings, followed=True, run_id=12, bisect={}, energy_seconds=None)}


def test_accuracy_changes_are_listed_less_accurate_first_and_only_those_in_red_with_how_to_acknowledge():
    findings = Findings(accuracy=[AccuracyRecord(f"s.py::{label.replace(' ', '_')}", 2e-6, 1e-6, verdict=label)
                                  for label in (ACCEPTED, MORE_ACCURATE, SAME, LESS_ACCURATE)])
    lines = sections(findings)["kernelwatch: accuracy changes"].lines
    firsts = [(": ".join(line.split(": ")[:2]), red) for line, red in lines if line.startswith("s.py")]
    assert firsts == [("s.py::less_accurate: less accurate", True), ("s.py::accepted: accepted", False),
                      ("s.py::more_accurate: more accurate", False)]  # `same` is no change
    assert ("  if meant: python -m kernelwatch.history acknowledge 's.py::less_accurate' 12 --reason TEXT",
            False) in lines


def test_nothing_found_is_no_section_and_problems_are_red_after_the_notices():
    assert sections(Findings()) == {}
    titles = list(sections(Findings(notices=["saved"], problems=["disk full"])))
    assert titles == ["kernelwatch", "kernelwatch: errors"]
    errors = sections(Findings(problems=["disk full"]))["kernelwatch: errors"]
    assert errors.red and errors.lines == [("ERROR: disk full", True)]


def test_a_slower_cases_window_is_plain_text_with_its_bisect_line():
    from kernelwatch.verdict.labels import SLOWER
    from kernelwatch.verdict.record import CaseRecord

    window = {"base": "a" * 40, "head": "b" * 40, "commits": [["c" * 40, "tiles"]], "acceptances": []}
    record = CaseRecord(case="s.py::b", median_s=1.1e-3, verdict=SLOWER, ratio=1.1, window=window)
    bisect = {"s.py::b": "python -m kernelwatch.history bisect s.py::b aaaa..bbbb"}
    (section,) = summary_sections(Findings(records=[record]), followed=True, run_id=3, bisect=bisect,
                                  energy_seconds=None)
    assert section.lines[0] == ("s.py::b: slower x1.100", False) and not section.red
    assert not any(red for _, red in section.lines)  # the failure itself is pytest's red line
    assert ("  bisect: python -m kernelwatch.history bisect s.py::b aaaa..bbbb", False) in section.lines
    assert summary_sections(Findings(records=[record]), followed=False, run_id=3, bisect=bisect,
                            energy_seconds=None) == []  # a run not judged against stored runs follows nothing
