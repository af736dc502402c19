"""The launcher of the elementwise adds, driven by their registry entries.

Like the matrix-multiply launcher: `prepare_add(name, a, b)` checks and
allocates, its `run(stream)` only enqueues. `plan_launch` turns an entry
and a shape into the function, grid, block and size arguments of the launch
(a kernel of several elements per thread falls back to its scalar function
when the row length is not divisible); it needs no GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import checks
from .compile import KernelBuild, get_function
from .device import free_device_bytes, int32
from .registry import ELEMENTWISE_KERNELS, ELEMENTWISE_SOURCE, ElementwiseKernel


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def elementwise_kernel_by_name(name: str) -> ElementwiseKernel:
    try:
        return ELEMENTWISE_KERNELS[name]
    except KeyError:
        raise ValueError(f"unknown elementwise kernel {name!r}; known: {', '.join(ELEMENTWISE_KERNELS)}") from None


@dataclass(frozen=True)
class Launch:
    """One launch of a function of ELEMENTWISE_SOURCE."""

    function: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    sizes: tuple[int, ...]  # the int parameters after a, b and c


def plan_launch(kernel: ElementwiseKernel, shape: tuple[int, ...], aligned: bool = True) -> Launch:
    """How `kernel` (one with a CUDA function) covers an array of `shape`.

    A float4 kernel takes its scalar fallback where float4 accesses would be
    wrong: operands not 16-byte aligned (`aligned=False`: a view that starts
    inside an allocation, say) or, for matrices, rows not divisible by 4.
    """
    if kernel.function is None:
        raise ValueError(f"{kernel.name} has no CUDA function to launch")
    bx, by = kernel.threads
    function, per_thread = kernel.function, kernel.per_thread
    rows_divide = kernel.ndim != 2 or shape[1] % per_thread == 0
    if per_thread > 1 and not (aligned and rows_divide):
        if kernel.fallback is None:
            need = "16-byte aligned operands" if not aligned else f"a row length divisible by {per_thread}"
            raise ValueError(f"{kernel.name} needs {need} (shape {tuple(shape)})")
        function, per_thread = kernel.fallback, 1
    if kernel.ndim == 2:
        rows, cols = shape
        units = cols // per_thread
        return Launch(function, (_ceil_div(units, bx), _ceil_div(rows, by), 1), (bx, by, 1), (rows, units))
    n = math.prod(shape)
    return Launch(function, (max(1, _ceil_div(_ceil_div(n, per_thread), bx)), 1, 1), (bx, 1, 1), (n,))


def _build(plan: Launch) -> KernelBuild:
    return KernelBuild(ELEMENTWISE_SOURCE, plan.function, (), f"grid={plan.grid} block={plan.block}")


def build_for(name: str, shape: tuple[int, ...]) -> KernelBuild | None:
    """The build and launch `prepare_add(name, ...)` gives arrays of `shape`, described without a GPU (a stored
    run's case, for its cause card): operands taken as 16-byte aligned, as the suite's allocations are. None for
    CuPy's own add."""
    kernel = elementwise_kernel_by_name(name)
    if kernel.function is None:
        return None
    if kernel.ndim is not None and len(shape) != kernel.ndim:
        raise ValueError(f"{name} adds arrays of {kernel.ndim} dimension(s), not of shape {tuple(shape)}")
    return _build(plan_launch(kernel, shape, aligned=True))


class PreparedAdd:
    """c = a + b with one of the elementwise kernels."""

    def __init__(self, kernel: ElementwiseKernel, a, b, out=None):
        import cupy

        ndim = kernel.ndim if kernel.ndim is not None else a.ndim
        checks.check_same_shape(a, b, ndim, cupy.ndarray)
        if out is not None:
            checks.check_output(out, a.shape, cupy.ndarray)
        else:
            checks.check_fits(a.nbytes, free_device_bytes(), f"{kernel.name} of shape {a.shape}")
        self.kernel, self.a, self.b = kernel, a, b
        self.out = out if out is not None else cupy.empty_like(a)
        self.bytes_moved = 3 * a.nbytes  # read a and b, write c
        self._launch = self._configure()

    def _configure(self):
        a, b, c = self.a, self.b, self.out
        if self.kernel.function is None:
            import cupy

            return lambda: cupy.add(a, b, out=c)
        aligned = all(x.data.ptr % 16 == 0 for x in (a, b, c))
        launch = self._plan = plan_launch(self.kernel, a.shape, aligned)
        f = get_function(ELEMENTWISE_SOURCE, launch.function)
        args = (a, b, c, *(int32(size) for size in launch.sizes))
        return lambda: f(launch.grid, launch.block, args)

    def run(self, stream=None) -> None:
        import cupy

        with stream if stream is not None else cupy.cuda.get_current_stream():
            self._launch()

    def build(self) -> KernelBuild | None:
        """The CUDA build and launch of this case; None for CuPy's own add (a library)."""
        if self.kernel.function is None:
            return None
        return _build(self._plan)

    def same_case_in(self, package) -> PreparedAdd:
        """This case prepared by another version of the `kernels` package (the same operands)."""
        return package.prepare_add(self.kernel.name, self.a, self.b)

    def poison(self) -> None:
        self.out.fill(np.nan)

    def result(self):
        return self.out


def prepare_add(name: str, a, b, out=None) -> PreparedAdd:
    return PreparedAdd(elementwise_kernel_by_name(name), a, b, out)


def add(name: str, a, b, out=None, stream=None):
    """c = a + b with the named kernel; returns c without waiting for it."""
    prepared = prepare_add(name, a, b, out)
    prepared.run(stream)
    return prepared.out
