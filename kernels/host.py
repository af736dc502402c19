"""End-to-end host routines: NumPy in, NumPy out (allocate, copy in, launch, copy out).

These are what the tutorials time ("Time used" in the matmul-optimisation
tutorial includes allocation and copies). Inputs may live in pageable memory
(any NumPy array) or in page-locked memory (`pinned_empty`); pass a pinned
`out` to receive the result into page-locked memory too. Every check runs
before the first CUDA call. Device allocations come from CuPy's memory pool,
so after the first call "allocate" is a pool hit, as it would be in any CuPy
program.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .device import free_device_bytes
from .elementwise import PreparedAdd, elementwise_kernel_by_name
from .matmul import kernel_by_name, prepare_matmul


def matmul_host(name: str, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """C = A·B on the GPU with the named kernel, from and to host memory."""
    import cupy

    kernel = kernel_by_name(name)
    m, n, k = checks.check_matmul_operands(a, b, np.ndarray)
    if out is not None:
        checks.check_output(out, (m, n), np.ndarray)
    checks.check_fits(4 * (m * k + k * n + m * n), free_device_bytes(), f"matmul_host({name!r})")
    out = np.empty((m, n), np.float32) if out is None else out
    # the pitched kernel is the matmul-optimisation tutorial's second step: cudaMallocPitch,
    # cudaMemcpy2D both ways
    if kernel.pitched:
        prepared = prepare_matmul(name, a, b)
        prepared.run()
        return prepared.pc.copy_to_host(out)
    prepared = prepare_matmul(name, cupy.asarray(a), cupy.asarray(b))
    prepared.run()
    return prepared.result().get(out=out)


def add_host(name: str, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """c = a + b on the GPU with the named elementwise kernel, from and to host memory."""
    import cupy

    kernel = elementwise_kernel_by_name(name)
    ndim = kernel.ndim or getattr(a, "ndim", 1)
    checks.check_same_shape(a, b, ndim, np.ndarray)
    if out is not None:
        checks.check_output(out, a.shape, np.ndarray)
    checks.check_fits(3 * a.nbytes, free_device_bytes(), f"add_host({name!r})")
    out = np.empty_like(a) if out is None else out
    prepared = PreparedAdd(kernel, cupy.asarray(a), cupy.asarray(b))
    prepared.run()
    return prepared.out.get(out=out)
