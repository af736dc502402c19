"""The H200 runs of the history store replayed into SQLite and PostgreSQL give the verdicts the live runs gave.

tests/data/history_gpu/host-{B,C}.json.gz: the 25 quick runs of each of two H200s
(GPU-b9ba006b, GPU-c9e997a7; 2026-12-01, maintainers/device/history_gpu_runs.sh record 5 same 10
slowed 10 2), as --benchmark-json wrote them, machine_info's CPU details and the derived
stats dropped. Each run is replayed in the order it ran: its records judged exactly as the
plugin judges them (this GPU's history from the store where it holds enough runs, else the
committed baseline), then recorded. Every replayed verdict must be the live one, on each
backend: the store's round trip loses nothing a verdict depends on.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernelwatch.plugin.recording import read_history
from kernelwatch.storage.history import open_store
from kernelwatch.storage.runs import load_run, stored_runs
from kernelwatch.verdict.against_baseline import (
    HISTORY_MIN_RUNS_WALL,
    NOISE_HISTORY_RUNS,
    Baseline,
    history_of,
    judge_against_stored,
)
from kernelwatch.verdict.labels import OTHER_HOST, SAME, SLOWER
from kernelwatch.verdict.record import TIMER_WALL, CaseRecord
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)
from tests.support.suite_states import state_with

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "history_gpu"
BASELINES = ROOT / "baselines" / "NVIDIA_H200"


pytestmark = pytest.mark.slow  # 400 recorded verdicts replayed on both backends: run by CI's second pass (tox -e unit -- -m slow)


def host_runs(host: str) -> list[dict]:
    with gzip.open(DATA / f"host-{host}.json.gz", "rt") as fh:
        return json.load(fh)


def committed_baseline():
    paths = stored_runs(BASELINES)
    # the newest runs, as src/kernelwatch/plugin/__init__.py reads the baseline folder
    docs = {path.name: load_run(path, expected_gpu="NVIDIA H200") for path in paths[-NOISE_HISTORY_RUNS:]}
    newest = paths[-1]
    return Baseline.from_doc(newest, docs[newest.name]), history_of(docs)


def as_measured(bench: dict) -> CaseRecord:
    """A benchmark's record without the verdict the live run gave it."""
    record = CaseRecord.from_benchmark(bench)
    return dataclasses.replace(record, verdict=None, ratio=None, p_value=None, ci_low=None, ci_high=None,
                               detectable=None, verdict_reason=None, reference=None, reference_runs=None)


def replay(url: str) -> list[tuple[str, str, str, str]]:
    """(run, case, live label, replayed label) of every judged case of hosts B and C."""
    baseline, baseline_history = committed_baseline()
    compared = []
    with open_store(url) as store:
        for host in ("B", "C"):
            for run in host_runs(host):
                doc, judged = run["document"], not run["name"].startswith("record")
                uuid = doc["machine_info"]["gpu"]["uuid"]
                # the plugin's own reading of the history (its order, its throttle filter), not a copy of it
                state = state_with(store=store, gpu=SimpleNamespace(uuid=uuid), profile=SimpleNamespace(name="quick"))
                read_history(state)
                live = [bench["extra_info"].get("verdict") for bench in doc["benchmarks"]]
                for bench, label in zip(doc["benchmarks"], live, strict=True):
                    if not judged:
                        continue
                    record = as_measured(bench)
                    verdict = judge_against_stored(record, baseline=baseline,
                                                   baseline_runs=baseline_history.get(record.case, []),
                                                   own_history=state.stored.own_history.get(record.case, []), gpu_uuid=uuid)
                    own = state.stored.own_history.get(record.case, [])
                    if record.timer == TIMER_WALL and len(own) < HISTORY_MIN_RUNS_WALL:
                        # recorded when three runs sufficed for a wall-clock routine: now not judged against so few
                        label = OTHER_HOST if label in (SAME, SLOWER) else label
                    compared.append((f"{host}/{run['name']}", record.case, label, verdict.label))
                # a run whose test failed (here: only slower verdicts) was recorded as failed, never a reference
                store.record_run(doc, outcome="failed" if SLOWER in live else "passed", profile="quick")
    return compared


@pytest.mark.parametrize("history_url", ["sqlite", "postgresql"], indirect=True)
def test_every_replayed_verdict_is_the_live_one(history_url):
    compared = replay(history_url)
    assert len(compared) == 2 * 20 * 10  # two hosts, 20 judged runs of 10 cases
    differing = [row for row in compared if row[2] != row[3]]
    assert not differing, f"{len(differing)} verdicts differ from the live runs', e.g. {differing[:3]}"
    assert sum(row[3] == SLOWER for row in compared) == 144  # of the slowed runs: 72 case-runs on B, 72 on C
