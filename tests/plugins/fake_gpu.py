"""A fake device layer for driving the suite's pytest plugin end to end on a CPU.

Load with `-p tests.plugins.fake_gpu` (beside kernelwatch.plugin). It answers the
`pytest_kernelwatch_device` hook with a GPU that exists only here: its timer
returns deterministic samples instead of timing anything. A case's median is
fixed by its node id; `--fake-gpu-slowdown=PATTERN:FACTOR` multiplies the
samples of matching cases (under `--kernelwatch-compare-ref`, the head side's); `--fake-gpu-seed` changes the sample noise (a
different run); `--fake-gpu-uuid` plays another host of the same model.
Its energy meter gives windows of 300 W over each launch's fake time;
`--fake-gpu-energy=PATTERN:FACTOR` multiplies the joules of matching cases (not
their time), and `--fake-gpu-no-energy` plays a GPU without an energy counter.
A host routine (wall clock) is cut into fake phases: a 100 µs kernel and copies
of 50 µs each way (`--fake-gpu-kernel-phase=PATTERN:FACTOR` multiplies the
kernel's), the host the rest.
Its timer's stream is a context manager that runs nothing (`current` says whether it is entered), and
`--fake-gpu-cupy` installs a NumPy-backed stand-in for CuPy (tests/plugins/fake_cupy.py) for the run, so that a
project's CuPy kernels (examples/cupy) launch on the CPU.
"""

from __future__ import annotations

import fnmatch
import sys
import zlib

import numpy as np
import pytest

from kernelwatch.timing.energy import DEFAULT_PLAN, EnergyMeasurement
from kernelwatch.timing.gpu import ClockState, GpuInfo
from kernelwatch.timing.power_trace import PowerWindow
from kernelwatch.timing.timer import TIMER_CUPTI, Measurement

FAKE_NAME = "Fake GPU 9000"
NOISE = 0.003  # relative spread of the fake samples: a quiet GPU


def pytest_addoption(parser):
    group = parser.getgroup("fake gpu (tests only)")
    group.addoption("--fake-gpu-slowdown", action="append", default=[], help="PATTERN:FACTOR")
    group.addoption("--fake-gpu-seed", type=int, default=0)
    group.addoption("--fake-gpu-uuid", default="GPU-00000000-fake-0000-0000-000000000001")
    group.addoption("--fake-gpu-samples", type=int, default=20)
    group.addoption("--fake-gpu-energy", action="append", default=[], help="PATTERN:FACTOR")
    group.addoption("--fake-gpu-no-energy", action="store_true")
    group.addoption("--fake-gpu-kernel-phase", action="append", default=[], help="PATTERN:FACTOR")
    group.addoption("--fake-gpu-energy-noise", type=float, default=0.002, help="the windows' relative spread")
    group.addoption("--fake-gpu-cupy", action="store_true",
                    help="`cupy` is a NumPy-backed stand-in for this run (tests/plugins/fake_cupy.py)")


REAL_CUPY = pytest.StashKey[object]()


@pytest.hookimpl(tryfirst=True)  # before kernelwatch's: it imports the project's kernel library, which imports cupy
def pytest_configure(config):
    if config.getoption("fake_gpu_cupy"):
        from tests.plugins import fake_cupy

        fakes = fake_cupy.modules()
        config.stash[REAL_CUPY] = {name: sys.modules.get(name) for name in fakes}
        sys.modules.update(fakes)


def pytest_unconfigure(config):
    for name, real in config.stash.get(REAL_CUPY, {}).items():
        if real is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = real


def fake_info(uuid: str) -> GpuInfo:
    return GpuInfo(name=FAKE_NAME, slug=FAKE_NAME.replace(" ", "_"), uuid=uuid, host="fakehost", cuda_device=0,
                   pci_bus_id="0000:00:00.0", compute_capability="9.0", multiprocessors=132, l2_bytes=60 << 20,
                   memory_bytes=141 << 30, driver="580.00", cuda_runtime="13.0", cuda_driver_api="13.0",
                   nvrtc="13.0", cupy="fake", sm_clock_max_mhz=1980, memory_clock_max_mhz=3201, memory_bus_width_bits=6144,
                   power_limit_w=700.0, nvml=True)


def factors(specs: list[str]) -> list[tuple[str, float]]:
    return [(pattern, float(factor)) for pattern, _, factor in (spec.rpartition(":") for spec in specs)]


def factor_of(case: str, patterns: list[tuple[str, float]]) -> float:
    factor = 1.0
    for pattern, each in patterns:
        if fnmatch.fnmatch(case, pattern):
            factor *= each
    return factor


