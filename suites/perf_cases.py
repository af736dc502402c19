"""Sizes and shared helpers of the performance suites.

Test ids are baseline keys: pytest-benchmark matches a run with its baseline
by node id, so ids are built from registry names and shape strings that never
change. The quick profile (pull requests) runs a subset of the nightly ids.
"""

from __future__ import annotations

import os

import numpy as np

MATMUL_SIZES = {"nightly": [1000, 1024, 4096, 8192], "quick": [1024, 4096]}
ADD_SIDES = {"nightly": [1024, 8192], "quick": [8192]}
STREAM_FLOATS = 4 * 2_500_000  # seed 002: four chunks of 2.5 M floats

# Verdict self-test: KERNEL_SUITE_REPEAT=warptile:2 makes the named kernel's
# timed launch run twice, a slowed variant the regression verdict must flag.
REPEAT_ENV = "KERNEL_SUITE_REPEAT"


def repeat_count(name: str) -> int:
    spec = os.environ.get(REPEAT_ENV, "")
    if not spec:
        return 1
    target, _, count = spec.partition(":")
    try:
        return int(count or 2) if target == name else 1
    except ValueError:
        raise ValueError(f"{REPEAT_ENV} must look like 'kernel:2', got {spec!r}") from None


def repeated(run, count: int):
    if count == 1:
        return run

    def run_repeatedly(stream):
        for _ in range(count):
            run(stream)

    return run_repeatedly


def random_device(shape, seed: int):
    """Uniform [0, 1) float32 on the device: never time on zeros."""
    import cupy

    return cupy.random.default_rng(seed).random(shape, dtype=np.float32)

