"""Sizes and shared helpers of the performance suites.

Test ids are baseline keys: runs are matched with their baseline by node id,
so ids are built from registry names and shape strings that never change.
The quick profile (pull requests) runs a subset of the nightly ids, the nightly a
subset of the weekly full profile's.
"""

from __future__ import annotations

import numpy as np

MATMUL_SIZES = {"full": [1000, 1024, 4096, 8192], "nightly": [1000, 1024, 4096, 8192], "quick": [1024, 4096]}
# The tutorials' kernels (naive, Kahan, a row of A in shared memory, 16x16 and 32x32 tiles) take
# 120-310 ms a launch at 8192³: 10.5 s of a 103 s nightly (H200, docs/method.md#nightly-time, 2026-12-01 seventh
# session) for what their 4096³ cases already say, whose 64 MiB operands run far past the 50 MB L2.
# The nightly times them up to this size; the weekly full profile at every size.
TUTORIAL_KERNELS_LARGEST = {"full": 8192, "nightly": 4096, "quick": 4096}
ADD_SIDES = {"full": [1024, 8192], "nightly": [1024, 8192], "quick": [8192]}
STREAM_FLOATS = 4 * 2_500_000  # the cuda-notes-ch5 tutorial's case: four chunks of 2.5 M floats


def matmul_cases(profile: str, kernels) -> list[tuple[int, str]]:
    """(n, kernel name) of every n x n x n case the profile times, `kernels` being the registry's."""
    return [(n, name) for n in MATMUL_SIZES[profile] for name, kernel in kernels.items()
            if not kernel.tutorials or n <= TUTORIAL_KERNELS_LARGEST[profile]]


def random_device(shape, seed: int):
    """Uniform [0, 1) float32 on the device: never time on zeros."""
    import cupy

    return cupy.random.default_rng(seed).random(shape, dtype=np.float32)


def datasheet_rates(gpu) -> tuple[float | None, float | None]:
    """(FP32 FLOP/s, DRAM bytes/s) of the GPU's datasheet; None where unknown."""
    from kernelwatch.timing.ceilings import datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s

    return (datasheet_fp32_flops_per_s(gpu.compute_capability, gpu.multiprocessors, gpu.sm_clock_max_mhz),
            datasheet_memory_bytes_per_s(gpu.memory_clock_max_mhz, gpu.memory_bus_width_bits))
