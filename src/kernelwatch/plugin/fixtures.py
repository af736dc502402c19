"""The fixtures the suites use: kernelwatch (any callable that launches GPU work, checked and timed),
kernelwatch_stream (its stream), kernelwatch_gpu, kernelwatch_timer, kernelwatch_profile, kernelwatch_bench,
kernelwatch_ceilings (and the GPU lock)."""

from __future__ import annotations

import pytest

from kernelwatch.plugin.state import STATE
from kernelwatch.plugin.xdist import gpu_lock


@pytest.fixture(scope="session")
def kernelwatch_gpu(pytestconfig):
    """The GPU's description (kernelwatch.timing.gpu.GpuInfo); skips the test without a CUDA device."""
    state = pytestconfig.stash[STATE]
    if state.measuring.gpu is None:
        pytest.skip(f"needs a CUDA GPU: {state.device.why_not}")
    return state.measuring.gpu


@pytest.fixture(autouse=True)
def _kernelwatch_gpu_lock(request):
    """GPU tests hold their GPU's lock: exclusive while timing (perf), shared otherwise."""
    state = request.config.stash[STATE]
    if "gpu" not in request.keywords or state.measuring.gpu is None:
        yield
        return
    with gpu_lock(state.measuring.gpu.pci_bus_id, exclusive="perf" in request.keywords):
        yield


@pytest.fixture(scope="session")
def kernelwatch_timer(kernelwatch_gpu, pytestconfig):
    """The session's timer (CUPTI kernel time where available, else held CUDA events)."""
    state = pytestconfig.stash[STATE]
    if state.measuring.timer is None:  # a test outside the perf marker asked for it
        state.measuring.timer = state.device.make_timer()
    return state.measuring.timer


@pytest.fixture(scope="session")
def kernelwatch_profile(pytestconfig):
    """The sampling plan of --kernelwatch-profile (kernelwatch.timing.profile.Profile)."""
    return pytestconfig.stash[STATE].measuring.profile


@pytest.fixture
def kernelwatch_bench(benchmark, kernelwatch_timer, pytestconfig):
    """Times a case on the GPU, records it with pytest-benchmark and judges it (kernelwatch.plugin.timed_case)."""
    from kernelwatch.plugin.timed_case import TimedCase

    return TimedCase(benchmark, kernelwatch_timer, pytestconfig.stash[STATE])


@pytest.fixture
def kernelwatch(kernelwatch_bench, request):
    """`kernelwatch(launch, out=..., reference=..., tolerance=..., flops=..., bytes=...)`: checks a callable that
    launches GPU work against a float64 reference, then times and judges it (kernelwatch.plugin.launch,
    docs/adopting.md). Settings also come from `@pytest.mark.kernelwatch(...)`."""
    from kernelwatch.plugin.accuracy import AccuracyChecks
    from kernelwatch.plugin.launch import Launch

    return Launch(kernelwatch_bench, request.config.stash[STATE].device, request.node,
                  AccuracyChecks(request.config.stash[STATE], request.node))


@pytest.fixture
def kernelwatch_accuracy(request):
    """`kernelwatch_accuracy.record(errors, tolerance=..., shape=..., kind=..., seed=...)`: a correctness check's
    errors recorded with the run and judged against this GPU's history (kernelwatch.plugin.accuracy)."""
    from kernelwatch.plugin.accuracy import AccuracyChecks

    return AccuracyChecks(request.config.stash[STATE], request.node)


@pytest.fixture
def kernelwatch_stream(kernelwatch_timer):
    """The stream the kernelwatch fixture launches on, current for CuPy and PyTorch around each launch: a CuPy
    stream, whose `.ptr` (its cudaStream_t) a callable that names its stream takes (Numba, cuda-python)."""
    return kernelwatch_timer.stream


def pytest_itemcollected(item):
    """A test of the kernelwatch fixture is a GPU test and a timed one (skipped without a GPU, selected by -m perf)."""
    if "kernelwatch" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.gpu)
        item.add_marker(pytest.mark.perf)


@pytest.fixture(scope="session")
def kernelwatch_ceilings(kernelwatch_timer, kernelwatch_profile):
    """Hardware ceilings measured in this run (kernelwatch.timing.ceilings.Ceilings)."""
    from kernelwatch.timing.ceilings import Ceilings

    return Ceilings(kernelwatch_timer, kernelwatch_profile)
