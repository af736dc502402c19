"""What one pytest process found: the one record the report and the terminal summary are built from.

Each timed case's record and verdict are built once (src/kernelwatch/plugin/timed_case.py) and
kept here, with every correctness check's errors, the cause cards of slower cases, the failed
tests and what the run has to say at its end. Under pytest-xdist the workers' findings are
handed to the controller's (src/kernelwatch/plugin/xdist.py). Nothing here is read back from
pytest-benchmark's JSON; the history store, in turn, records the run's document as pytest-benchmark
writes it, each case's record in its `extra_info` (src/kernelwatch/plugin/recording.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelwatch.verdict.labels import Verdict
from kernelwatch.verdict.record import CaseRecord

if TYPE_CHECKING:
    from kernelwatch.verdict.accuracy import AccuracyRecord


@dataclass(eq=False)
class Findings:
    """Records, verdicts, accuracy checks, cause cards, failures, and the lines said at the end."""

    records: list[CaseRecord] = field(default_factory=list)  # every timed case of this process (and its workers)
    verdicts: list[Verdict] = field(default_factory=list)  # every judged case, against a stored reference
    accuracy: list[AccuracyRecord] = field(default_factory=list)  # every correctness check's errors
    # a case slower than its stored reference -> its cause card (markdown lines; src/kernelwatch/plugin/regression.py)
    cards: dict[str, list[str]] = field(default_factory=dict)
    failed_tests: list[str] = field(default_factory=list)  # node ids of the failed tests
    skipped_gpu_tests: int = 0  # GPU tests skipped for want of a GPU (said at the end, under -q too)
    problems: list[str] = field(default_factory=list)  # errors shown at the end; they fail the run
    notices: list[str] = field(default_factory=list)  # plain information shown at the end

    @property
    def failures(self) -> int:
        """Failed tests: a run with any is never saved as a baseline."""
        return len(self.failed_tests)

    def add(self, record: CaseRecord, verdict: Verdict | None) -> None:
        """Keep one timed case's record and, when it was judged against a stored reference, its verdict."""
        self.records.append(record)
        if verdict is not None:
            self.verdicts.append(verdict)

    def add_accuracy(self, record: AccuracyRecord) -> None:
        """Keep one correctness check's record."""
        self.accuracy.append(record)

    def other_failures(self) -> int:
        """Failed tests that are not slower cases nor cases of more energy or a slower phase (a correctness test,
        an error): they fail the run whole."""
        slower = {verdict.case for verdict in self.verdicts if verdict.fails}
        judged = {record.case for record in self.records if record.fails_beside_time}
        less_accurate = {record.case for record in self.accuracy if record.fails and record.passed}
        return len(set(self.failed_tests) - slower - judged - less_accurate)
