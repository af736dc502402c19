"""The history store in a pytest run (`--kernelwatch-history [URL]`): references read at the start, the run recorded at the end.

The store is opened when pytest configures the run (a store that cannot be
used is refused then, exit 4: src/kernelwatch/plugin/options.py); at session start the
reference runs of this GPU (its UUID) are read once, per case, for `judge_against_history`
(src/kernelwatch/verdict/against_baseline.py): never a slower case, nor a case of a run
whose correctness failed; an accepted case starts its new level. At the end the
run is recorded as pytest-benchmark's JSON document, with every sample, in one
transaction: outcome "failed" when any test failed, "passed" otherwise, each
case with its own outcome (its verdict), and the count of failed tests that
were not slower cases (any of them keeps the whole run from being a reference). A store that fails once the run is under way (reading, writing) is one clear
error at the end of the run and a non-zero exit; the run's JSON and report are
still written. Nothing here prints the store's password.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelwatch.plugin.benchmark import run_document, session_of
from kernelwatch.storage.history import HistoryError
from kernelwatch.verdict.against_baseline import NOISE_HISTORY_RUNS, REFERENCE_RUNS

if TYPE_CHECKING:
    from kernelwatch.plugin.state import SuiteState


def read_history(state: SuiteState) -> None:
    """Read this GPU's history from the store opened at configure (src/kernelwatch/plugin/options.py); a store
    that fails now is a problem of the run, reported at its end."""
    if state.stored.store is None or state.measuring.gpu is None or state.measuring.gpu.uuid is None:
        return
    try:
        gpus, profile = [state.measuring.gpu.uuid], state.measuring.profile.name
        found = state.stored.store.reference_history(gpus, profile=profile,
                                                     limit_runs=max(NOISE_HISTORY_RUNS, REFERENCE_RUNS))
        state.stored.own_history = {case: [entry for entry in reversed(entries) if not entry.throttled]
                                    for case, entries in found.items()}
        state.stored.accuracy_history = state.stored.store.accuracy_history(gpus, profile=profile)
    except HistoryError as error:
        state.stored.store.close()
        state.stored.store = None
        state.findings.problems.append(f"history store: {error}")


def record_session(config, state: SuiteState) -> None:
    """Record this run in the store (the controller or the only process; a run with timed cases)."""
    store, findings = state.stored.store, state.findings
    if store is None or session_of(config) is None or not (findings.records or findings.accuracy):
        return
    outcome = "failed" if findings.failures else "passed"
    try:
        run_id = store.record_run(run_document(config), outcome=outcome, profile=state.measuring.profile.name,
                                  other_failures=findings.other_failures())
    except HistoryError as error:
        findings.problems.append(f"history store: this run was not recorded: {error}")
        return
    finally:
        store.close()
    state.stored.recorded_run = run_id
    findings.notices.append(f"recorded this run ({outcome}) as history run {run_id} in {store.safe_url}")
