import cupy as cp
import pytest
from saxpy import Saxpy

N = 1 << 24  # 64 MiB a vector: about 70 µs on an H100, long enough to judge at 2-3%


@pytest.mark.kernelwatch(bytes=3 * 4 * N, seed=0)  # reads x and y, writes out: float32; inputs from seed 0
def test_saxpy(kernelwatch):
    rng = cp.random.default_rng(0)
    x, y = rng.random(N, dtype=cp.float32), rng.random(N, dtype=cp.float32)
    out = cp.empty_like(x)
    kernelwatch(Saxpy(2.0, x, y, out), out=out, reference=lambda: 2.0 * x.astype(cp.float64) + y)
