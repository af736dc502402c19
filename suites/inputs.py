"""Inputs and float64 references for the correctness suites.

Every case draws fresh random operands from a seed derived from its test id,
so cases differ from each other but a failure reproduces exactly.
"""

from __future__ import annotations

import zlib

import numpy as np

# Products up to this many multiply-adds get their reference from NumPy on
# the host; larger ones from CuPy in float64 on the device (DGEMM), which
# takes milliseconds where the host would take seconds.
HOST_REFERENCE_MAX_WORK = 1 << 24

KINDS = ("uniform", "normal", "ones", "nonfinite")


def seed_for(test_id: str) -> int:
    return zlib.crc32(test_id.encode())


def host_matrix(rng: np.random.Generator, shape: tuple[int, int], kind: str) -> np.ndarray:
    """float32 host matrix: uniform [0, 1) (as in the matmul-optimisation tutorial), standard normal, all ones,
    or normal with a few NaN, +Inf and -Inf entries (kind 'nonfinite')."""
    if kind == "uniform":
        return rng.random(shape, dtype=np.float32)
    if kind == "ones":
        return np.ones(shape, np.float32)
    x = rng.standard_normal(shape, dtype=np.float32)
    if kind == "nonfinite":
        flat = x.reshape(-1)
        count = max(1, flat.size // 5000)
        for value in (np.nan, np.inf, -np.inf):
            flat[rng.integers(0, flat.size, count)] = value
    elif kind != "normal":
        raise ValueError(f"unknown input kind {kind!r}")
    return x


def operands(test_id: str, m: int, n: int, k: int, kind: str):
    """(a, b) as CuPy float32 arrays of shapes m x k and k x n."""
    import cupy

    rng = np.random.default_rng(seed_for(test_id))
    if m * k * n <= HOST_REFERENCE_MAX_WORK or kind in ("ones", "nonfinite"):
        return cupy.asarray(host_matrix(rng, (m, k), kind)), cupy.asarray(host_matrix(rng, (k, n), kind))
    device_rng = cupy.random.default_rng(seed_for(test_id))
    if kind == "uniform":
        return (device_rng.random((m, k), dtype=np.float32), device_rng.random((k, n), dtype=np.float32))
    return (device_rng.standard_normal((m, k), dtype=np.float32),
            device_rng.standard_normal((k, n), dtype=np.float32))


def reference_product(a, b):
    """The float64 product of the float32 operands, as a CuPy array."""
    import cupy

    m, k = a.shape
    n = b.shape[1]
    if m * n * k <= HOST_REFERENCE_MAX_WORK:
        with np.errstate(invalid="ignore"):  # inf * 0 = NaN is the IEEE result the NaN/Inf tests expect
            return cupy.asarray(a.get().astype(np.float64) @ b.get().astype(np.float64))
    return a.astype(cupy.float64) @ b.astype(cupy.float64)
