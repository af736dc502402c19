import pytest
import torch
from vector_add import add

N = 1 << 24


@pytest.mark.kernelwatch(bytes=3 * 4 * N, seed=0)  # reads x and y, writes out: float32; inputs from seed 0
def test_add(kernelwatch):
    seeded = torch.Generator("cuda").manual_seed(0)
    x, y = torch.rand(N, device="cuda", generator=seeded), torch.rand(N, device="cuda", generator=seeded)
    out = torch.empty_like(x)
    kernelwatch(lambda: add(x, y, out), out=out, reference=lambda: x.double() + y.double())
