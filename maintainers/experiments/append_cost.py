"""What does appending a little work to a launch add to its GPU time, per CUPTI kernel kind?

    python -m maintainers.experiments.append_cost

tests/plugins/slowdown.py slows a library's case (cuBLAS, CuPy's add) down by
appending a spin kernel; under CUPTI's KERNEL kind that costs 3.5-5.1 µs even
for a spin of 0 cycles (H200, docs/method.md#spin-append-cost), more than 3% of a case under 170 µs. This measures, with the
suite's own timer (nightly profile), a case alone and with each of: a spin
kernel of 0 cycles, a 4-byte and a 1 MiB memset, a 4-byte device-to-device
copy; for cuBLAS 1024³ (timed with the KERNEL kind) and vector_add_vec4 on
1 M floats (the concurrent kind). Prints the medians, the kind and the cost.
"""

from __future__ import annotations

import argparse

from maintainers.environment import needs_gpu, summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.append_cost", description=summary(__doc__))
    parser.parse_args(argv)
    needs_gpu("maintainers.experiments.append_cost")
    import cupy
    import numpy as np

    from kernels import prepare_add, prepare_matmul
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer
    from maintainers.support.spin_kernel import APPEND_SOURCE
    from suites.perf_cases import random_device

    timer = GpuTimer(gpu_info().l2_bytes)
    profile = PROFILES["nightly"]
    spin = cupy.RawKernel(APPEND_SOURCE, "spin")  # the slowdown plugin's own spin kernel
    scratch = cupy.zeros(2**18, np.float32)  # 1 MiB
    rt = cupy.cuda.runtime

    def spin0(stream):
        with stream:
            spin((1,), (1,), (np.int64(0),))

    def memset(nbytes):
        return lambda stream: rt.memsetAsync(scratch.data.ptr, 0, nbytes, stream.ptr)

    def copy4(stream):
        rt.memcpyAsync(scratch.data.ptr + 4, scratch.data.ptr, 4, rt.memcpyDeviceToDevice, stream.ptr)

    extras = {"spin 0 cycles": spin0, "memset 4 B": memset(4), "memset 1 MiB": memset(2**20),
              "copy 4 B d2d": copy4}
    cases = {
        "cublas 1024": prepare_matmul("cublas", random_device((1024, 1024), 1), random_device((1024, 1024), 2)).run,
        "vector_add_vec4 1M": prepare_add("vector_add_vec4", random_device((2**20,), 1),
                                          random_device((2**20,), 2)).run,
    }
    print("| case | appended | median µs | kind | added µs |\n| --- | --- | --- | --- | --- |")
    for name, run in cases.items():
        alone = timer.measure(run, profile, case=name)
        print(f"| {name} | nothing | {alone.median * 1e6:.2f} | {alone.timer} | |")
        for extra_name, extra in extras.items():
            def both(stream, run=run, extra=extra):
                run(stream)
                extra(stream)

            m = timer.measure(both, profile, case=f"{name} + {extra_name}")
            print(f"| {name} | {extra_name} | {m.median * 1e6:.2f} | {m.timer} | {(m.median - alone.median) * 1e6:+.2f} |")


if __name__ == "__main__":
    main()
