"""GPU time of the adds against the device copy bandwidth, and of the streams pipeline
against the overlap bound from the pinned copy bandwidths, all measured in this run."""

from __future__ import annotations

import numpy as np
import pytest

from kernels import (
    ELEMENTWISE_KERNELS,
    chunk_bounds,
    overlap_bound_seconds,
    pinned_empty,
    prepare_add,
    vector_add_streams,
)
from kernels.streams import D2H_BYTES_PER_ELEMENT, H2D_BYTES_PER_ELEMENT, PreparedStreams
from suites.perf_cases import ADD_SIDES, STREAM_FLOATS, datasheet_rates, random_device

pytestmark = [pytest.mark.gpu, pytest.mark.perf]


def pytest_generate_tests(metafunc):
    if "side" in metafunc.fixturenames:
        sides = ADD_SIDES[metafunc.config.getoption("kernelwatch_profile")]
        metafunc.parametrize("side", sides, ids=[f"{s}x{s}" for s in sides])


@pytest.mark.parametrize("name", list(ELEMENTWISE_KERNELS))
def test_add_time(kernelwatch_bench, kernelwatch_ceilings, kernelwatch_gpu, name, side):
    kernelwatch_bench.benchmark.group = f"add {side}x{side}"
    # vector kernels add the same number of elements as a flat vector
    shape = (side * side,) if ELEMENTWISE_KERNELS[name].ndim == 1 else (side, side)
    prepared = prepare_add(name, random_device(shape, 1), random_device(shape, 2))
    kernelwatch_bench.time(prepared, kernel=name, shape="x".join(map(str, shape)), bytes_moved=prepared.bytes_moved,
                   ceiling=("device copy", lambda: kernelwatch_ceilings.copy_bytes_per_s), datasheet_rate=datasheet_rates(kernelwatch_gpu)[1])


@pytest.mark.parametrize("chunks", [1, 4, 8, 16], ids=lambda c: f"chunks={c}")
def test_vector_add_streams_time(kernelwatch_bench, kernelwatch_ceilings, chunks):
    """The cuda-notes-ch5 case: 10 M floats; chunks=1 is the one-stream comparison, 4 the tutorial's."""
    n = STREAM_FLOATS
    # one group for every chunk count, side by side in pytest-benchmark's table
    kernelwatch_bench.benchmark.group = f"vector_add_streams {n / 1e6:g}M floats"
    a, b, out = pinned_empty(n), pinned_empty(n), pinned_empty(n)
    a[:] = np.random.default_rng(1).random(n, dtype=np.float32)
    b[:] = np.random.default_rng(2).random(n, dtype=np.float32)
    prepared = PreparedStreams(a, b, out, chunks)
    prepared.poison()
    vector_add_streams(a, b, chunks, out)  # the same pipeline, run once and checked before it is timed
    assert np.array_equal(out, a + b), "the pipeline computed a wrong sum"
    bytes_moved = n * (H2D_BYTES_PER_ELEMENT + D2H_BYTES_PER_ELEMENT)
    params = {"chunks": chunks}

    def overlap_bound_rate():
        """The copy engines' time for exactly this pipeline's transfers, measured now."""
        chunk_bytes = max(stop - start for start, stop in chunk_bounds(n, chunks)) * 4
        h2d_all = kernelwatch_ceilings.host_copy_seconds(True, chunk_bytes, 2 * chunks)
        d2h_all = kernelwatch_ceilings.host_copy_seconds(False, chunk_bytes, chunks)
        bound = overlap_bound_seconds(chunks, h2d_all, d2h_all)
        params.update(overlap_bound_s=bound, h2d_all_s=h2d_all, d2h_all_s=d2h_all)
        return bytes_moved / bound

    # host memory, not DRAM, bounds this case: no datasheet rate applies
    kernelwatch_bench.time(prepared, flush=False, kernel="vector_add_streams", shape=f"{n}", bytes_moved=bytes_moved,
                   ceiling=(f"overlap bound, {chunks} chunk(s)", overlap_bound_rate), params=params)
