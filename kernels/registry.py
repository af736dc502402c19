"""The kernels of the suite as data.

One `MatmulKernel` per matrix-multiply kernel, in the order of the
optimisation story; the correctness and performance suites parametrize over
`MATMUL_KERNELS`, so adding a kernel here (and its `.cu` file) is all it
takes to have it checked and timed. The elementwise kernels are few and
fixed; they are listed in `ELEMENTWISE_KERNELS` for the same purpose.

Each matrix-multiply kernel carries its summation kind, from which
`tolerance` derives the error it may show (see there for the reasoning).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

PLAIN = "plain"  # float32 sum in k order, one rounding per term
KAHAN = "kahan"  # compensated sum: error independent of K
LIBRARY = "library"  # cuBLAS: its own order (blocked, maybe split-K), at most as bad as plain

TILES = "tiles"  # grid of ceil(N / tile_n) x ceil(M / tile_m) blocks
ROWS = "rows"  # one block per row of C, the row of A in dynamic shared memory


@dataclass(frozen=True)
class MatmulKernel:
    """One matrix-multiply kernel and how to launch it."""

    name: str
    summary: str
    source: str | None = None  # file under kernels/cuda; None for cuBLAS
    function: str | None = None
    threads: tuple[int, int] = (1, 1)  # block shape (x, y)
    tile: tuple[int, int] = (1, 1)  # rows x columns of C per block (grid=TILES)
    grid: str = TILES
    defines: tuple[tuple[str, int], ...] = ()
    summation: str = PLAIN
    shared_bytes: int = 0  # dynamic shared memory per block (grid=TILES); ROWS kernels size it from K
    vectorized: bool = False  # has an ALIGNED=1 float4 build for shapes divisible by 4
    pitched: bool = False  # runs on cudaMallocPitch'ed operands
    seed: str = ""  # the tutorial text it comes from, if any
    tags: tuple[str, ...] = field(default=())


def warptile(name: str, summary: str, rm: int, rn: int, warps_m: int = 4, warps_n: int = 2,
             bk: int = 8, min_blocks: int = 1) -> MatmulKernel:
    """A configuration of matmul_08_warptile.cu: each lane owns rm x rn pieces of 4x4
    outputs, warps_m x warps_n warps per block, bk values of k per tile, two stages."""
    bm, bn = warps_m * 16 * rm, warps_n * 32 * rn
    defines = (("RM", rm), ("RN", rn), ("WARPS_M", warps_m), ("WARPS_N", warps_n), ("BK", bk),
               ("MIN_BLOCKS", min_blocks))
    return MatmulKernel(name, summary, "matmul_08_warptile.cu", "matmul_warptile",
                        threads=(32 * warps_m * warps_n, 1), tile=(bm, bn), defines=defines,
                        shared_bytes=4 * 2 * bk * (bm + 4 + bn), vectorized=True)


MATMUL_KERNELS: dict[str, MatmulKernel] = {
    k.name: k
    for k in [
        MatmulKernel(
            "naive", "one thread per element, global memory only",
            "matmul_01_naive.cu", "matmul_naive", threads=(32, 32), tile=(32, 32), seed="001, 002",
        ),
        MatmulKernel(
            "naive_kahan", "naive with Kahan summation",
            "matmul_02_naive_kahan.cu", "matmul_naive_kahan", threads=(32, 32), tile=(32, 32),
            summation=KAHAN, seed="000",
        ),
        MatmulKernel(
            "row_shared", "one block per row, that row of A in shared memory, Kahan",
            "matmul_03_row_shared.cu", "matmul_row_shared", threads=(256, 1), grid=ROWS,
            summation=KAHAN, seed="000",
        ),
        MatmulKernel(
            "row_shared_pitched", "row_shared on cudaMallocPitch'ed operands",
            "matmul_03_row_shared.cu", "matmul_row_shared", threads=(256, 1), grid=ROWS,
            summation=KAHAN, pitched=True, seed="000",
        ),
        MatmulKernel(
            "tiled16", "16x16 shared-memory tiles",
            "matmul_04_tiled.cu", "matmul_tiled", threads=(16, 16), tile=(16, 16),
            defines=(("TILE", 16),), seed="000",
        ),
        MatmulKernel(
            "tiled32", "32x32 shared-memory tiles",
            "matmul_04_tiled.cu", "matmul_tiled", threads=(32, 32), tile=(32, 32),
            defines=(("TILE", 32),), seed="001, 002",
        ),
        MatmulKernel(
            "blocktile_1d", "64x64 tiles, 8 outputs per thread in registers",
            "matmul_05_blocktile_1d.cu", "matmul_blocktile_1d", threads=(512, 1), tile=(64, 64),
        ),
        MatmulKernel(
            "blocktile_2d", "128x128 tiles, 8x8 outputs per thread",
            "matmul_06_blocktile_2d.cu", "matmul_blocktile_2d", threads=(256, 1), tile=(128, 128),
        ),
        MatmulKernel(
            "vectorized", "blocktile_2d with float4 loads, A transposed in shared memory",
            "matmul_07_vectorized.cu", "matmul_vectorized", threads=(256, 1), tile=(128, 128),
            vectorized=True,
        ),
        warptile("warptile", "warp tiling, conflict-free shared memory, double buffering",
                 rm=2, rn=2, min_blocks=2),
        # the tuned configuration: best of seven in scripts/tune_warptile.py on the H200 (NOTES.md)
        warptile("warptile_128x256", "warptile tuned: 128x256 tiles, 8x16 outputs per thread, 16-deep k",
                 rm=2, rn=4, bk=16),
        MatmulKernel("cublas", "cuBLAS SGEMM through cupy.matmul, TF32 off", summation=LIBRARY),
    ]
}

# The negative control of the correctness suite: must fail its checks.
NEGATIVE_CONTROL = MatmulKernel(
    "float16_inputs", "naive with inputs rounded to 11 significant bits (wrong on purpose)",
    "matmul_00_negative_control.cu", "matmul_float16_inputs", threads=(32, 32), tile=(32, 32),
)

ELEMENTWISE_KERNELS = {
    "matrix_add_2d": "16x16 threads per block over a 2D grid, one element each (seed 002)",
    "matrix_add_2d_vec4": "the same 2D grid, a float4 of 4 columns per thread",
    "vector_add": "one element per thread (seed 002)",
    "vector_add_vec4": "a float4 per thread",
    "cupy_add": "CuPy's own elementwise add, for comparison",
}

UNIT_ROUNDOFF = 2.0**-24  # float32: half an ulp of 1.0


@dataclass(frozen=True)
class Tolerance:
    max_error: float
    avg_error: float


def tolerance(kernel: MatmulKernel, k: int) -> Tolerance:
    """The error a kernel may show for inner dimension k, in units of u = 2**-24.

    The error measure is |c - ref| / ref_scale per element, ref_scale being
    |ref| for positive inputs or (|A|·|B|) for mixed signs.

    * Plain float32 summation in k order rounds once per term. The rounding
      errors are close to independent, so the error of a sum grows like
      sqrt(k)·u (the worst case, k·u, is never approached on random data).
      Seed 000's figures at k=1000, 2.0e-6 max and 3.4e-7 average, are
      1.1 and 0.18 sqrt(k)·u. We allow 4 sqrt(k)·u (max) and 1 sqrt(k)·u
      (average), plus 2u and 1u for the final rounding at small k: room for
      blocked orders and other shapes, while a kernel whose inputs lose 13
      bits (the negative control) is 20-50 times over on average.
    * Kahan summation keeps the error near one rounding whatever k is
      (bound 2u + O(k u²)); seed 000 shows 1.2e-7 max, 4.2e-8 average, i.e.
      2u and 0.7u. We allow 4u and 1u.
    * cuBLAS sums in its own blocked order, never worse than the plain bound.
    """
    if k < 1:
        raise ValueError(f"inner dimension must be positive, got {k}")
    u = UNIT_ROUNDOFF
    if kernel.summation == KAHAN:
        return Tolerance(max_error=4 * u, avg_error=1 * u)
    root = math.sqrt(k)
    return Tolerance(max_error=(4 * root + 2) * u, avg_error=(root + 1) * u)
