"""A `SuiteState` for a test, built from the fields it sets, each put into the part that owns it."""

from __future__ import annotations

import dataclasses

from kernelwatch.cause.code_under_test import CodeUnderTest
from kernelwatch.plugin.state import SuiteState
from kernelwatch.report.findings import Findings
from kernelwatch.storage.stored_runs import StoredRuns
from kernelwatch.timing.measuring import Measuring
from kernelwatch.verdict.judging import Judging

PARTS = {"measuring": Measuring, "judging": Judging, "stored": StoredRuns, "code": CodeUnderTest,
         "findings": Findings}
OWN = ("device", "report_path", "compare_spec")


def state_with(**fields) -> SuiteState:
    """A process's state with `fields` set (profile=, gpu=, store=, records=, ...) and nothing else: every field
    the end-of-run code reads and the test does not set is None, empty or the part's default."""
    owner = {f.name: part for part, cls in PARTS.items() for f in dataclasses.fields(cls)}
    unknown = set(fields) - set(owner) - set(OWN)
    assert not unknown, f"not a field of SuiteState nor of its parts: {sorted(unknown)}"
    parts = {part: {name: value for name, value in fields.items() if owner.get(name) == part} for part in PARTS}
    parts["measuring"].setdefault("profile", None)
    parts["judging"].setdefault("floors", None)
    return SuiteState(fields.get("device"), Measuring(**parts["measuring"]), Judging(**parts["judging"]),
                      fields.get("report_path"), fields.get("compare_spec"), StoredRuns(**parts["stored"]),
                      CodeUnderTest(**parts["code"]), Findings(**parts["findings"]))
