"""Synthetic sensitivity runs: stored runs (pytest-benchmark JSON with the suite's case records) whose cases
have the medians asked for, for the replay of verdicts (tests/maintainers/) and the plugin's baseline history."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kernelwatch.verdict.record import TIMER_CUPTI, CaseRecord

QUIET = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-row_shared]"


def write_run(folder: Path, name: str, medians: dict[str, float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    benches = []
    for case, median in medians.items():
        samples = list(median * (1 + 0.001 * rng.standard_normal(30)))
        record = CaseRecord(case=case, median_s=float(np.median(samples)), samples=samples, timer=TIMER_CUPTI,
                            sass="sass-1", gpu_uuid="GPU-A")
        benches.append({"fullname": case, "stats": {"data": samples}, "extra_info": record.to_extra_info()})
    doc = {"machine_info": {"gpu": {"name": "NVIDIA H200", "uuid": "GPU-A"}}, "benchmarks": benches}
    (folder / f"{name}.json").write_text(json.dumps(doc))
