"""Times configurations of matmul_08_warptile.cu against cuBLAS, to choose the registry's.

    python3 -m maintainers.checks.tune_warptile [sizes ...]      (default: 4096 8192)

Each candidate is first checked against cuBLAS on an odd shape and on the
largest size (plain-summation tolerance), then timed with the suite's own
timer. Prints one table: configuration, registers are in the compiler report
(tests/kernels/test_compile.py), TFLOP/s and % of cuBLAS per size.
"""

from __future__ import annotations

import argparse

from maintainers.environment import needs, needs_gpu, summary

CANDIDATES = [
    # name, rm, rn, warps_m, warps_n, bk, min_blocks
    ("128x128 4x2 bk8", 2, 2, 4, 2, 8, 2),
    ("256x128 4x2 bk8", 4, 2, 4, 2, 8, 1),
    ("128x256 4x2 bk8", 2, 4, 4, 2, 8, 1),
    ("128x256 2x4 bk8", 4, 2, 2, 4, 8, 1),
    ("128x256 2x4 bk16", 4, 2, 2, 4, 16, 1),
    ("128x256 4x2 bk16", 2, 4, 4, 2, 16, 1),
    ("256x128 4x2 bk16", 4, 2, 4, 2, 16, 1),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.tune_warptile", description=summary(__doc__))
    parser.add_argument("sizes", nargs="*", type=int, default=[4096, 8192], help="square sizes (default: 4096 8192)")
    sizes = parser.parse_args(argv).sizes
    if any(n <= 0 for n in sizes):
        parser.error("sizes must be positive")
    needs("maintainers.checks.tune_warptile", "cupy", "numpy", tox_env="gpu-cuda13")
    needs_gpu("maintainers.checks.tune_warptile")
    import cupy
    import numpy as np

    from kernels.matmul import PreparedMatmul, prepare_matmul
    from kernels.registry import MATMUL_KERNELS, tolerance, warptile
    from kernelwatch.metrics import relative_error
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer

    timer = GpuTimer(gpu_info().l2_bytes)
    rng = cupy.random.default_rng(7)
    operands = {n: (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)) for n in sizes}
    cublas = {n: 2 * n**3 / timer.measure(prepare_matmul("cublas", *operands[n]).run, PROFILES["nightly"]).median
              for n in sizes}
    odd = (rng.random((1025, 517), dtype=np.float32), rng.random((517, 1031), dtype=np.float32))
    print("| configuration | " + " | ".join(f"{n}: TFLOP/s (% cuBLAS)" for n in sizes) + " |")
    print("| --- | " + " | ".join("---" for _ in sizes) + " |")
    print("| cuBLAS | " + " | ".join(f"{cublas[n] / 1e12:.2f} (100%)" for n in sizes) + " |")
    for label, rm, rn, wm, wn, bk, mb in CANDIDATES:
        kernel = warptile(label, label, rm, rn, wm, wn, bk, mb)
        problems = []
        for a, b in [odd, operands[max(sizes)]]:
            prepared = PreparedMatmul(kernel, a, b)
            prepared.poison()
            prepared.run()
            ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
            err = relative_error(prepared.result(), ref)
            if err.max_error > tolerance(MATMUL_KERNELS["warptile"], a.shape[1]).max_error:
                problems.append(f"{a.shape[0]}x{b.shape[1]}x{a.shape[1]}: {err}")
        cells = []
        for n in sizes:
            median = timer.measure(PreparedMatmul(kernel, *operands[n]).run, PROFILES["nightly"]).median
            rate = 2 * n**3 / median
            cells.append(f"{rate / 1e12:.2f} ({100 * rate / cublas[n]:.1f}%)")
        print(f"| {label} | " + " | ".join(cells) + " |" + (f" WRONG: {problems}" if problems else ""))


if __name__ == "__main__":
    main()
