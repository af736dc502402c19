"""Input checks shared by every launcher and host routine.

Every check runs before anything is allocated or launched and raises a
TypeError, ValueError or MemoryError whose message names the argument and the
problem. The checks read only `dtype`, `ndim`, `shape`, `flags` and `nbytes`,
so they work the same on NumPy and CuPy arrays, and the CPU tests exercise
them with NumPy arrays.
"""

from __future__ import annotations

import numpy as np

# The kernels index with 32-bit ints: no operand may hold 2**31 elements or more.
MAX_ELEMENTS = 2**31 - 1


def check_array(name: str, x, ndim: int, array_type: type | tuple[type, ...] | None = None) -> None:
    """A float32, C-contiguous, non-empty array of `ndim` dimensions."""
    if array_type is not None and not isinstance(x, array_type):
        expected = getattr(array_type, "__module__", "").split(".")[0] or str(array_type)
        raise TypeError(f"{name} must be a {expected} array, got {type(x).__name__}")
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        raise TypeError(f"{name} must be an array, got {type(x).__name__}")
    if x.dtype != np.float32:
        raise TypeError(f"{name} must have dtype float32, got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got {x.ndim} (shape {tuple(x.shape)})")
    if 0 in x.shape:
        raise ValueError(f"{name} has a zero-size dimension (shape {tuple(x.shape)})")
    if not x.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous (row-major); pass a contiguous copy")
    if x.size > MAX_ELEMENTS:
        raise ValueError(
            f"{name} has {x.size} elements; the kernels index with 32-bit ints (at most {MAX_ELEMENTS})"
        )


def check_matmul_operands(a, b, array_type=None) -> tuple[int, int, int]:
    """Check A (M x K) and B (K x N) and return (M, N, K)."""
    check_array("a", a, 2, array_type)
    check_array("b", b, 2, array_type)
    m, k = a.shape
    k_b, n = b.shape
    if k != k_b:
        raise ValueError(f"inner dimensions differ: a is {m}x{k}, b is {k_b}x{n}")
    if m * n > MAX_ELEMENTS:
        raise ValueError(f"the product would have {m * n} elements; at most {MAX_ELEMENTS}")
    return m, n, k


def check_same_shape(a, b, ndim: int, array_type=None) -> None:
    check_array("a", a, ndim, array_type)
    check_array("b", b, ndim, array_type)
    if a.shape != b.shape:
        raise ValueError(f"a and b differ in shape: {tuple(a.shape)} and {tuple(b.shape)}")


def check_output(out, shape: tuple[int, ...], array_type=None) -> None:
    """A caller-supplied output must be float32, contiguous and of the result's shape."""
    check_array("out", out, len(shape), array_type)
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, the result has {tuple(shape)}")


def check_fits(nbytes: int, free_bytes: int, what: str) -> None:
    """MemoryError, before allocating, when `nbytes` exceed the device's free memory."""
    if nbytes > free_bytes:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.2f} GiB of device memory; "
            f"only {free_bytes / 2**30:.2f} GiB are free"
        )


def check_chunks(chunks: int, n: int) -> None:
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)):
        raise TypeError(f"chunks must be an int, got {type(chunks).__name__}")
    if not 1 <= chunks <= n:
        raise ValueError(f"chunks must be between 1 and the vector length {n}, got {chunks}")
