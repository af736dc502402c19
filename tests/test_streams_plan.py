import pytest

from kernels import choose_chunks, chunk_bounds, overlap_bound_seconds


def test_chunks_cover_the_vector_when_the_count_does_not_divide_it():
    bounds = chunk_bounds(10, 3)
    assert bounds == [(0, 4), (4, 7), (7, 10)]
    assert chunk_bounds(10_000_003, 4)[-1][1] == 10_000_003


def test_one_chunk_is_the_whole_vector():
    assert chunk_bounds(5, 1) == [(0, 5)]


def test_chunk_count_is_checked():
    with pytest.raises(ValueError):
        chunk_bounds(3, 4)


def test_overlap_bound_with_equal_bandwidths():
    # 10 M floats: 80 MB in, 40 MB out at 50 GB/s each way -> 1.6 ms + 0.8 ms / chunks
    assert overlap_bound_seconds(10_000_000, 4, 50e9, 50e9) == pytest.approx(1.6e-3 + 0.2e-3)
    assert overlap_bound_seconds(10_000_000, 1, 50e9, 50e9) == pytest.approx(2.4e-3)


def test_overlap_bound_when_the_way_back_is_slower():
    # device-to-host at a quarter of the speed dominates
    bound = overlap_bound_seconds(10_000_000, 4, 50e9, 12.5e9)
    assert bound == pytest.approx(0.4e-3 + 3.2e-3)


def test_chunk_choice_keeps_copies_large():
    assert choose_chunks(10_000_000) == 16  # seed 002's 40 MB vectors: 2.5 MB chunks
    assert choose_chunks(1000) == 1
    assert choose_chunks(1 << 30) == 32


def test_datasheet_peaks_from_chip_structure():
    from harness.ceilings import datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s

    # H100/H200 SXM: 132 SMs x 128 lanes x 2 x 1980 MHz = 66.9 TFLOP/s
    assert datasheet_fp32_flops_per_s("9.0", 132, 1980) == pytest.approx(66.9e12, rel=1e-3)
    assert datasheet_fp32_flops_per_s("3.5", 15, 1000) is None
    assert datasheet_memory_bytes_per_s(3201, 6144) == pytest.approx(4.917e12, rel=1e-3)
    assert datasheet_memory_bytes_per_s(None, 6144) is None


def test_duplex_rate_below_the_sum_raises_the_bound():
    one_way = overlap_bound_seconds(10_000_000, 16, 50e9, 50e9)
    # both directions together at 60 GB/s instead of 100: the overlapped 115 MB take longer
    duplex = overlap_bound_seconds(10_000_000, 16, 50e9, 50e9, 60e9)
    assert duplex == pytest.approx((120e6 - 2.5e6) / 60e9 + 2.5e6 / 50e9)
    assert duplex > one_way
    # a duplex rate at the sum of the one-way rates changes nothing
    assert overlap_bound_seconds(10_000_000, 16, 50e9, 50e9, 100e9) == pytest.approx(one_way)
