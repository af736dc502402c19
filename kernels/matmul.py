"""The matrix-multiply launcher: checks, allocates, launches; never synchronizes.

`prepare_matmul(name, a, b)` checks the operands, allocates the output (and,
for the pitched kernel, pitched copies of the operands) and returns a
`PreparedMatmul` whose `run(stream)` only enqueues the launch: the
correctness suite poisons the output and runs once, the performance suite
times `run` alone. `matmul(name, a, b)` is prepare + run.
"""

from __future__ import annotations

import os

import numpy as np

from . import checks
from .compile import KernelBuild, get_function
from .device import attribute, free_device_bytes, int32
from .pitched import PitchedMatrix
from .registry import MATMUL_KERNELS, NEGATIVE_CONTROL, ROWS, MatmulKernel

DEFAULT_SHARED_BYTES = 48 * 1024  # what a block gets without opting in


def kernel_by_name(name: str) -> MatmulKernel:
    if name == NEGATIVE_CONTROL.name:
        return NEGATIVE_CONTROL
    try:
        return MATMUL_KERNELS[name]
    except KeyError:
        raise ValueError(f"unknown matmul kernel {name!r}; known: {', '.join(MATMUL_KERNELS)}") from None


def _grid(kernel: MatmulKernel, m: int, n: int) -> tuple[int, int, int]:
    if kernel.grid == ROWS:
        return (m, 1, 1)
    rows, cols = kernel.tile
    return (-(-n // cols), -(-m // rows), 1)


def _shared_bytes(kernel: MatmulKernel, k: int) -> int:
    """A block's dynamic shared memory: the kernel's, or a row of A rounded up to 4 floats (ROWS kernels;
    see matmul_03_row_shared.cu)."""
    return -(-k // 4) * 16 if kernel.grid == ROWS else kernel.shared_bytes


def _build(kernel: MatmulKernel, defines, m: int, n: int, k: int) -> KernelBuild:
    launch = (f"grid={_grid(kernel, m, n)} block={kernel.threads} shared={_shared_bytes(kernel, k)} "
              f"pitched={kernel.pitched}")
    return KernelBuild(kernel.source, kernel.function, defines, launch)


def build_for(name: str, m: int, n: int, k: int) -> KernelBuild | None:
    """The build and launch `prepare_matmul(name, ...)` gives an M x K by K x N product, described without a
    GPU (a stored run's case, for its cause card): operands taken as 16-byte aligned, as the suite's
    allocations are. None for cuBLAS."""
    kernel = kernel_by_name(name)
    if kernel.source is None:
        return None
    aligned = (("ALIGNED", int(_aligned([], n, k))),) if kernel.vectorized else ()  # no pointers: aligned bases
    return _build(kernel, kernel.defines + aligned, m, n, k)


def _aligned(m_ptrs: list[int], n: int, k: int) -> bool:
    """float4 accesses are safe: K and N divisible by 4, every base 16-byte aligned."""
    return n % 4 == 0 and k % 4 == 0 and all(p % 16 == 0 for p in m_ptrs)


class PreparedMatmul:
    """Operands, output and launch configuration of one C = A·B."""

    def __init__(self, kernel: MatmulKernel, a, b, out=None):
        import cupy

        self.kernel = kernel
        # the pitched kernel copies its operands into pitched allocations, from
        # device arrays (cudaMemcpy2DAsync) or host arrays (cudaMemcpy2D, as the
        # matmul-optimisation tutorial does)
        operand_types = (cupy.ndarray, np.ndarray) if kernel.pitched else cupy.ndarray
        self.m, self.n, self.k = checks.check_matmul_operands(a, b, operand_types)
        if out is not None:
            checks.check_output(out, (self.m, self.n), cupy.ndarray)
        extra = 0 if out is not None else self.m * self.n * 4
        if kernel.pitched:  # pitched A, B and C; a row pads to at most 512 bytes more
            extra = 4 * (self.m * self.k + self.k * self.n + self.m * self.n) + 512 * (2 * self.m + self.k)
        checks.check_fits(extra, free_device_bytes(), f"{kernel.name} on {self.m}x{self.k} @ {self.k}x{self.n}")
        if kernel.name == "cublas" and os.environ.get("CUPY_TF32", "0") != "0":
            raise RuntimeError("CUPY_TF32 is set: cuBLAS would round operands to TF32; unset it")

        self.shared_bytes = _shared_bytes(kernel, self.k)
        self._check_shared_memory()
        self.a, self.b = a, b
        if kernel.pitched:
            self.pa, self.pb = PitchedMatrix(self.m, self.k), PitchedMatrix(self.k, self.n)
            self.pc = PitchedMatrix(self.m, self.n)
            for pitched, dense in ((self.pa, a), (self.pb, b)):
                if isinstance(dense, np.ndarray):
                    pitched.copy_from_host(dense)
                else:
                    pitched.copy_from_device(dense)
            self.out = self.pc.view
        else:
            self.out = out if out is not None else cupy.empty((self.m, self.n), np.float32)
        self._function = None if kernel.source is None else self._load_function()

    def _check_shared_memory(self) -> None:
        """The block's shared memory must fit, past 48 KB only by the device's opt-in."""
        if self.shared_bytes > DEFAULT_SHARED_BYTES:
            limit = attribute("MaxSharedMemoryPerBlockOptin")
            if self.shared_bytes > limit:
                what = f"a row of A (K={self.k})" if self.kernel.grid == ROWS else "its tiles"
                raise ValueError(
                    f"{self.kernel.name}: {what} needs {self.shared_bytes} bytes of shared memory "
                    f"per block; this device allows at most {limit}"
                )

    def _load_function(self):
        k = self.kernel
        defines = k.defines
        if k.vectorized:  # never pitched: operands are dense CuPy arrays
            aligned = _aligned([self.a.data.ptr, self.b.data.ptr, self.out.data.ptr], self.n, self.k)
            defines = defines + (("ALIGNED", int(aligned)),)
        self._defines = defines
        function = get_function(k.source, k.function, defines)
        if self.shared_bytes > DEFAULT_SHARED_BYTES and function.max_dynamic_shared_size_bytes < self.shared_bytes:
            function.max_dynamic_shared_size_bytes = self.shared_bytes
        return function

    def run(self, stream=None) -> None:
        """Enqueue the multiply on `stream` (default: the current stream). No synchronization."""
        import cupy

        with stream if stream is not None else cupy.cuda.get_current_stream():
            if self._function is None:
                cupy.matmul(self.a, self.b, out=self.out)
                return
            if self.kernel.pitched:
                a, b, c = self.pa.view, self.pb.view, self.pc.view
                lda, ldb, ldc = self.pa.ld, self.pb.ld, self.pc.ld
            else:
                a, b, c = self.a, self.b, self.out
                lda, ldb, ldc = self.k, self.n, self.n
            args = (a, b, c, int32(self.m), int32(self.n), int32(self.k), int32(lda), int32(ldb), int32(ldc))
            self._function(_grid(self.kernel, self.m, self.n), (*self.kernel.threads, 1), args,
                           shared_mem=self.shared_bytes)

    def build(self) -> KernelBuild | None:
        """The CUDA build and launch of this case; None for cuBLAS (a library, not our code)."""
        if self._function is None:
            return None
        return _build(self.kernel, self._defines, self.m, self.n, self.k)

    def same_case_in(self, package) -> PreparedMatmul:
        """This case prepared by another version of the `kernels` package (the same operands)."""
        return package.prepare_matmul(self.kernel.name, self.a, self.b)

    def poison(self) -> None:
        """Fill the output (the pitched one, padding included) with NaN before a launch."""
        self.out.fill(np.nan)

    def result(self):
        """The product as a dense CuPy array (copied out of the pitched C for the pitched kernel)."""
        return self.pc.to_dense() if self.kernel.pitched else self.out


def prepare_matmul(name: str, a, b, out=None) -> PreparedMatmul:
    return PreparedMatmul(kernel_by_name(name), a, b, out)


def matmul(name: str, a, b, out=None, stream=None):
    """C = A·B with the named kernel; returns C without waiting for it."""
    prepared = prepare_matmul(name, a, b, out)
    prepared.run(stream)
    return prepared.result()
