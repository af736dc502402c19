"""CUDA kernels and host routines of the suite, backed by CuPy.

Device-side launchers check their inputs, allocate the output and enqueue
the launch without synchronizing:

    >>> import cupy, kernels
    >>> a = cupy.random.rand(1000, 1000, dtype=cupy.float32)
    >>> c = kernels.matmul("warptile", a, a)       # any name in MATMUL_KERNELS
    >>> s = kernels.add("matrix_add_2d", a, a)     # any name in ELEMENTWISE_KERNELS

Host routines take and return NumPy arrays (`matmul_host`, `add_host`,
`vector_add_streams`). Importing this package needs no GPU; calling it does.
`source_of`, `build_for` and `kernel_names` make it kernelwatch's kernel library
(kernels/library.py).
"""

from .checks import MAX_ELEMENTS
from .device import is_pinned, pinned_empty
from .elementwise import add, prepare_add
from .host import add_host, matmul_host
from .library import build_for, kernel_names, source_of
from .matmul import kernel_by_name, matmul, prepare_matmul
from .registry import (
    ELEMENTWISE_KERNELS,
    MATMUL_KERNELS,
    NEGATIVE_CONTROL,
    TUTORIALS,
    ElementwiseKernel,
    MatmulKernel,
    elementwise_kernels,
    tolerance,
)
from .streams import PreparedStreams, chunk_bounds, overlap_bound_seconds, vector_add_streams

__all__ = [
    "ELEMENTWISE_KERNELS", "MATMUL_KERNELS", "MAX_ELEMENTS", "NEGATIVE_CONTROL", "TUTORIALS",
    "ElementwiseKernel", "MatmulKernel", "PreparedStreams", "add", "add_host", "build_for", "chunk_bounds",
    "elementwise_kernels", "is_pinned", "kernel_by_name", "kernel_names", "matmul", "matmul_host",
    "overlap_bound_seconds", "pinned_empty", "prepare_add", "prepare_matmul", "source_of", "tolerance",
    "vector_add_streams",
]
