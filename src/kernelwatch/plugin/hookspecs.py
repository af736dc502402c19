"""Hooks kernelwatch's plugin calls, for other plugins to implement."""

import pytest


@pytest.hookspec(firstresult=True)
def pytest_kernelwatch_device(config):
    """Return the device layer the suite measures on.

    The default (src/kernelwatch/plugin/__init__.py) returns `kernelwatch.plugin.device.CudaDevice()`. An
    implementation provides `available` and `why_not`, and the methods
    `info()`, `model_names()`, `pin_worker()`, `use_exact_allocations()`,
    `make_timer()`, `make_energy_meter()`, `clock_state()` and `synchronize()` of that class; its
    timer has a `stream` (the kernelwatch fixture makes it current around each launch).
    """
