import pytest
import torch

N = 4096


# cuBLAS through PyTorch. A float32 sum of N terms errs by about sqrt(N) roundings: 4 of them at most, 1 on average
@pytest.mark.kernelwatch(flops=2 * N**3, tolerance=(2e-5, 5e-6), seed=0)
def test_matmul(kernelwatch):
    seeded = torch.Generator("cuda").manual_seed(0)
    a, b = torch.rand(N, N, device="cuda", generator=seeded), torch.rand(N, N, device="cuda", generator=seeded)
    out = torch.empty(N, N, device="cuda")
    kernelwatch(lambda: torch.matmul(a, b, out=out), out=out, reference=lambda: a.double() @ b.double())
