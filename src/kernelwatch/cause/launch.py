"""Launch one matrix-multiply build twice, for Nsight Compute to profile the second launch: no suite, no pytest.

    python -m kernelwatch.cause.launch SOURCE.cu FUNCTION --shape MxNxK --grid X,Y,Z --block X,Y
        [--shared BYTES] [--option=-DTILE=32 ...]

SOURCE.cu is the kernel's whole source text (headers spliced in, as the kernel library's `source_of`
gives it, src/kernelwatch/ab/library.py), FUNCTION an `extern "C"` kernel of the matrix-multiply signature
this launcher knows (MATMUL_PARAMS: A, B, C, M, N, K, lda, ldb, ldc; row-major float32; this repository's
kernels have it). The plugin launches only a case whose prepared object gives `m`, `n` and `k` (a matrix
product, src/kernelwatch/plugin/regression.py); any other case's card has its static half alone. Operands are fixed seeded random values (the data moves
power and caches, never the profile's shape). The first launch warms up (module load, clocks); the
profiler (dynamic.py: `--launch-skip 1 --launch-count 1`) reads the second. Prints the product's
largest relative error against cuBLAS's, so that a variant which computes something else is seen.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _triple(text: str) -> tuple[int, ...]:
    parts = tuple(int(part) for part in text.split(","))
    return parts + (1,) * (3 - len(parts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernelwatch.cause.launch", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("function")
    parser.add_argument("--shape", required=True, help="MxNxK")
    parser.add_argument("--grid", required=True, type=_triple)
    parser.add_argument("--block", required=True, type=_triple)
    parser.add_argument("--shared", type=int, default=0)
    parser.add_argument("--option", action="append", default=[], help="an NVRTC option (repeat)")
    args = parser.parse_args(argv)
    m, n, k = (int(x) for x in args.shape.split("x"))
    import cupy
    import numpy as np

    module = cupy.RawModule(code=args.source.read_text(), options=tuple(args.option), backend="nvrtc")
    kernel = module.get_function(args.function)
    if args.shared > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = args.shared
    rng = np.random.default_rng(0)
    a = cupy.asarray(rng.uniform(-1, 1, (m, k)).astype(np.float32))
    b = cupy.asarray(rng.uniform(-1, 1, (k, n)).astype(np.float32))
    c = cupy.full((m, n), np.nan, dtype=np.float32)
    params = (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.int32(k), np.int32(n), np.int32(n))
    for _ in range(2):
        kernel(args.grid, args.block, params, shared_mem=args.shared)
    cupy.cuda.Device().synchronize()
    reference = a @ b
    error = float(cupy.max(cupy.abs(c - reference)) / cupy.max(cupy.abs(reference)))
    print(f"largest relative error against cuBLAS: {error:.2e}")
    return 0 if error < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
