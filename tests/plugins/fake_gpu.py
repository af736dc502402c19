"""A fake device layer for driving the suite's pytest plugin end to end on a CPU.

Load with `-p tests.plugins.fake_gpu` (beside harness.plugin). It answers the
`pytest_kernel_suite_device` hook with a GPU that exists only here: its timer
returns deterministic samples instead of timing anything. A case's median is
fixed by its node id; `--fake-gpu-slowdown=PATTERN:FACTOR` multiplies the
samples of matching cases; `--fake-gpu-seed` changes the sample noise (a
different run); `--fake-gpu-uuid` plays another host of the same model.
"""

from __future__ import annotations

import fnmatch
import zlib

import numpy as np
import pytest

from harness.timing.gpu import ClockState, GpuInfo
from harness.timing.timer import TIMER_CUPTI, Measurement

FAKE_NAME = "Fake GPU 9000"
NOISE = 0.003  # relative spread of the fake samples: a quiet GPU


def pytest_addoption(parser):
    group = parser.getgroup("fake gpu (tests only)")
    group.addoption("--fake-gpu-slowdown", action="append", default=[], help="PATTERN:FACTOR")
    group.addoption("--fake-gpu-seed", type=int, default=0)
    group.addoption("--fake-gpu-uuid", default="GPU-00000000-fake-0000-0000-000000000001")
    group.addoption("--fake-gpu-samples", type=int, default=20)


def fake_info(uuid: str) -> GpuInfo:
    return GpuInfo(name=FAKE_NAME, slug=FAKE_NAME.replace(" ", "_"), uuid=uuid, host="fakehost", cuda_device=0,
                   pci_bus_id="0000:00:00.0", compute_capability="9.0", multiprocessors=132, l2_bytes=60 << 20,
                   memory_bytes=141 << 30, driver="580.00", cuda_runtime="13.0", cuda_driver_api="13.0",
                   cupy="fake", sm_clock_max_mhz=1980, memory_clock_max_mhz=3201, memory_bus_width_bits=6144,
                   nvml=True)


class FakeTimer:
    """Samples around a per-case median, with NOISE spread; nothing is run."""

    uses_cupti = True
    note = ""

    def __init__(self, config):
        self.slowdowns = []
        for spec in config.getoption("fake_gpu_slowdown"):
            pattern, _, factor = spec.rpartition(":")
            self.slowdowns.append((pattern, float(factor)))
        self.seed = config.getoption("fake_gpu_seed")
        self.count = config.getoption("fake_gpu_samples")

    def measure(self, run, profile, flush=True, case=""):
        median = 100e-6 * (1 + zlib.crc32(case.encode()) % 5)
        for pattern, factor in self.slowdowns:
            if fnmatch.fnmatch(case, pattern):
                median *= factor
        rng = np.random.default_rng([zlib.crc32(case.encode()), self.seed])
        samples = list(median * (1 + NOISE * rng.standard_normal(self.count)))
        return Measurement(samples=samples, stopped_by="noise", timer=TIMER_CUPTI, event_samples=[])


class FakeDevice:
    available = True
    why_not = ""

    def __init__(self, config):
        self.config = config
        self._info = fake_info(config.getoption("fake_gpu_uuid"))

    def info(self):
        return self._info

    def model_names(self):
        return {FAKE_NAME}

    def pin_worker(self):
        pass

    def use_exact_allocations(self):
        pass

    def make_timer(self):
        return FakeTimer(self.config)

    def clock_state(self):
        return ClockState(1980, 0)


@pytest.hookimpl(tryfirst=True)
def pytest_kernel_suite_device(config):
    return FakeDevice(config)
