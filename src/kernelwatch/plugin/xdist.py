"""Running the suite with several pytest-xdist workers (`pytest -n auto`).

* Each worker is pinned to one CUDA device: worker gwN uses device
  N mod (visible devices), so `-n <number of GPUs>` gives each GPU one worker.
* Timing needs a GPU to itself. A test that times (marker `perf`) holds an
  exclusive lock on its GPU for its whole duration; any other GPU test holds
  a shared lock. Two workers on one GPU can check correctness side by side,
  but never time while the other uses the GPU. The lock is a file lock keyed
  by PCI bus id, so it also holds between separate pytest processes.
* pytest-benchmark switches itself off under xdist (its samples would be
  unreliable); with the lock they are not, so workers re-enable it, and each
  worker sends its benchmarks — samples and each case's record, verdict
  included (src/kernelwatch/verdict/record.py), its verdicts and its slower cases' cause cards — to the controller through xdist's
  `workeroutput` channel. The controller adds them to its own pytest-benchmark
  session, which then saves, reports and displays as in a single process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import tempfile
import time
import types
from pathlib import Path

from kernelwatch.plugin.benchmark import benchmarks_as_dicts, session_of
from kernelwatch.report.findings import Findings
from kernelwatch.verdict.accuracy import AccuracyRecord
from kernelwatch.verdict.labels import ReferenceRun, Verdict
from kernelwatch.verdict.record import CaseRecord

PAYLOAD_KEY = "kernelwatch"


def worker_id() -> str | None:
    """"gw0", "gw1", ... inside an xdist worker, else None."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def worker_device(worker: str, device_count: int) -> int:
    """The CUDA device a worker runs on: its number modulo the visible devices."""
    if not worker.startswith("gw") or not worker[2:].isdigit():
        raise ValueError(f"unexpected xdist worker id {worker!r}")
    return int(worker[2:]) % device_count


def pin_worker_to_device() -> int | None:
    """In a worker, make its device current before any CUDA context exists; return it."""
    worker = worker_id()
    if worker is None:
        return None
    import cupy

    device = worker_device(worker, cupy.cuda.runtime.getDeviceCount())
    cupy.cuda.runtime.setDevice(device)
    return device


def lock_path(pci_bus_id: str) -> Path:
    safe = "".join(c if c.isalnum() else "_" for c in pci_bus_id)
    return Path(tempfile.gettempdir()) / f"kernelwatch-gpu-{safe}.lock"


@contextlib.contextmanager
def gpu_lock(pci_bus_id: str, exclusive: bool):
    """Hold the GPU's lock: exclusive for timing, shared for other GPU work.

    Yields the seconds spent waiting for it.
    """
    with open(lock_path(pci_bus_id), "a+") as handle:
        started = time.perf_counter()
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield time.perf_counter() - started
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def export_results(config, findings: Findings) -> None:
    """In a worker: hand its benchmarks (samples), records and verdicts to the controller."""
    if not hasattr(config, "workeroutput"):
        return
    payload = {"benchmarks": benchmarks_as_dicts(config),
               "records": [dataclasses.asdict(record) for record in findings.records],
               "verdicts": [dataclasses.asdict(verdict) for verdict in findings.verdicts],
               "cards": findings.cards, "accuracy": [record.as_dict() for record in findings.accuracy]}
    config.workeroutput[PAYLOAD_KEY] = json.dumps(payload)


def import_results(config, findings: Findings, workeroutput: dict) -> None:
    """In the controller: add one worker's benchmarks to this session, its records, verdicts and cards to `state`."""
    from pytest_benchmark.stats import Metadata

    raw = workeroutput.get(PAYLOAD_KEY)
    if not raw:
        return
    payload = json.loads(raw)
    session = session_of(config)
    for bench in payload["benchmarks"]:
        fixture = types.SimpleNamespace(
            name=bench["name"], fullname=bench["fullname"], group=bench["group"], param=bench["param"],
            params=bench["params"], extra_info=bench["extra_info"], cprofile_stats=None, has_error=False,
        )
        metadata = Metadata(fixture, bench["stats"]["iterations"], bench["options"])
        for seconds in bench["stats"]["data"]:
            metadata.stats.update(seconds)
        session.benchmarks.append(metadata)
    findings.records += [CaseRecord(**fields) for fields in payload.get("records", [])]
    findings.verdicts += [Verdict(**{**fields, "references": tuple(ReferenceRun(**run) for run in fields.get(
        "references", ()))}) for fields in payload.get("verdicts", [])]
    findings.cards.update(payload.get("cards", {}))
    if payload.get("accuracy"):
        findings.accuracy += [AccuracyRecord.from_dict(fields) for fields in payload["accuracy"]]


def prepare_worker_session(config) -> None:
    """In a worker: re-enable pytest-benchmark and leave saving to the controller."""
    session = session_of(config)
    if session is None or config.getoption("benchmark_disable"):
        return
    session.disabled = False
    session.save = session.autosave = session.json = None
    session.histogram = None


def overlapping_timings(benchmarks: list[dict]) -> list[tuple[str, str]]:
    """Pairs of cases whose timing intervals overlap on the same GPU (should be none).

    Reads extra_info's pci_bus_id, timing_started and timing_ended, which every
    timed case records.
    """
    by_gpu: dict[str, list[tuple[float, float, str]]] = {}
    for bench in benchmarks:
        info = bench.get("extra_info", {})
        if "timing_started" in info:
            by_gpu.setdefault(info["pci_bus_id"], []).append(
                (info["timing_started"], info["timing_ended"], bench["fullname"]))
    overlaps = []
    for intervals in by_gpu.values():
        intervals.sort()
        latest_end, latest_name = float("-inf"), ""
        for start, end, name in intervals:
            if start < latest_end:
                overlaps.append((latest_name, name))
            if end > latest_end:
                latest_end, latest_name = end, name
    return overlaps
