"""Launchers for the elementwise adds (seed 002, examples 1 and 2).

Like the matrix-multiply launcher: `prepare_add(name, a, b)` checks and
allocates, its `run(stream)` only enqueues. 2D kernels take matrices, 1D
kernels vectors; the float4 kernels need a row length (2D) divisible by 4
and fall back to the scalar kernel otherwise.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .compile import get_function
from .device import free_device_bytes, int32
from .registry import ELEMENTWISE_KERNELS

SOURCE = "elementwise.cu"
BLOCK_2D = (16, 16)  # seed 002's block
THREADS_1D = 256  # seed 002's THREADS_PER_BLOCK
NDIM = {"matrix_add_2d": 2, "matrix_add_2d_vec4": 2, "vector_add": 1, "vector_add_vec4": 1, "cupy_add": None}


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class PreparedAdd:
    """c = a + b with one of the elementwise kernels."""

    def __init__(self, name: str, a, b, out=None):
        import cupy

        if name not in ELEMENTWISE_KERNELS:
            raise ValueError(f"unknown elementwise kernel {name!r}; known: {', '.join(ELEMENTWISE_KERNELS)}")
        ndim = NDIM[name] if NDIM[name] is not None else a.ndim
        checks.check_same_shape(a, b, ndim, cupy.ndarray)
        if out is not None:
            checks.check_output(out, a.shape, cupy.ndarray)
        else:
            checks.check_fits(a.nbytes, free_device_bytes(), f"{name} of shape {a.shape}")
        self.name, self.a, self.b = name, a, b
        self.out = out if out is not None else cupy.empty_like(a)
        self.bytes_moved = 3 * a.nbytes  # read a and b, write c
        self._launch = self._configure()

    def _configure(self):
        a, b, c = self.a, self.b, self.out
        if self.name == "cupy_add":
            import cupy

            return lambda: cupy.add(a, b, out=c)
        if self.name in ("matrix_add_2d", "matrix_add_2d_vec4"):
            rows, cols = a.shape
            if self.name == "matrix_add_2d_vec4" and cols % 4 == 0:
                f = get_function(SOURCE, "matrix_add_2d_vec4")
                grid = (_ceil_div(cols // 4, BLOCK_2D[0]), _ceil_div(rows, BLOCK_2D[1]), 1)
                args = (a, b, c, int32(rows), int32(cols // 4))
            else:
                f = get_function(SOURCE, "matrix_add_2d")
                grid = (_ceil_div(cols, BLOCK_2D[0]), _ceil_div(rows, BLOCK_2D[1]), 1)
                args = (a, b, c, int32(rows), int32(cols))
            return lambda: f(grid, (*BLOCK_2D, 1), args)
        n = a.size
        f = get_function(SOURCE, self.name)
        per_thread = 4 if self.name == "vector_add_vec4" else 1
        grid = (max(1, _ceil_div(_ceil_div(n, per_thread), THREADS_1D)), 1, 1)
        return lambda: f(grid, (THREADS_1D, 1, 1), (a, b, c, int32(n)))

    def run(self, stream=None) -> None:
        import cupy

        with stream if stream is not None else cupy.cuda.get_current_stream():
            self._launch()

    def poison(self) -> None:
        self.out.fill(np.nan)

    def result(self):
        return self.out


def prepare_add(name: str, a, b, out=None) -> PreparedAdd:
    return PreparedAdd(name, a, b, out)


def add(name: str, a, b, out=None, stream=None):
    """c = a + b with the named kernel; returns c without waiting for it."""
    prepared = prepare_add(name, a, b, out)
    prepared.run(stream)
    return prepared.out
