"""The example project's kernel library: SAXPY as a CuPy RawKernel (saxpy.cu beside this file)."""

from pathlib import Path

import cupy
import numpy as np

THREADS = 256
KERNEL = cupy.RawKernel(Path(__file__).with_name("saxpy.cu").read_text(), "saxpy")


def saxpy(a, x, y, out):
    """out = a * x + y (float32 vectors), launched on CuPy's current stream."""
    n = x.size
    KERNEL(((n + THREADS - 1) // THREADS,), (THREADS,), (np.int32(n), np.float32(a), x, y, out))
