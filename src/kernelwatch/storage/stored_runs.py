"""The stored runs one pytest process judges against, and the history store it records into.

Read as the session starts (src/kernelwatch/plugin/__init__.py for the baseline folder,
src/kernelwatch/plugin/recording.py for the history store); every judgement reads its
case's runs from here, and the run's id in the store is kept once it is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernelwatch.verdict.against_baseline import Baseline
from kernelwatch.verdict.noise import StoredResult

if TYPE_CHECKING:  # for the annotations only: the store imports SQLAlchemy when loaded
    from kernelwatch.storage.history import HistoryStore
    from kernelwatch.verdict.accuracy import StoredAccuracy


@dataclass(eq=False)
class StoredRuns:
    """The baseline file and its folder's runs, the history store and this GPU's runs in it, per case."""

    baseline: Baseline | None = None
    baseline_runs: dict[str, list[StoredResult]] = field(default_factory=dict)  # case -> the baseline folder's runs
    store: HistoryStore | None = None  # the history store under --kernelwatch-history
    own_history: dict[str, list[StoredResult]] = field(default_factory=dict)  # case -> this GPU's reference runs
    accuracy_history: dict[str, list[StoredAccuracy]] = field(default_factory=dict)  # case -> this GPU's checks
    recorded_run: int | None = None  # this run's id in the store, once recorded
