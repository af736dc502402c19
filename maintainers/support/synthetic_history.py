"""Synthetic stored runs in the suite's pytest-benchmark JSON, for the history store's tests and benchmark."""

from __future__ import annotations

import json
import random
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kernelwatch.storage.history import open_store

GPU_A = "GPU-aaaaaaaa-0000-0000-0000-000000000001"
GPU_B = "GPU-bbbbbbbb-0000-0000-0000-000000000002"
START = datetime(2026, 12, 1, tzinfo=UTC)


def case_name(number: int) -> str:
    return f"suites/test_perf_synthetic.py::test_kernel_time[case{number:03d}]"


def make_document(index: int, *, gpu_uuid: str = GPU_A, cases: int = 3, samples: int = 20, slower: float = 1.0,
                  case_gpus: dict[int, str] | None = None, timer: str = "cupti concurrent kernel",
                  sass: str = "sass-1", throttled: bool = False, case_slower: dict[int, float] | None = None) -> dict:
    """Run number ``index`` (its time: START + index hours): ``cases`` cases of ``samples`` samples each,
    case k taking about (k + 1) * 10 µs times ``slower`` (and times ``case_slower[k]``, where given);
    ``case_gpus`` gives some cases their own GPU."""
    rng = random.Random(index * 1_000_003 + cases)
    benchmarks = []
    for number in range(cases):
        base = (number + 1) * 1e-5 * slower * (case_slower or {}).get(number, 1.0)
        data = [base * (1 + rng.gauss(0, 0.003)) + rng.random() * 1e-8 for _ in range(samples)]
        quartiles = statistics.quantiles(data, n=4) if samples > 1 else [data[0]] * 3
        benchmarks.append({
            "group": f"case {number}", "name": f"test_kernel_time[case{number:03d}]", "fullname": case_name(number),
            "params": {"number": number}, "param": f"case{number:03d}",
            "extra_info": {"median_s": statistics.median(data), "kernel": "synthetic", "timer": timer, "sass": sass,
                           "gpu_uuid": (case_gpus or {}).get(number, gpu_uuid), "rsd": 0.003,
                           "sm_clock_mhz_min": 1980, "sm_clock_mhz_max": 1980,
                           "throttle_reasons": ["hw_slowdown"] if throttled else [], "throttled": throttled,
                           "sample_count": samples, "number": number},
            "options": {"timer": "perf_counter", "min_rounds": 5, "warmup": False},
            "stats": {"min": min(data), "max": max(data), "mean": statistics.fmean(data),
                      "median": statistics.median(data), "q1": quartiles[0], "q3": quartiles[2],
                      "rounds": samples, "iterations": 1, "data": data},
        })
    return {
        "machine_info": {"node": "synthetic-host", "gpu": {"name": "NVIDIA H200", "slug": "NVIDIA_H200",
                                                           "uuid": gpu_uuid, "host": "synthetic-host",
                                                           "driver": "580.159.04", "cuda_runtime": "13.2",
                                                           "cupy": "14.2.0"},
                         "kernel_suite_schema": 2},  # as the plugin writes it (src/kernelwatch/storage/schema.py)
        "commit_info": {"id": f"{index:040x}", "branch": "main", "dirty": False, "project": "main"},
        "benchmarks": benchmarks,
        "datetime": (START + timedelta(hours=index)).isoformat(),
        "version": "5.2.3",
    }


def write_document(folder: Path, number: int, doc: dict) -> Path:
    """Save ``doc`` as a stored run NNNN_synthetic.json in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{number:04d}_synthetic.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


# a history with one step: STEPPED_CASE (30 µs, so the 1.5% same-GPU floor decides) 3% slower from run STEP_AT on
STEPPED_HISTORY_RUNS = 24
STEPPED_HISTORY_CASES = 5
STEPPED_CASE = 2
STEP_AT = 21  # the first slow run: the 3rd newest
STEP = 1.03


def record_stepped_history(url: str, *, runs: int = STEPPED_HISTORY_RUNS, cases: int = STEPPED_HISTORY_CASES,
                           step_at: int = STEP_AT, stepped=(STEPPED_CASE,)) -> list[int]:
    """Record runs 0..runs-1 (profile quick, GPU_A), the cases `stepped` 3% slower from run `step_at` on; their ids."""
    with open_store(url) as store:
        return [store.record_run(make_document(index, cases=cases, case_slower={
            case: STEP for case in stepped} if index >= step_at else None), outcome="passed", profile="quick")
                for index in range(runs)]
