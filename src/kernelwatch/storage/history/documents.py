"""The suite's stored-run documents as the history store reads and writes them.

The only module of the store that imports the rest of the harness: the case
record, its verdict labels and the strict loader of stored runs.

A run is pytest-benchmark's JSON document exactly as the suite saves it
(``machine_info`` with our ``gpu`` dict, ``commit_info``, ``benchmarks`` with
``stats.data`` = every sample and ``extra_info`` = the case record).  Each
benchmark is split into the columns a query needs (`case_row`) and the JSON
the export needs to give the document back unchanged (`benchmark_from_row`).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from datetime import UTC, datetime

from kernelwatch.storage.runs import BaselineError, load_run, stored_runs, write_text_atomically
from kernelwatch.verdict.accuracy import ACCURACY_KEY, AccuracyRecord
from kernelwatch.verdict.labels import ACCEPTED, SLOWER
from kernelwatch.verdict.record import CaseRecord, records_of

from .samples import SamplesError, encode_samples
from .validation import DocumentError, checked_run, current, started_at

__all__ = ["BaselineError", "DocumentError", "load_run", "stored_runs", "write_text_atomically",
           "accuracy_rows", "benchmark_from_row", "case_rows", "checked_run", "content_hash", "current", "document_from_rows",
           "run_row"]

# The keys of a benchmark in pytest-benchmark's order; extra_info and stats are stored apart.
_BENCHMARK_ORDER = ("group", "name", "fullname", "params", "param", "extra_info", "options", "stats")
_DOCUMENT_ORDER = ("machine_info", "commit_info", "benchmarks", "datetime", "version")


def content_hash(doc: dict) -> str:
    """SHA-256 of the document's canonical JSON: the same run imported twice has the same hash."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _gpu(doc: dict) -> dict:
    gpu = (doc.get("machine_info") or {}).get("gpu")
    return gpu if isinstance(gpu, dict) else {}


def run_row(doc: dict, *, outcome: str, profile: str | None, label: str | None, source: str | None) -> dict:
    """The ``runs`` row of a document that `checked_run` gave (without its id)."""
    benchmarks = doc["benchmarks"]
    gpu, commit = _gpu(doc), doc.get("commit_info") or {}
    uuids = sorted({uuid for uuid in (_case_uuid(b, gpu) for b in benchmarks) if uuid})
    return {
        "content_hash": content_hash(doc),
        "started_at": started_at(doc),
        "recorded_at": datetime.now(UTC).replace(tzinfo=None),
        "commit": commit.get("id"), "branch": commit.get("branch"), "dirty": commit.get("dirty"),
        "profile": profile, "outcome": outcome, "label": label, "source": source,
        "gpu_model": gpu.get("name"), "gpu_uuids": uuids,
        "host": gpu.get("host") or (doc.get("machine_info") or {}).get("node"),
        "driver": gpu.get("driver"), "cuda": gpu.get("cuda_runtime"), "cupy": gpu.get("cupy"),
        "case_count": len(benchmarks),
        "machine_info": doc.get("machine_info"), "commit_info": doc.get("commit_info"),
        "document_rest": {k: v for k, v in doc.items()
                          if k not in ("machine_info", "commit_info", "benchmarks", ACCURACY_KEY)},
    }


def _case_uuid(bench: dict, gpu: dict) -> str | None:
    """The GPU a case ran on: its record's (an xdist worker's GPU), else its run's."""
    return (bench.get("extra_info") or {}).get("gpu_uuid") or gpu.get("uuid")


def _reference_text(record: CaseRecord) -> str | None:
    """What the case was judged against, in words (None when it was not judged)."""
    if record.reference is None:
        return None
    pooled = record.reference_runs or 1
    return record.reference + (f", pooled with {pooled - 1} more stored runs" if pooled > 1 else "")


def case_outcome(record: CaseRecord) -> str:
    """A case's own outcome (schema.CASE_OUTCOMES) from its verdicts: slower (or an energy or phase verdict that
    failed its test) failed, accepted accepted."""
    if record.fails_beside_time:
        return "failed"
    return {SLOWER: "failed", ACCEPTED: "accepted"}.get(record.verdict, "passed")


