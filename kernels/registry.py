"""The kernels of the suite as data.

One `MatmulKernel` per matrix-multiply kernel, in the order of the
optimisation story, and one `ElementwiseKernel` per elementwise add. The
suites parametrize over `MATMUL_KERNELS` and `elementwise_kernels(ndim)`, and
the launchers read everything they need from the entry: adding a kernel is
its CUDA function plus one entry here. Tile and block sizes are stated here
only; the `.cu` files receive them as -D options.

Each matrix-multiply kernel carries its summation kind, from which
`tolerance` derives the error it may show (see there for the reasoning).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PLAIN = "plain"  # float32 sum in k order, one rounding per term
KAHAN = "kahan"  # compensated sum: error independent of K
LIBRARY = "library"  # cuBLAS: its own order (blocked, maybe split-K), at most as bad as plain

TILES = "tiles"  # grid of ceil(N / tile_n) x ceil(M / tile_m) blocks
ROWS = "rows"  # one block per row of C, the row of A in dynamic shared memory

# The three tutorial texts the first kernels were written from (numbered 000, 001
# and 002 in older notes and commit messages).
TUTORIALS = {
    "matmul-optimisation": "GXW, 'CUDA入门：如何进行矩阵乘法优化' (2011): a naive multiply with Kahan summation, "
                           "then a row of A in shared memory, pitched allocation (cudaMallocPitch), 16x16 tiles",
    "shared-tiling": "'使用共享内存优化矩阵乘法': 32x32 shared-memory tiles against the naive kernel",
    "cuda-notes-ch5": "'CUDA 进阶核心机制笔记' chapter 5: a 2D matrix add in 16x16 blocks, a vector add over "
                      "four streams from pinned memory, a 32x32 tiled matrix multiply",
}


def _check_tutorials(name: str, tutorials: tuple[str, ...]) -> None:
    unknown = [t for t in tutorials if t not in TUTORIALS]
    if unknown:
        raise ValueError(f"kernel {name!r}: unknown tutorial(s) {unknown}; known: {', '.join(TUTORIALS)}")


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
    tutorials: tuple[str, ...] = ()  # keys of TUTORIALS it comes from

    def __post_init__(self):
        _check_tutorials(self.name, self.tutorials)


def tiled(name: str, summary: str, size: int, tutorials: tuple[str, ...]) -> MatmulKernel:
    """A configuration of matmul_04_tiled.cu: size x size threads, tiles of size x size."""
    return MatmulKernel(name, summary, "matmul_04_tiled.cu", "matmul_tiled", threads=(size, size),
                        tile=(size, size), defines=(("TILE", size),), tutorials=tutorials)


def blocktile_1d(name: str, summary: str, bm: int, bn: int, bk: int, tm: int) -> MatmulKernel:
    """A configuration of matmul_05_blocktile_1d.cu: a bm x bn tile of C per block, bk values
    of k per step, each thread tm rows of one column."""
    return MatmulKernel(name, summary, "matmul_05_blocktile_1d.cu", "matmul_blocktile_1d",
                        threads=(bm * bn // tm, 1), tile=(bm, bn),
                        defines=(("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm)))


def blocktile_2d(name: str, summary: str, source: str, function: str, bm: int, bn: int, bk: int,
                 tm: int, tn: int, vectorized: bool = False) -> MatmulKernel:
    """A configuration of matmul_06_blocktile_2d.cu or matmul_07_vectorized.cu: a bm x bn tile
    of C per block, bk values of k per step, each thread a tm x tn sub-tile."""
    return MatmulKernel(name, summary, source, function, threads=((bm // tm) * (bn // tn), 1), tile=(bm, bn),
                        defines=(("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn)),
                        vectorized=vectorized)


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
            "matmul_01_naive.cu", "matmul_naive", threads=(32, 32), tile=(32, 32),
            tutorials=("shared-tiling", "cuda-notes-ch5"),
        ),
        MatmulKernel(
            "naive_kahan", "naive with Kahan summation",
            "matmul_02_naive_kahan.cu", "matmul_naive_kahan", threads=(32, 32), tile=(32, 32),
            summation=KAHAN, tutorials=("matmul-optimisation",),
        ),
        MatmulKernel(
            "row_shared", "one block per row, that row of A in shared memory, Kahan",
            "matmul_03_row_shared.cu", "matmul_row_shared", threads=(256, 1), grid=ROWS,
            summation=KAHAN, tutorials=("matmul-optimisation",),
        ),
        MatmulKernel(
            "row_shared_pitched", "row_shared on cudaMallocPitch'ed operands",
            "matmul_03_row_shared.cu", "matmul_row_shared", threads=(256, 1), grid=ROWS,
            summation=KAHAN, pitched=True, tutorials=("matmul-optimisation",),
        ),
        tiled("tiled16", "16x16 shared-memory tiles", 16, tutorials=("matmul-optimisation",)),
        tiled("tiled32", "32x32 shared-memory tiles", 32, tutorials=("shared-tiling", "cuda-notes-ch5")),
        blocktile_1d("blocktile_1d", "64x64 tiles, 8 outputs per thread in registers", bm=64, bn=64, bk=8, tm=8),
        blocktile_2d("blocktile_2d", "128x128 tiles, 8x8 outputs per thread",
                     "matmul_06_blocktile_2d.cu", "matmul_blocktile_2d", bm=128, bn=128, bk=8, tm=8, tn=8),
        blocktile_2d("vectorized", "blocktile_2d with float4 loads, A transposed in shared memory",
                     "matmul_07_vectorized.cu", "matmul_vectorized", bm=128, bn=128, bk=8, tm=8, tn=8,
                     vectorized=True),
        warptile("warptile", "warp tiling, conflict-free shared memory, double buffering",
                 rm=2, rn=2, min_blocks=2),
        # the tuned configuration: best of seven in maintainers/checks/tune_warptile.py on the H200 (docs/method.md#warptile-tuning)
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

ELEMENTWISE_SOURCE = "elementwise.cu"  # every elementwise CUDA function lives here


@dataclass(frozen=True)
class ElementwiseKernel:
    """One elementwise add c = a + b and how to launch it (see kernels/elementwise.py).

    A kernel of ndim 2 takes (a, b, c, rows, cols / per_thread) and runs on a 2D
    grid over (columns, rows); any other takes (a, b, c, n) and runs on a 1D grid
    over the flat array, adding the last n % per_thread elements itself.
    """

    name: str
    summary: str
    function: str | None  # in ELEMENTWISE_SOURCE; None for CuPy's own add
    ndim: int | None = None  # 1: vectors, 2: matrices, None: any shape
    per_thread: int = 1  # consecutive elements per thread: 1, or 4 as one float4
    threads: tuple[int, int] = (256, 1)  # block shape (x, y)
    # scalar function where float4 accesses cannot be used: an operand not 16-byte aligned, or (ndim 2)
    # a row length not divisible by per_thread
    fallback: str | None = None
    tutorials: tuple[str, ...] = ()  # keys of TUTORIALS it comes from

    def __post_init__(self):
        _check_tutorials(self.name, self.tutorials)
        if self.ndim not in (1, 2, None):
            raise ValueError(f"elementwise kernel {self.name!r}: ndim must be 1, 2 or None, got {self.ndim}")
        if self.per_thread not in (1, 4):
            raise ValueError(f"elementwise kernel {self.name!r}: per_thread must be 1 or 4, got {self.per_thread}")
        if self.fallback is not None and self.per_thread == 1:
            raise ValueError(f"elementwise kernel {self.name!r}: only a kernel of several elements per "
                             "thread takes a fallback")
        if self.ndim != 2 and self.threads[1] != 1:
            raise ValueError(f"elementwise kernel {self.name!r}: a 1D grid needs a block of (x, 1), "
                             f"got {self.threads}")


ELEMENTWISE_KERNELS: dict[str, ElementwiseKernel] = {
    k.name: k
    for k in [
        ElementwiseKernel("matrix_add_2d", "16x16 threads per block over a 2D grid, one element each",
                          "matrix_add_2d", ndim=2, threads=(16, 16), tutorials=("cuda-notes-ch5",)),
        ElementwiseKernel("matrix_add_2d_vec4", "the same 2D grid, a float4 of 4 columns per thread",
                          "matrix_add_2d_vec4", ndim=2, per_thread=4, threads=(16, 16), fallback="matrix_add_2d"),
        # 256 threads: the tutorial's THREADS_PER_BLOCK
        ElementwiseKernel("vector_add", "one element per thread", "vector_add", ndim=1,
                          tutorials=("cuda-notes-ch5",)),
        ElementwiseKernel("vector_add_vec4", "a float4 per thread", "vector_add_vec4", ndim=1, per_thread=4,
                          fallback="vector_add"),
        ElementwiseKernel("cupy_add", "CuPy's own elementwise add, for comparison", None),
    ]
}


def elementwise_kernels(ndim: int) -> list[str]:
    """Names of the elementwise kernels that take vectors (ndim=1) or matrices (ndim=2), in registry order."""
    if ndim not in (1, 2):
        raise ValueError(f"ndim must be 1 (vectors) or 2 (matrices), got {ndim!r}")
    return [k.name for k in ELEMENTWISE_KERNELS.values() if k.ndim in (ndim, None)]


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
      The matmul-optimisation tutorial's figures at k=1000, 2.0e-6 max and
      3.4e-7 average, are 1.1 and 0.18 sqrt(k)·u. We allow 4 sqrt(k)·u (max)
      and 1 sqrt(k)·u (average), plus 2u and 1u for the final rounding at
      small k: room for blocked orders and other shapes, while a kernel whose
      inputs lose 13 bits (the negative control) is 20-50 times over on average.
    * Kahan summation keeps the error near one rounding whatever k is
      (bound 2u + O(k u²)); the matmul-optimisation tutorial shows 1.2e-7
      max, 4.2e-8 average, i.e. 2u and 0.7u. We allow 4u and 1u.
    * cuBLAS sums in its own blocked order, never worse than the plain bound.
    """
    if k < 1:
        raise ValueError(f"inner dimension must be positive, got {k}")
    u = UNIT_ROUNDOFF
    if kernel.summation == KAHAN:
        return Tolerance(max_error=4 * u, avg_error=1 * u)
    root = math.sqrt(k)
    return Tolerance(max_error=(4 * root + 2) * u, avg_error=(root + 1) * u)
