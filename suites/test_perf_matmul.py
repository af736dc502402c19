"""GPU time of every matrix-multiply kernel, against cuBLAS measured in the same run."""

from __future__ import annotations

import pytest

from kernels import MATMUL_KERNELS, matmul_host, pinned_empty, prepare_matmul
from suites.perf_cases import datasheet_rates, matmul_cases, random_device

pytestmark = [pytest.mark.gpu, pytest.mark.perf]

HOST_SIZE = 1000  # the matmul-optimisation tutorial's size, timed end to end like its "Time used"


def pytest_generate_tests(metafunc):
    if "n" in metafunc.fixturenames:
        cases = matmul_cases(metafunc.config.getoption("kernelwatch_profile"), MATMUL_KERNELS)
        metafunc.parametrize(("n", "name"), cases, ids=[f"{n}x{n}x{n}-{name}" for n, name in cases])


def test_matmul_time(kernelwatch_bench, kernelwatch_ceilings, kernelwatch_gpu, name, n):
    kernelwatch_bench.benchmark.group = f"matmul {n}x{n}x{n}"
    prepared = prepare_matmul(name, random_device((n, n), 1), random_device((n, n), 2))
    kernelwatch_bench.time(prepared, kernel=name, shape=f"{n}x{n}x{n}", flops=2.0 * n**3,
                   ceiling=("cuBLAS", lambda: kernelwatch_ceilings.cublas_flops_per_s(n, n, n)),
                   datasheet_rate=datasheet_rates(kernelwatch_gpu)[0])


@pytest.mark.parametrize("memory", ["pageable", "pinned"])
@pytest.mark.parametrize("name", list(MATMUL_KERNELS))
def test_matmul_host_routine_time(kernelwatch_bench, kernelwatch_timer, kernelwatch_profile, name, memory):
    """Allocate, copy in, multiply, copy out: wall clock, beside the kernel's own GPU time."""
    import numpy as np

    kernelwatch_bench.benchmark.group = f"matmul host routine {HOST_SIZE}, {memory}"
    rng = np.random.default_rng(3)
    a = rng.random((HOST_SIZE, HOST_SIZE), dtype=np.float32)
    b = rng.random((HOST_SIZE, HOST_SIZE), dtype=np.float32)
    out = np.empty_like(a)
    if memory == "pinned":
        a_p, b_p, out = pinned_empty(a.shape), pinned_empty(b.shape), pinned_empty(a.shape)
        a_p[:], b_p[:] = a, b
        a, b = a_p, b_p

    def kernel_median_s() -> float:
        """The kernel alone, on the GPU's timer: called only when the host routine is timed."""
        prepared = prepare_matmul(name, random_device(a.shape, 1), random_device(b.shape, 2))
        return kernelwatch_timer.measure(prepared.run, kernelwatch_profile).median

    kernelwatch_bench.time(lambda: matmul_host(name, a, b, out=out), wall=True, kernel=name,
                   shape=f"{HOST_SIZE}x{HOST_SIZE}x{HOST_SIZE}", flops=2.0 * HOST_SIZE**3,
                   params={"memory": memory, "kernel_median_s": kernel_median_s})
