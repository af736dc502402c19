"""A model history (tests/history/model.py) stored in a real history store, and the real code's answers about it.

`store_history` records each run as the nightly would (pytest-benchmark's JSON, each case's record with its
verdict, window, acceptance, energy or phase verdict), in the order the history stored them, then the
acknowledgements. The answers come from the code a user runs: the references a nightly reads
(plugin/recording.py's `read_history`, then `judge_against_history`), the steps and failing stretches of
`changes` and `site` (`analyse`), and what the `changes` command prints as open, read from its output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import statistics
from types import SimpleNamespace

from kernelwatch.history import cmd_changes
from kernelwatch.history.analysis import analyse
from kernelwatch.history.steps import STEP
from kernelwatch.plugin.recording import read_history
from kernelwatch.storage.history import HistoryStore
from kernelwatch.verdict.against_baseline import judge_against_history
from kernelwatch.verdict.labels import ACCEPTED, SAME, SLOWER, THROTTLED
from kernelwatch.verdict.record import TIMER_CUPTI, CaseRecord
from tests.history.model import CaseRun, History, Run
from tests.support.suite_states import state_with

PROFILE = "nightly"


def samples_of(run: Run, case: str, median: float) -> list[float]:
    """Five samples around `median`, the run's own few hundredths of a percent off it (a process's offset)."""
    offset = 1 + ((run.number * 7 + len(case)) % 5 - 2) * 2e-4
    return [median * offset * (1 + d) for d in (-2e-3, -1e-3, 0.0, 1e-3, 2e-3)]


def _verdict(one: CaseRun) -> str:
    if one.throttled:
        return THROTTLED
    if one.outcome == "accepted":
        return ACCEPTED
    return SLOWER if one.outcome == "failed" and one.fails_by == "time" else SAME


def record_of(run: Run, case: str) -> CaseRecord:
    one = run.cases[case]
    window = None
    if one.window_base is not None:
        window = {"base": one.window_base, "head": run.commit, "commits": [], "acceptances": [], "unknown": "",
                  "head_dirty": False, "link": None}
    return CaseRecord(case, one.median_s, samples_of(run, case, one.median_s), timer=TIMER_CUPTI, sass=one.sass,
                      gpu_uuid=run.gpu, throttle_reasons=["hw_slowdown"] if one.throttled else [],
                      verdict=_verdict(one), window=window, accepted_reason=one.accepted,
                      energy_verdict={"label": "more energy", "fails": True} if one.fails_by == "energy" else None,
                      phase_verdicts=[{"phase": "kernel", "label": SLOWER, "fails": True}]
                      if one.fails_by == "phase" else [])


def document_of(run: Run) -> dict:
    benchmarks = []
    for case in sorted(run.cases):
        record = record_of(run, case)
        data = record.samples
        benchmarks.append({
            "group": None, "name": case.rsplit("::", 1)[-1], "fullname": case, "params": {}, "param": None,
            "extra_info": record.to_extra_info(), "options": {"timer": "perf_counter", "min_rounds": 5},
            "stats": {"min": min(data), "max": max(data), "mean": statistics.fmean(data),
                      "median": statistics.median(data), "q1": data[1], "q3": data[3], "rounds": len(data),
                      "iterations": 1, "data": data}})
    return {"machine_info": {"node": "model-host", "gpu": {"name": "NVIDIA H200", "slug": "NVIDIA_H200",
                                                          "uuid": run.gpu, "host": "model-host"},
                             "kernel_suite_schema": 2},
            "commit_info": {"id": run.commit, "branch": "main", "dirty": False, "project": "main"},
            "benchmarks": benchmarks, "datetime": run.started_at.isoformat(), "version": "5.2.3"}


def store_history(store: HistoryStore, history: History) -> None:
    """Record `history`'s runs in its order (run ids 1, 2, ...: a fresh store), then its acknowledgements."""
    for run in history.runs:
        run_id = store.record_run(document_of(run), outcome=run.outcome, profile=PROFILE,
                                  other_failures=run.other_failures if run.outcome == "failed" else None)
        assert run_id == int(run.run_id), f"a fresh store numbers runs from 1: got {run_id} for {run.run_id}"
    for case, number, reason in history.acknowledgements:
        store.acknowledge(case, number + 1, reason=reason, who="model")


def real_references(store: HistoryStore, case: str, gpu: str) -> list[tuple[str, str]] | None:
    """The runs a nightly on `gpu` judges `case` against, (run id, commit) oldest first, as the plugin reads
    them (None: too few, its baseline is the reference). The last one's commit is where a slower case's window
    starts."""
    state = state_with(store=store, gpu=SimpleNamespace(uuid=gpu), profile=SimpleNamespace(name=PROFILE))
    read_history(state)
    assert not state.findings.problems, state.findings.problems
    now = CaseRecord(case, 1e-4, [1e-4] * 5, timer=TIMER_CUPTI, sass="sass-now", gpu_uuid=gpu)
    verdict = judge_against_history(now, state.stored.own_history.get(case, []), gpu_uuid=gpu)
    if verdict is None:
        return None
    return [(run.name.removeprefix("history run "), run.commit) for run in verdict.references]


def real_steps_and_failing(store: HistoryStore) -> tuple[set[tuple[str, str, str, str]], dict[tuple[str, str], str]]:
    """`analyse`'s steps, {(GPU, case, first run after, direction)}, and the windows of its failing stretches,
    {(GPU, case): commit range}."""
    analysis = analyse(store)
    steps = {(key.gpu, key.case, step.after.run_id, step.direction)
             for key, found in analysis.steps.items() for step in found if step.kind == STEP}
    failing = {(key.gpu, key.case): stretch.commit_range for key, stretch in analysis.failing.items()}
    return steps, failing


def real_open(store: HistoryStore) -> tuple[int, set[tuple[str, str, str]]]:
    """What `changes` prints as open: its exit status and {("step" or "failing", case, run id)}, read from the
    acknowledge line it prints for each open change."""
    parser = argparse.ArgumentParser()
    cmd_changes.add_arguments(parser)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cmd_changes.run(parser.parse_args([]), store)
    found = set()
    for line in out.getvalue().splitlines():
        if line.lstrip().startswith("OPEN:"):
            words = shlex.split(line.split(" acknowledge ", 1)[1])
            found.add(("failing" if "OPEN: failing" in line else "step", words[0], words[1]))
    return status, found
