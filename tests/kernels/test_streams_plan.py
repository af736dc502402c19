"""kernels.streams: how the vector add over several streams is cut into chunks, and the overlap it can reach at best."""

import pytest

from kernels import chunk_bounds, overlap_bound_seconds


def test_chunks_cover_the_vector_when_the_count_does_not_divide_it():
    bounds = chunk_bounds(10, 3)
    assert bounds == [(0, 4), (4, 7), (7, 10)]
    assert chunk_bounds(10_000_003, 4)[-1][1] == 10_000_003


def test_one_chunk_is_the_whole_vector():
    assert chunk_bounds(5, 1) == [(0, 5)]


def test_chunk_count_is_checked():
    with pytest.raises(ValueError):
        chunk_bounds(3, 4)


def test_overlap_bound_with_equal_copy_engines():
    # 4 chunks; all inputs take 1.6 ms on the way in, all outputs 0.8 ms back:
    # the last chunk's 0.2 ms return trip cannot be hidden
    assert overlap_bound_seconds(4, 1.6e-3, 0.8e-3) == pytest.approx(1.8e-3)
    assert overlap_bound_seconds(1, 1.6e-3, 0.8e-3) == pytest.approx(2.4e-3)  # one stream: no overlap


def test_overlap_bound_when_the_way_back_is_slower():
    # device-to-host takes 3.2 ms in all: its engine is the bottleneck once the first chunk arrived
    assert overlap_bound_seconds(4, 1.6e-3, 3.2e-3) == pytest.approx(0.4e-3 + 3.2e-3)


def test_overlap_bound_refuses_zero_chunks():
    with pytest.raises(ValueError):
        overlap_bound_seconds(0, 1e-3, 1e-3)


def test_datasheet_peaks_from_chip_structure():
    from kernelwatch.timing.ceilings import datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s

    # H100/H200 SXM: 132 SMs x 128 lanes x 2 x 1980 MHz = 66.9 TFLOP/s
    assert datasheet_fp32_flops_per_s("9.0", 132, 1980) == pytest.approx(66.9e12, rel=1e-3)
    assert datasheet_fp32_flops_per_s("3.5", 15, 1000) is None
    assert datasheet_memory_bytes_per_s(3201, 6144) == pytest.approx(4.917e12, rel=1e-3)
    assert datasheet_memory_bytes_per_s(None, 6144) is None


def test_as_many_chunks_as_elements_gives_one_element_each():
    assert chunk_bounds(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert len(chunk_bounds(16, 16)) == 16
