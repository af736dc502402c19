"""Pitched device matrices (the matmul-optimisation tutorial, second step).

CuPy has `memcpy2D` but no `mallocPitch`. We call the driver's own
`cuMemAllocPitch` through NVIDIA's cuda-bindings, rather than imitating the
pitch rule in Python: the pitch is whatever this device and driver choose, as
the seed intends ("we do not need to know these details"). The driver API is
used rather than the runtime's cudaMallocPitch because cuda-bindings' runtime
module carries its own runtime version, which may be newer than the driver;
the driver entry point has no such coupling. The allocation lives in CuPy's
context (the primary context), so CuPy kernels and copies use it directly.
"""

from __future__ import annotations

import numpy as np

FLOAT_BYTES = 4


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError(
            "row_shared_pitched needs NVIDIA's cuda-bindings package (pip install cuda-bindings)"
        ) from error
    return driver


def _check(result, what: str):
    driver = _driver()
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err.name}")
    return values


class PitchedMatrix:
    """A rows x cols float32 matrix in a cuMemAllocPitch allocation.

    `ld` is the pitch in elements, the leading dimension the kernels take.
    `view` is a CuPy array over the whole pitched allocation (rows x ld).
    """

    def __init__(self, rows: int, cols: int):
        import cupy

        cupy.cuda.runtime.free(0)  # make sure the primary context is current
        driver = _driver()
        ptr, pitch = _check(driver.cuMemAllocPitch(cols * FLOAT_BYTES, rows, FLOAT_BYTES), "cuMemAllocPitch")
        self.ptr = int(ptr)
        self.pitch = int(pitch)  # bytes
        self.rows, self.cols = rows, cols
        self.ld = self.pitch // FLOAT_BYTES
        memory = cupy.cuda.UnownedMemory(self.ptr, self.pitch * rows, self)
        self.view = cupy.ndarray((rows, self.ld), np.float32, cupy.cuda.MemoryPointer(memory, 0))

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr:
            try:
                _driver().cuMemFree(ptr)
            except Exception:  # pragma: no cover - interpreter shutdown
                pass

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows, self.cols

    def copy_from_host(self, host: np.ndarray) -> None:
        """cudaMemcpy2D from a dense host array, as the matmul-optimisation tutorial does."""
        import cupy

        rt = cupy.cuda.runtime
        width = self.cols * FLOAT_BYTES
        rt.memcpy2D(self.ptr, self.pitch, host.ctypes.data, width, width, self.rows, rt.memcpyHostToDevice)

    def copy_to_host(self, out: np.ndarray | None = None) -> np.ndarray:
        import cupy

        rt = cupy.cuda.runtime
        out = np.empty((self.rows, self.cols), np.float32) if out is None else out
        width = self.cols * FLOAT_BYTES
        rt.memcpy2D(out.ctypes.data, width, self.ptr, self.pitch, width, self.rows, rt.memcpyDeviceToHost)
        return out

    def copy_from_device(self, dense) -> None:
        """cudaMemcpy2DAsync from a dense CuPy array on the current stream."""
        import cupy

        rt = cupy.cuda.runtime
        width = self.cols * FLOAT_BYTES
        stream = cupy.cuda.get_current_stream().ptr
        rt.memcpy2DAsync(self.ptr, self.pitch, dense.data.ptr, width, width, self.rows,
                         rt.memcpyDeviceToDevice, stream)

    def to_dense(self):
        """A dense CuPy copy of the matrix (the padding columns left out)."""
        import cupy

        return cupy.ascontiguousarray(self.view[:, : self.cols])
