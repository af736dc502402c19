import pytest
import torch
from vector_add import add

N = 1 << 24


@pytest.mark.kernelwatch(bytes=3 * 4 * N)  # reads x and y, writes out: float32
def test_add(kernelwatch):
    x, y = torch.rand(N, device="cuda"), torch.rand(N, device="cuda")
    out = torch.empty_like(x)
    kernelwatch(lambda: add(x, y, out), out=out, reference=lambda: x.double() + y.double())
