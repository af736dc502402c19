"""A stand-in for CuPy's CUDA runtime as src/kernelwatch/timing/gpu.py reads it (device count, driver and runtime
versions, the CUDA error it raises), for the tests of cuda_available and gpu_info on a CPU machine."""

from __future__ import annotations

import sys
import types

from kernelwatch.timing import gpu


class FakeCudaError(Exception):
    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


def fake_cupy(monkeypatch, count=None, error=None, driver=12080, runtime=13000, driver_present=True):
    """A stand-in for CuPy whose getDeviceCount returns ``count`` or raises ``error``."""

    def get_device_count():
        if error is not None:
            raise error
        return count

    runtime_module = types.SimpleNamespace(getDeviceCount=get_device_count, driverGetVersion=lambda: driver,
                                           runtimeGetVersion=lambda: runtime)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime_module)))
    if driver_present:
        monkeypatch.setattr(gpu, "nvidia_driver_present", lambda: True)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
