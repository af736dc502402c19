"""The machine's CUDA device as the plugin sees it: the default device layer.

The plugin asks its `pytest_kernelwatch_device` hook (hookspecs.py) for a
device layer; this is the default one. A self-test gives another (a fake GPU,
tests/plugins/fake_gpu.py) through the same hook, so product code holds no
switch for its own tests.
"""

from __future__ import annotations

from kernelwatch.plugin.xdist import pin_worker_to_device
from kernelwatch.timing.gpu import ClockState, GpuInfo, clock_state, cuda_available, gpu_info


class CudaDevice:
    """The machine's CUDA device as the suite sees it (the default device layer)."""

    def __init__(self):
        self.available, self.why_not = cuda_available()

    def info(self) -> GpuInfo:
        return gpu_info()

    def model_names(self) -> set[str]:
        """The names of every visible CUDA device (several workers must share one model)."""
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
        names = (cupy.cuda.runtime.getDeviceProperties(i)["name"] for i in range(count))
        return {name.decode() if isinstance(name, bytes) else str(name) for name in names}

    def pin_worker(self) -> None:
        """In an xdist worker, take the worker's own GPU before any CUDA context exists."""
        pin_worker_to_device()

    def use_exact_allocations(self) -> None:
        """One cudaMalloc per array (no memory pools), so that compute-sanitizer sees exact bounds."""
        import cupy

        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)

    def make_timer(self):
        from kernelwatch.timing.timer import GpuTimer  # imports CuPy: only where a GPU is

        return GpuTimer(gpu_info().l2_bytes)

    def make_energy_meter(self):
        """(kernelwatch.timing.energy.EnergyMeter, "") or (None, why energy cannot be measured on this GPU)."""
        from kernelwatch.timing.energy import EnergyMeter, open_power

        power, why_not = open_power()
        return (EnergyMeter(power), "") if power is not None else (None, why_not)

    def synchronize(self) -> None:
        """Wait for all work queued on the device, on every stream (an asynchronous launch error surfaces here)."""
        import cupy

        cupy.cuda.runtime.deviceSynchronize()

    def clock_state(self) -> ClockState:
        return clock_state()
