"""The state of one pytest process of the suite: its GPU, its references, its records and verdicts.

One `SuiteState` per process, kept in `config.stash[STATE]`. Each timed case's
record and verdict are built once (src/kernelwatch/plugin/timed_case.py) and appended
here; the report, the history store and the xdist merge read them from here,
never back from pytest-benchmark's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kernelwatch.timing.profile import Profile
from kernelwatch.verdict.against_baseline import Baseline
from kernelwatch.verdict.labels import Verdict
from kernelwatch.verdict.noise import NoiseFloors
from kernelwatch.verdict.record import CaseRecord

if TYPE_CHECKING:  # for the annotations only: several of these import CuPy, NVML or SQLAlchemy when loaded
    from kernelwatch.ab.against_ref import RefComparison
    from kernelwatch.ab.library import Library
    from kernelwatch.cause.stored import PackagesAtCommits
    from kernelwatch.plugin.device import CudaDevice
    from kernelwatch.storage.history import HistoryStore
    from kernelwatch.timing.energy import EnergyMeter
    from kernelwatch.timing.gpu import GpuInfo
    from kernelwatch.timing.timer import GpuTimer


@dataclass(eq=False)  # registered as a plugin: pytest hashes it by identity
class SuiteState:
    """What one pytest process knows about its GPU, its references and its problems."""

    device: CudaDevice  # or another device layer with its methods (src/kernelwatch/plugin/hookspecs.py)
    profile: Profile
    floors: NoiseFloors
    report_path: Path
    # --benchmark-compare's value, taken from pytest-benchmark: its default [] when not given, True without a value
    compare_spec: bool | str | list | None = None
    comparing: bool = False
    gpu: GpuInfo | None = None  # of the device in use
    timer: GpuTimer | None = None  # the session's (made at session start where cases can be timed)
    ref: RefComparison | None = None  # under --kernelwatch-compare-ref
    # the project's kernel library (the kernelwatch_kernels ini key), imported where a GPU is; None where the
    # project names none: no machine-code identity, cause cards nor --kernelwatch-compare-ref
    library: Library | None = None
    baseline: Baseline | None = None
    baseline_runs: dict = field(default_factory=dict)  # case -> StoredResults of the baseline folder's runs
    store: HistoryStore | None = None  # the history store under --kernelwatch-history
    own_history: dict = field(default_factory=dict)  # case -> StoredResults of this GPU's reference runs in it
    recorded_run: int | None = None  # this run's id in the store, once recorded
    records: list[CaseRecord] = field(default_factory=list)  # every timed case of this process (and its workers)
    verdicts: list[Verdict] = field(default_factory=list)  # every judged case, against a stored reference
    # every correctness check's errors (src/kernelwatch/verdict/accuracy.py: AccuracyRecord), and per case this GPU's
    # stored checks (StoredAccuracy, newest first) under --kernelwatch-history
    accuracy: list = field(default_factory=list)
    accuracy_history: dict = field(default_factory=dict)
    failures: int = 0
    failed_tests: list[str] = field(default_factory=list)  # node ids of the failed tests
    repo: Path | None = None  # the checkout the run is in (its git history gives a slower case's window)
    head: tuple | None = None  # (commit, dirty) of that checkout, read once (kernelwatch.ab.commits.head_of)
    windows: dict = field(default_factory=dict)  # a reference commit -> its CommitWindow up to `head`
    # a case slower than its stored reference -> its cause card (markdown lines; src/kernelwatch/plugin/regression.py)
    cards: dict = field(default_factory=dict)
    # the kernel library at the reference runs' commits, checked out for the cards (src/kernelwatch/cause/stored.py)
    reference_packages: PackagesAtCommits | None = None
    diagnose: bool = False  # --kernelwatch-diagnose: a slower case's cause card has its dynamic half (ncu) too
    energy: str = "profile"  # --kernelwatch-energy: all, profile (the profile's energy cases) or none
    energy_fails: bool = True  # --kernelwatch-energy-verdict fail: a case judged "more energy" fails its test
    energy_meter: EnergyMeter | None = None  # (or a device layer's stand-in), where measured
    skipped_gpu_tests: int = 0  # GPU tests skipped for want of a GPU (said at the end, under -q too)
    problems: list[str] = field(default_factory=list)  # errors shown at the end; they fail the run
    notices: list[str] = field(default_factory=list)  # plain information shown at the end

    def pytest_runtest_logreport(self, report):
        """Count failures: a run with any is never saved as a baseline."""
        if report.failed:
            self.failures += 1
            self.failed_tests.append(report.nodeid)

    def other_failures(self) -> int:
        """Failed tests that are not slower cases nor cases of more energy or a slower phase (a correctness test,
        an error): they fail the run whole."""
        slower = {verdict.case for verdict in self.verdicts if verdict.fails}
        judged = {record.case for record in self.records if record.fails_beside_time}
        less_accurate = {record.case for record in self.accuracy if record.fails and record.passed}
        return len(set(self.failed_tests) - slower - judged - less_accurate)

    def add(self, record: CaseRecord, verdict: Verdict | None) -> None:
        """Keep one timed case's record and, when it was judged against a stored reference, its verdict."""
        self.records.append(record)
        if verdict is not None:
            self.verdicts.append(verdict)


    def add_accuracy(self, record) -> None:
        """Keep one correctness check's AccuracyRecord."""
        self.accuracy.append(record)


STATE = pytest.StashKey[SuiteState]()
