"""The state of one pytest process of the suite: its device and its options, and five parts each owned by one room.

One `SuiteState` per process, kept in `config.stash[STATE]` and registered as a plugin (it
counts failed tests). Its parts:
- `measuring` (src/kernelwatch/timing/measuring.py): the sampling plan, the GPU, the timer, the energy meter;
- `judging` (src/kernelwatch/verdict/judging.py): the noise floors, whether cases are compared, what fails;
- `stored` (src/kernelwatch/storage/stored_runs.py): the baseline, the history store and this GPU's runs in it;
- `code` (src/kernelwatch/cause/code_under_test.py): the checkout, its kernel library, the ref comparison;
- `findings` (src/kernelwatch/report/findings.py): records, verdicts, accuracy checks, cards, failures and the
  lines said at the end, which the report and the terminal summary are built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kernelwatch.cause.code_under_test import CodeUnderTest
from kernelwatch.report.findings import Findings
from kernelwatch.storage.stored_runs import StoredRuns
from kernelwatch.timing.measuring import Measuring
from kernelwatch.verdict.judging import Judging

if TYPE_CHECKING:  # for the annotations only: the device layer imports CuPy when used
    from kernelwatch.plugin.device import CudaDevice


@dataclass(eq=False)  # registered as a plugin: pytest hashes it by identity
class SuiteState:
    """What one pytest process knows about its GPU, its references and its problems."""

    device: CudaDevice  # or another device layer with its methods (src/kernelwatch/plugin/hookspecs.py)
    measuring: Measuring
    judging: Judging
    report_path: Path | None
    # --benchmark-compare's value, taken from pytest-benchmark: its default [] when not given, True without a value
    compare_spec: bool | str | list | None = None
    stored: StoredRuns = field(default_factory=StoredRuns)
    code: CodeUnderTest = field(default_factory=CodeUnderTest)
    findings: Findings = field(default_factory=Findings)

    def pytest_runtest_logreport(self, report):
        """Count failures: a run with any is never saved as a baseline."""
        if report.failed:
            self.findings.failed_tests.append(report.nodeid)


STATE = pytest.StashKey[SuiteState]()
