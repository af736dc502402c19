"""Which CUPTI kernel activity kind leaves a kernel's own time alone? (docs/method.md#cupti-kernel-kinds, 2026-11-30)

    python -m maintainers.experiments.cupti_kinds

For a few cases, 100 launches each (synchronized, no L2 flush, events around
each launch) with CUPTI activity off, with CUPTI_ACTIVITY_KIND_KERNEL
(serializes kernels), with CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (what the
suite's timer records), with CONCURRENT_KERNEL after cuptiActivityEnableHWTrace(1)
(hardware timestamps, where the GPU and driver have them) and off again; prints
the medians of the events and of CUPTI's kernel end - start, in µs. A mode that
CUPTI refuses prints its error instead of figures.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics

from kernels import prepare_add, prepare_matmul
from maintainers.environment import needs, needs_gpu, summary
from suites.perf_cases import random_device

CASES = {  # name: (launcher, kernel, operand shape)
    "vector_add 64M": (prepare_add, "vector_add", (8192 * 8192,)),
    "matrix_add_2d 8192^2": (prepare_add, "matrix_add_2d", (8192, 8192)),
    "vector_add_vec4 64M": (prepare_add, "vector_add_vec4", (8192 * 8192,)),
    "warptile 1024": (prepare_matmul, "warptile", (1024, 1024)),
    "cublas 1024": (prepare_matmul, "cublas", (1024, 1024)),
    "vector_add_vec4 1M": (prepare_add, "vector_add_vec4", (1024 * 1024,)),
    "matrix_add_2d_vec4 1024^2": (prepare_add, "matrix_add_2d_vec4", (1024, 1024)),
}
LAUNCHES = 100


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.cupti_kinds", description=summary(__doc__))
    parser.parse_args(argv)
    needs_gpu("maintainers.experiments.cupti_kinds")
    needs("maintainers.experiments.cupti_kinds", "cupti", tox_env="gpu-cuda13")
    import cupy
    from cupti import cupti

    kernel_kinds = (int(cupti.ActivityKind.KERNEL), int(cupti.ActivityKind.CONCURRENT_KERNEL))
    durations: list[int] = []

    def buffer_requested():
        return 8 << 20, 0

    def buffer_completed(activities):
        durations.extend(int(a.end) - int(a.start) for a in activities if int(a.kind) in kernel_kinds)

    cupti.activity_register_callbacks(buffer_requested, buffer_completed)
    concurrent = cupti.ActivityKind.CONCURRENT_KERNEL
    modes = [("off", None, False), ("KERNEL", cupti.ActivityKind.KERNEL, False),
             ("CONCURRENT_KERNEL", concurrent, False), ("CONCURRENT_KERNEL, HW trace", concurrent, True),
             ("off again", None, False)]
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    print("| case | CUPTI activity | events median µs | CUPTI kernel median µs |")
    print("| --- | --- | --- | --- |")
    for name, (prepare, kernel, shape) in CASES.items():
        prepared = prepare(kernel, random_device(shape, 1), random_device(shape, 2))
        for _ in range(5):
            prepared.run()
        for mode, kind, hw_trace in modes:
            durations.clear()
            try:
                if hw_trace:
                    cupti.activity_enable_hw_trace(1)
                if kind is not None:
                    cupti.activity_enable(kind)
            except Exception as error:  # noqa: BLE001 - a probe: report what CUPTI said and go on
                print(f"| {name} | {mode} | refused: {type(error).__name__}: {error} | |")
                if hw_trace:
                    with contextlib.suppress(Exception):
                        cupti.activity_enable_hw_trace(0)
                continue
            times = []
            for _ in range(LAUNCHES):
                cupy.cuda.runtime.deviceSynchronize()
                start.record()
                prepared.run()
                stop.record()
                stop.synchronize()
                times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e3)
            if kind is not None:
                cupti.activity_disable(kind)
            cupti.activity_flush_all(1)
            if hw_trace:
                cupti.activity_enable_hw_trace(0)
            traced = f"{statistics.median(durations) / 1e3:.2f}" if durations else "—"
            print(f"| {name} | {mode} | {statistics.median(times):.2f} | {traced} |")


if __name__ == "__main__":
    main()
