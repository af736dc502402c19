"""Does the suite's GPU time agree with Nsight Compute's gpu__time_duration.sum?

Three steps (scripts/ncu_check.sh runs them on a GPU machine):

    python3 scripts/ncu_check.py time  > ours.json    # the suite's timer, nightly profile
    ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \\
        --log-file ncu.csv python3 scripts/ncu_check.py launch
    python3 scripts/ncu_check.py compare ours.json ncu.csv

The cases are kernels of 20 µs and more, each with a kernel name of its own
so that the ncu rows can be matched exactly.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LAUNCHES = 7
UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
         "s": 1.0, "second": 1.0}


# case -> (kernel name as ncu reports it, launcher family, registry name, shape)
CASES = {
    "naive 1024": ("matmul_naive", "matmul", "naive", (1024, 1024)),
    "tiled32 1024": ("matmul_tiled", "matmul", "tiled32", (1024, 1024)),
    "warptile_128x256 4096": ("matmul_warptile", "matmul", "warptile_128x256", (4096, 4096)),
    "cublas 4096": ("gemm", "matmul", "cublas", (4096, 4096)),
    "matrix_add_2d_vec4 8192x8192": ("matrix_add_2d_vec4", "add", "matrix_add_2d_vec4", (8192, 8192)),
    "vector_add 8192x8192": ("vector_add", "add", "vector_add", (8192 * 8192,)),
}


def prepared_cases():
    """case -> prepared launch, operands uniform random."""
    from kernels import prepare_add, prepare_matmul
    from suites.perf_cases import random_device

    prepare = {"matmul": prepare_matmul, "add": prepare_add}
    return {case: prepare[family](name, random_device(shape, 1), random_device(shape, 2))
            for case, (_kernel, family, name, shape) in CASES.items()}


def time_ours() -> None:
    import cupy

    from harness.gpu import gpu_info
    from harness.timing import PROFILES, GpuTimer

    timer = GpuTimer(gpu_info().l2_bytes)
    result = {}
    for case, prepared in prepared_cases().items():
        m = timer.measure(prepared.run, PROFILES["nightly"])
        result[case] = {"median_s": m.median, "rsd": m.rsd, "samples": len(m.samples)}
    cupy.cuda.runtime.deviceSynchronize()
    print(json.dumps(result, indent=1))


def launch() -> None:
    import cupy

    for prepared in prepared_cases().values():
        for _ in range(LAUNCHES):
            prepared.run()
        cupy.cuda.runtime.deviceSynchronize()


def ncu_medians(path: Path) -> dict[str, float]:
    rows = [line for line in path.read_text().splitlines() if line.startswith('"')]
    times: dict[str, list[float]] = {}
    for row in csv.DictReader(rows):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", "")) * UNITS[row["Metric Unit"]]
        times.setdefault(row["Kernel Name"], []).append(value)
    return {name: statistics.median(values) for name, values in times.items()}


def compare(ours_path: Path, ncu_path: Path) -> int:
    ours = json.loads(ours_path.read_text())
    theirs = ncu_medians(ncu_path)
    print("| case | suite (µs) | ncu (µs) | difference |\n| --- | --- | --- | --- |")
    worst = 0.0
    for case, figures in ours.items():
        kernel = CASES[case][0]
        # cuBLAS picks its kernel at run time: match any name containing "gemm"
        matches = [t for name, t in theirs.items() if name == kernel or (kernel == "gemm" and "gemm" in name)]
        if not matches:
            print(f"| {case} | {figures['median_s'] * 1e6:.1f} | not found | |")
            continue
        ncu = matches[0]
        diff = figures["median_s"] / ncu - 1
        worst = max(worst, abs(diff))
        print(f"| {case} | {figures['median_s'] * 1e6:.1f} | {ncu * 1e6:.1f} | {100 * diff:+.2f}% |")
    print(f"\nlargest difference: {100 * worst:.2f}% (target: within 3%)")
    return 0 if worst <= 0.03 else 1


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else ""
    if step == "time":
        time_ours()
    elif step == "launch":
        launch()
    elif step == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