class FakeEnergyMeter:
    """Six windows of half a second at WATTS over each launch's time, with `--fake-gpu-energy-noise` spread,
    six more at a time (up to the real meter's plan) while `enough` says no; nothing runs."""

    WATTS = 300.0

    def __init__(self, config):
        self.factors = factors(config.getoption("fake_gpu_energy"))
        self.seed = config.getoption("fake_gpu_seed")
        self.noise = config.getoption("fake_gpu_energy_noise")
        self.seconds = 0.0  # the time a real meter would have spent: half a second a window

    def _spent(self, measurement: EnergyMeasurement) -> EnergyMeasurement:
        self.seconds += 0.5 * len(measurement.windows)
        return measurement

    def _measurement(self, case: str, launch_s: float, windows: int, salt: int, added: int = 0) -> EnergyMeasurement:
        rng = np.random.default_rng([zlib.crc32(case.encode()), self.seed, salt])
        per_launch = self.WATTS * launch_s * factor_of(case, self.factors)
        launches = 0.5 / launch_s
        found = tuple(PowerWindow(i * 0.5, (i + 1) * 0.5, per_launch * launches * (1 + self.noise * noise),
                             launches) for i, noise in enumerate(rng.standard_normal(windows)))
        return EnergyMeasurement(found, "a fake replay", 60.0, (40.0, 41.0), 700.0, (1980,), windows_added=added)

    def measure(self, run, stream, launch_s, plan=DEFAULT_PLAN, case="", enough=None):
        count = plan.windows
        while enough is not None and count < plan.windows + plan.extra_windows and not enough(
                self._measurement(case, launch_s, count, 0).joules_per_launch):
            count += min(plan.windows, plan.windows + plan.extra_windows - count)
        return self._spent(self._measurement(case, launch_s, count, 0, added=count - plan.windows))

    def measure_interleaved(self, run_a, run_b, stream, launch_a_s, launch_b_s, pairs, plan=None, case=""):
        base = self._spent(self._measurement("base", launch_a_s, pairs, 1))
        return base, self._spent(self._measurement(case, launch_b_s, pairs, 2))


class FakeStream:
    """The fake timer's stream, entered as CuPy's is (`with stream:`); nothing runs on it."""

    ptr = 0

    def __init__(self):
        self.current = False

    def __enter__(self):
        self.current = True
        return self

    def __exit__(self, *exc):
        self.current = False

    def synchronize(self):
        pass


class FakeTimer:
    """Samples around a per-case median, with NOISE spread; nothing is run."""

    uses_cupti = True
    note = ""

    def __init__(self, config):
        self.stream = FakeStream()
        self.config = config
        self.slowdowns = factors(config.getoption("fake_gpu_slowdown"))
        self.seed = config.getoption("fake_gpu_seed")
        self.count = config.getoption("fake_gpu_samples")

    def _measurement(self, case: str, factor: float, *salt: int) -> Measurement:
        median = 100e-6 * (1 + zlib.crc32(case.encode()) % 5) * factor
        rng = np.random.default_rng([zlib.crc32(case.encode()), self.seed, *salt])
        samples = list(median * (1 + NOISE * rng.standard_normal(self.count)))
        return Measurement(samples=samples, stopped_by="noise", timer=TIMER_CUPTI, event_samples=[])

    def measure(self, run, profile, flush=True, case=""):
        return self._measurement(case, factor_of(case, self.slowdowns))

    def measure_interleaved(self, run_a, run_b, profile, flush=True, case=""):
        """--kernelwatch-compare-ref's base (a) and head (b): the case's median on both sides, each with noise of
        its own; --fake-gpu-slowdown slows the head alone."""
        return self._measurement(case, 1.0, 1), self._measurement(case, factor_of(case, self.slowdowns), 2)

    def phase_recorder(self):
        return FakePhaseRecorder(self.config)


class FakePhaseRecorder:
    """Phases of a host routine's wall-clock samples: HtoD, kernel and DtoH of fixed medians with NOISE spread,
    the host the rest of each sample; nothing is recorded."""

    def __init__(self, config):
        self.kernel_factors = factors(config.getoption("fake_gpu_kernel_phase"))
        self.seed = config.getoption("fake_gpu_seed")
        self.marks = 0

    def start(self):
        self.marks = 0

    def mark(self):
        self.marks += 1

    def phases(self, wall_s, case):
        assert self.marks == len(wall_s), "a mark before every sample"
        rng = np.random.default_rng([zlib.crc32(case.encode()), self.seed, 7])
        noisy = lambda median: list(median * (1 + NOISE * rng.standard_normal(len(wall_s))))  # noqa: E731
        cut = {"HtoD": noisy(50e-6), "kernel": noisy(100e-6 * factor_of(case, self.kernel_factors)),
               "DtoH": noisy(50e-6)}
        cut["host"] = [max(0.0, wall - sum(phase[i] for phase in cut.values())) for i, wall in enumerate(wall_s)]
        return cut

    def stop(self):
        pass


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

    def make_energy_meter(self):
        if self.config.getoption("fake_gpu_no_energy"):
            return None, "the fake GPU has no energy counter"
        return FakeEnergyMeter(self.config), ""

    def clock_state(self):
        return ClockState(1980, 0)

    def synchronize(self):
        pass


@pytest.hookimpl(tryfirst=True)
def pytest_kernelwatch_device(config):
    return FakeDevice(config)
