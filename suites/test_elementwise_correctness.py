"""The adds and the streams routine: results must be exact (one float32 add per element).

The kernels come from the registry: every entry that takes matrices runs on
MATRIX_SHAPES, every entry that takes vectors on VECTOR_SIZES.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels import ELEMENTWISE_KERNELS, add, add_host, elementwise_kernels, pinned_empty, vector_add_streams
from suites.inputs import seed_for

pytestmark = pytest.mark.gpu

MATRIX_SHAPES = [(1, 1), (1, 7), (17, 33), (16, 16), (1023, 1025), (1024, 1024), (4097, 3), (3, 4100)]
VECTOR_SIZES = [1, 3, 17, 1000, 1023, 1 << 20, 10_000_003]


def random_pair(test_id, shape):
    """Two float32 arrays uniform in [-1, 1), of both signs. Drawn and
    scaled in place, they take a fifth of the time of normal draws (0.3 s per 10 M-element array)."""
    rng = np.random.default_rng(seed_for(test_id))
    pair = rng.random((2, *shape), dtype=np.float32)
    pair *= 2
    pair -= 1
    return pair[0], pair[1]


# a correctly rounded float32 add errs by at most half a unit in the last place: 2^-24 of the exact sum
ADD_TOLERANCE = 2.0 ** -24


def record_add(kernelwatch_accuracy, request, result, a, b, kernel):
    """The add's errors against the float64 sum, recorded with the run (its exactness is asserted apart)."""
    from kernelwatch.metrics import relative_error

    errors = relative_error(result, a.astype(np.float64) + b.astype(np.float64))
    kernelwatch_accuracy.record(errors, tolerance=ADD_TOLERANCE, shape="x".join(map(str, a.shape)),
                                kind="uniform [-1, 1)", seed=seed_for(request.node.nodeid), kernel=kernel,
                                measure="relative", fail=np.array_equal(result, a + b))


def device_add(name, a, b):
    import cupy

    out = cupy.full(a.shape, np.nan, np.float32)  # poisoned
    add(name, cupy.asarray(a), cupy.asarray(b), out=out)
    cupy.cuda.runtime.deviceSynchronize()
    return out.get()


@pytest.mark.parametrize("shape", MATRIX_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", elementwise_kernels(ndim=2))
def test_matrix_add_is_exact(name, shape, request, kernelwatch_accuracy):
    a, b = random_pair(request.node.nodeid, shape)
    result = device_add(name, a, b)
    record_add(kernelwatch_accuracy, request, result, a, b, name)
    assert np.array_equal(result, a + b)


@pytest.mark.parametrize("n", VECTOR_SIZES)
@pytest.mark.parametrize("name", elementwise_kernels(ndim=1))
def test_vector_add_is_exact(name, n, request, kernelwatch_accuracy):
    a, b = random_pair(request.node.nodeid, (n,))
    result = device_add(name, a, b)
    record_add(kernelwatch_accuracy, request, result, a, b, name)
    assert np.array_equal(result, a + b)


@pytest.mark.parametrize("offset", [1, 2, 3])
@pytest.mark.parametrize("name", ["vector_add_vec4", "matrix_add_2d_vec4"])
def test_float4_adds_of_views_not_16_byte_aligned_are_exact(name, offset, request):
    """Views that start inside an allocation: float4 loads there would fault, the scalar kernel must run."""
    import cupy

    rows, cols = 33, 1024
    a, b = random_pair(request.node.nodeid, (rows * cols + offset,))
    shape = (rows * cols,) if name == "vector_add_vec4" else (rows, cols)
    a_view, b_view = (cupy.asarray(x)[offset:].reshape(shape) for x in (a, b))
    out = cupy.full(rows * cols + offset, np.nan, np.float32)[offset:].reshape(shape)  # poisoned, unaligned
    add(name, a_view, b_view, out=out)
    cupy.cuda.runtime.deviceSynchronize()
    assert np.array_equal(out.get(), (a[offset:] + b[offset:]).reshape(shape))


@pytest.mark.parametrize("chunks", [1, 4, 7, 16])
def test_vector_add_streams_is_exact(chunks, request):
    n = 10_000_003  # no chunk count above divides it
    a, b, out = pinned_empty(n), pinned_empty(n), pinned_empty(n)
    a[:], b[:] = random_pair(request.node.nodeid, (n,))
    out[:] = np.nan
    vector_add_streams(a, b, chunks, out)
    assert np.array_equal(out, a + b)


def test_vector_add_streams_refuses_pageable_memory():
    n = 1000
    a, b, out = np.ones(n, np.float32), np.ones(n, np.float32), pinned_empty(n)
    with pytest.raises(ValueError, match="pinned"):
        vector_add_streams(a, b, 4, out)


@pytest.mark.parametrize("memory", ["pageable", "pinned"])
def test_add_host_routine_is_exact(memory, request):
    shape = (1023, 1025)
    a, b = random_pair(request.node.nodeid, shape)
    if memory == "pinned":
        a_p, b_p, out = pinned_empty(shape), pinned_empty(shape), pinned_empty(shape)
        a_p[:], b_p[:] = a, b
        result = add_host("matrix_add_2d", a_p, b_p, out=out)
    else:
        result = add_host("matrix_add_2d", a, b)
    assert np.array_equal(result, a + b)


@pytest.mark.parametrize("name", [name for name in ELEMENTWISE_KERNELS if ELEMENTWISE_KERNELS[name].function])
def test_a_build_described_without_a_gpu_is_the_one_the_prepared_add_gives(name):
    """kernels.build_for (the kernel library's: the cause cards of stored runs) against what a prepared add reports,
    at the shape string its timed case records."""
    from kernels import build_for, prepare_add
    from suites.perf_cases import random_device

    for side in (1024, 1030):
        shape = (side * side,) if ELEMENTWISE_KERNELS[name].ndim == 1 else (side, side)
        prepared = prepare_add(name, random_device(shape, 1), random_device(shape, 2))
        assert build_for(name, "x".join(map(str, shape))) == prepared.build(), (name, shape)