def _energy_columns(record: CaseRecord) -> dict:
    """The energy columns of a case's row (None where the run measured no energy)."""
    windows = (record.energy or {}).get("window_joules_per_launch")
    if not windows:
        return {"energy_j": None, "energy_windows": None}
    try:
        return {"energy_j": record.energy["joules_per_launch"], "energy_windows": encode_samples(windows)}
    except SamplesError as exc:
        raise DocumentError(f"case {record.case}: energy windows: {exc}") from None


def case_rows(doc: dict) -> list[dict]:
    """The ``cases`` rows of a document that `checked_run` gave (without run_id), in the file's order."""
    benchmarks = doc["benchmarks"]
    gpu = _gpu(doc)
    rows = []
    for position, (bench, record) in enumerate(zip(benchmarks, records_of(doc), strict=True)):
        stats = dict(bench.get("stats") or {})
        samples = stats.pop("data", None) or []
        try:
            encoded = encode_samples(samples)
        except SamplesError as exc:
            raise DocumentError(f"case {record.case}: {exc}") from None
        quartiles = statistics.quantiles(samples, n=4) if len(samples) > 1 else [samples[0]] * 3
        info = bench.get("extra_info") or {}
        rows.append({
            "position": position, "node_id": record.case, "gpu_uuid": _case_uuid(bench, gpu),
            "timer": record.timer, "sass": record.sass, "median_s": record.median_s,
            "q25_s": quartiles[0], "q75_s": quartiles[2], "sample_count": len(samples), "rsd": record.rsd,
            "sm_clock_mhz_min": record.sm_clock_mhz_min, "sm_clock_mhz_max": record.sm_clock_mhz_max,
            "throttled": record.throttled, "verdict": record.verdict, "reference": _reference_text(record),
            "outcome": case_outcome(record), "accepted_reason": record.accepted_reason,
            **_energy_columns(record),
            "record": info, "stats": stats, "samples": encoded,
            "benchmark": {k: v for k, v in bench.items() if k not in ("fullname", "extra_info", "stats")},
        })
    return rows


def accuracy_rows(doc: dict) -> list[dict]:
    """The ``accuracy`` rows of a document that `checked_run` gave (without run_id), in the document's order."""
    gpu = _gpu(doc)
    rows = []
    for position, check in enumerate(doc.get(ACCURACY_KEY) or []):
        record = AccuracyRecord.from_dict(check)
        rows.append({
            "position": position, "node_id": record.case, "gpu_uuid": record.gpu_uuid or gpu.get("uuid"),
            "max_error": record.max_error, "avg_error": record.avg_error, "tolerance_max": record.tolerance_max,
            "tolerance_avg": record.tolerance_avg, "shape": record.shape, "input_kind": record.input_kind,
            "seed": record.seed, "outcome": record.outcome(), "verdict": record.verdict,
            "accepted_reason": record.accepted_reason, "record": check,
        })
    return rows


def benchmark_from_row(node_id: str, benchmark: dict, record: dict, stats: dict, samples) -> dict:
    """One benchmark of pytest-benchmark's JSON, back from its stored parts."""
    parts = {**benchmark, "fullname": node_id, "extra_info": record, "stats": {**stats, "data": list(samples)}}
    ordered = {key: parts.pop(key) for key in _BENCHMARK_ORDER if key in parts}
    return {**ordered, **parts}


def document_from_rows(machine_info, commit_info, rest: dict, benchmarks: list[dict],
                       accuracy: list[dict] | None = None) -> dict:
    """The run's document in pytest-benchmark's key order (its correctness checks last, where it has any)."""
    parts = {"machine_info": machine_info, "commit_info": commit_info, "benchmarks": benchmarks, **(rest or {})}
    if accuracy:
        parts[ACCURACY_KEY] = accuracy
    if machine_info is None:
        del parts["machine_info"]
    if commit_info is None:
        del parts["commit_info"]
    ordered = {key: parts.pop(key) for key in _DOCUMENT_ORDER if key in parts}
    return {**ordered, **parts}
