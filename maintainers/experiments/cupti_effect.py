"""Does recording CUPTI activity change a kernel's own time? (docs/method.md#cupti-kernel-kinds, 2026-11-30)

    python -m maintainers.experiments.cupti_effect

Times a few cases with the held-event timer while CUPTI activity is off, with
the CUPTI timer (whose samples also carry the held events), and with the event
timer again, in one process on the same inputs, and prints the medians (µs).
"""

from __future__ import annotations

import argparse
import statistics

from kernels import prepare_add, prepare_matmul
from kernelwatch.timing.gpu import gpu_info
from kernelwatch.timing.profile import PROFILES
from kernelwatch.timing.timer import GpuTimer
from maintainers.environment import needs_gpu, summary
from suites.perf_cases import random_device

CASES = {  # name: (launcher, kernel, operand shape)
    "vector_add 64M": (prepare_add, "vector_add", (8192 * 8192,)),
    "matrix_add_2d 8192^2": (prepare_add, "matrix_add_2d", (8192, 8192)),
    "vector_add_vec4 64M": (prepare_add, "vector_add_vec4", (8192 * 8192,)),
    "vector_add 1M": (prepare_add, "vector_add", (1 << 20,)),
    "cublas 1024": (prepare_matmul, "cublas", (1024, 1024)),
    "warptile 1024": (prepare_matmul, "warptile", (1024, 1024)),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.cupti_effect", description=summary(__doc__))
    parser.parse_args(argv)
    needs_gpu("maintainers.experiments.cupti_effect")
    profile = PROFILES["nightly"]
    l2 = gpu_info().l2_bytes
    events_only, cupti = GpuTimer(l2, prefer_cupti=False), GpuTimer(l2)
    print("CUPTI:", cupti.uses_cupti, cupti.note)
    print("| case | events, CUPTI off | events, CUPTI on | CUPTI span | CUPTI kind | events off again |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (prepare, kernel, shape) in CASES.items():
        prepared = prepare(kernel, random_device(shape, 1), random_device(shape, 2))
        before = events_only.measure(prepared.run, profile).median
        traced = cupti.measure(prepared.run, profile)
        after = events_only.measure(prepared.run, profile).median
        print(f"| {name} | {before * 1e6:.2f} | {statistics.median(traced.event_samples) * 1e6:.2f} "
              f"| {traced.median * 1e6:.2f} | {traced.timer} | {after * 1e6:.2f} |")


if __name__ == "__main__":
    main()
