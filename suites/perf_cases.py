"""Sizes and shared helpers of the performance suites.

Test ids are baseline keys: runs are matched with their baseline by node id,
so ids are built from registry names and shape strings that never change.
The quick profile (pull requests) runs a subset of the nightly ids.
"""

from __future__ import annotations

import numpy as np

MATMUL_SIZES = {"nightly": [1000, 1024, 4096, 8192], "quick": [1024, 4096]}
ADD_SIDES = {"nightly": [1024, 8192], "quick": [8192]}
STREAM_FLOATS = 4 * 2_500_000  # the cuda-notes-ch5 tutorial's case: four chunks of 2.5 M floats


def random_device(shape, seed: int):
    """Uniform [0, 1) float32 on the device: never time on zeros."""
    import cupy

    return cupy.random.default_rng(seed).random(shape, dtype=np.float32)


def datasheet_rates(gpu) -> tuple[float | None, float | None]:
    """(FP32 FLOP/s, DRAM bytes/s) of the GPU's datasheet; None where unknown."""
    from harness.timing.ceilings import datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s

    return (datasheet_fp32_flops_per_s(gpu.compute_capability, gpu.multiprocessors, gpu.sm_clock_max_mhz),
            datasheet_memory_bytes_per_s(gpu.memory_clock_max_mhz, gpu.memory_bus_width_bits))
