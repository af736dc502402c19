"""The fixtures the suites use: gpu, gpu_timer, profile, gpu_bench, ceilings (and the GPU lock)."""

from __future__ import annotations

import pytest

from harness.plugin.state import STATE
from harness.plugin.xdist import gpu_lock


@pytest.fixture(scope="session")
def gpu(pytestconfig):
    """The GPU's description (harness.timing.gpu.GpuInfo); skips the test without a CUDA device."""
    state = pytestconfig.stash[STATE]
    if state.gpu is None:
        pytest.skip(f"needs a CUDA GPU: {state.device.why_not}")
    return state.gpu


@pytest.fixture(autouse=True)
def _gpu_lock(request):
    """GPU tests hold their GPU's lock: exclusive while timing (perf), shared otherwise."""
    state = request.config.stash[STATE]
    if "gpu" not in request.keywords or state.gpu is None:
        yield
        return
    with gpu_lock(state.gpu.pci_bus_id, exclusive="perf" in request.keywords):
        yield


@pytest.fixture(scope="session")
def gpu_timer(gpu, pytestconfig):
    """The session's timer (CUPTI kernel time where available, else held CUDA events)."""
    state = pytestconfig.stash[STATE]
    if state.timer is None:  # a test outside the perf marker asked for it
        state.timer = state.device.make_timer()
    return state.timer


@pytest.fixture(scope="session")
def profile(pytestconfig):
    return pytestconfig.stash[STATE].profile


@pytest.fixture
def gpu_bench(benchmark, gpu_timer, pytestconfig):
    """Times a case on the GPU, records it with pytest-benchmark and judges it (harness.plugin.timed_case)."""
    from harness.plugin.timed_case import TimedCase

    return TimedCase(benchmark, gpu_timer, pytestconfig.stash[STATE])


@pytest.fixture(scope="session")
def ceilings(gpu_timer, profile):
    """Hardware ceilings measured in this run (harness.timing.ceilings.Ceilings)."""
    from harness.timing.ceilings import Ceilings

    return Ceilings(gpu_timer, profile)
