"""GPU time of the adds against the device copy bandwidth, and of the streams pipeline
against the overlap bound from the pinned copy bandwidths, all measured in this run."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import chunk_bounds, overlap_bound_seconds, pinned_empty, prepare_add
from kernels.streams import D2H_BYTES_PER_ELEMENT, H2D_BYTES_PER_ELEMENT, PreparedStreams
from suites.perf_cases import ADD_SIDES, STREAM_FLOATS, random_device, repeat_count, repeated

pytestmark = [pytest.mark.gpu, pytest.mark.perf]

MATRIX_ADDS = ["matrix_add_2d", "matrix_add_2d_vec4", "cupy_add"]
VECTOR_ADDS = ["vector_add", "vector_add_vec4"]


def pytest_generate_tests(metafunc):
    if "side" in metafunc.fixturenames:
        sides = ADD_SIDES[metafunc.config.getoption("profile")]
        metafunc.parametrize("side", sides, ids=[f"{s}x{s}" for s in sides])


@pytest.mark.parametrize("name", MATRIX_ADDS + VECTOR_ADDS)
def test_add_time(gpu_bench, ceilings, name, side):
    gpu_bench.benchmark.group = f"add {side}x{side}"
    shape = (side, side) if name in MATRIX_ADDS else (side * side,)
    prepared = prepare_add(name, random_device(shape, 1), random_device(shape, 2))
    gpu_bench.time(repeated(prepared.run, repeat_count(name)), bytes_moved=prepared.bytes_moved,
                   ceiling=("device copy", ceilings.copy_bytes_per_s),
                   extra={"kernel": name, "shape": "x".join(map(str, shape))})


@pytest.mark.parametrize("chunks", [1, 4, 8, 16], ids=lambda c: f"chunks={c}")
def test_vector_add_streams_time(gpu_bench, ceilings, chunks):
    """Seed 002's case: 10 M floats; chunks=1 is the one-stream comparison, 4 the seed's."""
    gpu_bench.benchmark.group = "vector_add_streams 4x2.5M"
    n = STREAM_FLOATS
    a, b, out = pinned_empty(n), pinned_empty(n), pinned_empty(n)
    a[:] = np.random.default_rng(1).random(n, dtype=np.float32)
    b[:] = np.random.default_rng(2).random(n, dtype=np.float32)
    prepared = PreparedStreams(a, b, out, chunks)
    # the copy engines' time for exactly this pipeline's transfers, measured now
    chunk_bytes = max(stop - start for start, stop in chunk_bounds(n, chunks)) * 4
    h2d_all = ceilings.host_copy_seconds(True, chunk_bytes, 2 * chunks)
    d2h_all = ceilings.host_copy_seconds(False, chunk_bytes, chunks)
    bound = overlap_bound_seconds(chunks, h2d_all, d2h_all)
    bytes_moved = n * (H2D_BYTES_PER_ELEMENT + D2H_BYTES_PER_ELEMENT)
    gpu_bench.time(prepared.run, flush=False, bytes_moved=bytes_moved,
                   ceiling=(f"overlap bound, {chunks} chunk(s)", bytes_moved / bound),
                   extra={"chunks": chunks, "overlap_bound_s": bound, "h2d_all_s": h2d_all, "d2h_all_s": d2h_all,
                          "h2d_gbps": 2 * chunks * chunk_bytes / h2d_all / 1e9,
                          "d2h_gbps": chunks * chunk_bytes / d2h_all / 1e9})
    assert np.array_equal(out, a + b), "the timed pipeline computed a wrong sum"
