"""Test-only: slow chosen timed cases down by a calibrated percentage, on a real GPU.

    pytest suites -m perf -p tests.plugins.slowdown --slow-down='*warptile_128x256*:3' --benchmark-compare

PATTERN (fnmatch on the test's node id) : PERCENT. Each matching GPU-timed case
is first measured as it is (median m0), then timed slowed so that its GPU time
is PERCENT % more than m0 (tests/plugins/spin_injection.py):

* a case of the suite's own kernels is prepared again by a copy of the
  `kernels` package whose kernels begin with a spin, and timed with the spin
  found to add PERCENT % (`calibrate` measures the case at each spin it tries);
* a library's case (cuBLAS, CuPy's add) or a plain run gets a one-thread spin
  kernel appended on the same stream, found the same way. Where appending
  a spin of 0 cycles already adds more than PERCENT %, the case gets that: the
  summary and the record say which slowdown the calibration measured.

The spin is counted in SM cycles, and the first one tried is sized from the SM
clock the GPU runs at now (a GPU held at a lower clock would spin longer than
asked): the median of the clocks read while the case was measured, else NVML's
clock read after it (`clock_state()` of the device layer), else the GPU's
maximum; a usage error when none is known. A case that does not slow down at
all however long the spin (nothing that the timer sees ran it) fails its test.

Wall-clock host routines are left alone. The product code has no switch for
this: the plugin wraps the `kernelwatch_bench` fixture's `time` method, and the slowed
copy of the kernels is prepared through `same_case_in`, as `--kernelwatch-compare-ref`
prepares a base side.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from maintainers.support.spin_kernel import APPEND_SOURCE
from tests.plugins.spin_injection import Calibration, SlowedKernels, calibrate, slows_inside, spin_unseen

# the calibration's own measurements: the session's profile, capped shorter (several per case);
# a launch with host copies still gets the timer's longer window (Profile.for_host_copies)
CALIBRATION_TIME_CAP_S = 0.2


def pytest_addoption(parser):
    group = parser.getgroup("slow-down (tests only)")
    group.addoption("--slow-down", action="append", default=[], metavar="PATTERN:PERCENT",
                    help="add PERCENT of GPU time to the timed cases whose node id matches PATTERN")
    group.addoption("--slow-down-spins", type=Path, default=None, metavar="FILE",
                    help="JSON file of the spins found per case on this GPU: read as each search's first guess, "
                         "updated after it (repeated runs search less)")


@dataclass
class Injection:
    case: str
    percent: float
    unslowed_median_s: float
    inside: bool  # a spin in the case's own kernels; else a spin kernel appended
    calibration: Calibration

    @property
    def measured_percent(self) -> float:
        return 100 * (self.calibration.median_s / self.unslowed_median_s - 1)


class SlowDown:
    """The session's spin kernel, its slowed copy of the kernels, and the injections made."""

    def __init__(self, timer, profile, device, gpu, spins_file: Path | None = None):
        import cupy

        self.timer, self.profile, self.device, self.gpu = timer, profile, device, gpu
        self.spins_file = spins_file
        self.spins: dict[str, int] = {}  # case -> cycles found, from earlier runs on this GPU
        if spins_file is not None and spins_file.exists():
            self.spins = {case: int(cycles) for case, cycles in json.loads(spins_file.read_text()).items()}
        self.calibration_profile = dataclasses.replace(profile, time_cap=min(profile.time_cap,
                                                                             CALIBRATION_TIME_CAP_S))
        self.sm_clock_mhz([])  # a GPU whose clock cannot be known is refused before anything is timed
        self.kernel = cupy.RawKernel(APPEND_SOURCE, "spin")
        self.slowed_kernels: SlowedKernels | None = None  # made at the first case of our own kernels
        self.injections: list[Injection] = []

    def appended(self, run, cycles: int):
        """`run`, then the spin kernel for `cycles` SM cycles on the same stream."""
        def run_then_spin(stream):
            run(stream)
            with stream:
                self.kernel((1,), (1,), (np.int64(cycles),))

        return run_then_spin

    def sm_clock_mhz(self, sampled: list[int]) -> int:
        """The SM clock the spin will run at: see the module's docstring."""
        if sampled:
            return int(statistics.median(sampled))
        now = self.device.clock_state().sm_clock_mhz
        if now:
            return now
        if self.gpu.sm_clock_max_mhz:
            return self.gpu.sm_clock_max_mhz
        raise pytest.UsageError(f"--slow-down: the SM clock of {self.gpu.name} is unknown (NVML reads neither the "
                                "current nor the maximum clock), so a spin of a given time cannot be sized")

    def slowed(self, name: str, case, percent: float, flush: bool):
        """A run of `case` (a prepared case or a plain run) slowed by `percent` of its GPU time."""
        run = case.run if hasattr(case, "run") else case
        unslowed = self.timer.measure(run, self.profile, flush=flush)
        inside = slows_inside(case)
        if inside:
            if self.slowed_kernels is None:
                self.slowed_kernels = SlowedKernels()
            slowed_case = self.slowed_kernels.prepare(case)

            def median_at(cycles: int) -> float:
                self.slowed_kernels.set_spin(slowed_case, cycles)
                return self.timer.measure(slowed_case.run, self.calibration_profile, flush=flush).median
        else:
            def median_at(cycles: int) -> float:
                return self.timer.measure(self.appended(run, cycles), self.calibration_profile, flush=flush).median

        clock_hz = self.sm_clock_mhz(unslowed.sm_clock_mhz) * 1e6
        found = calibrate(median_at, unslowed.median, percent, clock_hz, first_guess=self.spins.get(name) or None)
        self.injections.append(Injection(name, percent, unslowed.median, inside, found))
        if spin_unseen(found, percent):
            pytest.fail(f"--slow-down: {name} did not slow down by half of {percent:g}% at any spin tried "
                        f"({', '.join(f'{c} cycles: {m * 1e6:.2f} µs' for c, m in found.tried)}); "
                        f"the timer does not see the spin", pytrace=False)
        if self.spins_file is not None and not found.least:  # a spin that worked: the next run's first guess
            self.spins[name] = found.cycles
            self.spins_file.write_text(json.dumps(self.spins, indent=1, sort_keys=True))
        if inside:
            self.slowed_kernels.set_spin(slowed_case, found.cycles)
            return slowed_case.run
        return self.appended(run, found.cycles)

    def close(self) -> None:
        if self.slowed_kernels is not None:
            self.slowed_kernels.close()


SESSION = pytest.StashKey[SlowDown]()


def _percent_for(config, nodeid: str) -> float | None:
    for spec in config.getoption("slow_down"):
        pattern, _, percent = spec.rpartition(":")
        if fnmatch.fnmatch(nodeid, pattern):
            return float(percent)
    return None


@pytest.fixture(autouse=True)
def _slow_down_matching_cases(request):
    percent = _percent_for(request.config, request.node.nodeid)
    if percent is None or "kernelwatch_bench" not in request.fixturenames:
        yield
        return
    bench = request.getfixturevalue("kernelwatch_bench")
    stash = request.config.stash
    if SESSION not in stash:
        stash[SESSION] = SlowDown(bench.timer, bench.state.measuring.profile, bench.state.device, request.getfixturevalue("kernelwatch_gpu"),
                                  request.config.getoption("slow_down_spins"))
    slowdown = stash[SESSION]
    time_unslowed = bench.time

    def time_slowed(case, **options):
        if options.get("wall"):
            return time_unslowed(case, **options)
        slowed = slowdown.slowed(request.node.nodeid, case, percent, options.get("flush", True))
        injection = slowdown.injections[-1]
        # the injection goes into the case's record, so that a table can tell the slowdown from the
        # process's own offset (maintainers/experiments/sensitivity_table.py); the suite's own params dict is updated
        # in place, since a case may still fill it in when its ceiling is measured
        params = options.get("params")
        if params is None:
            params = options["params"] = {}
        params.update(slowed_by_percent=float(percent), unslowed_median_s=injection.unslowed_median_s,
                      spin_cycles=injection.calibration.cycles, spin_inside=injection.inside,
                      calibrated_percent=injection.measured_percent)
        return time_unslowed(slowed, **options)

    bench.time = time_slowed
    yield


def pytest_unconfigure(config):
    slowdown = config.stash.get(SESSION, None)
    if slowdown is not None:
        slowdown.close()


def pytest_terminal_summary(terminalreporter):
    slowdown = terminalreporter.config.stash.get(SESSION, None)
    if slowdown is None or not slowdown.injections:
        return
    terminalreporter.section("slow-down (tests.plugins.slowdown)")
    terminalreporter.write_line(f"{len(slowdown.injections)} case(s) slowed:")
    for injection in slowdown.injections:
        how = "a spin in its kernels" if injection.inside else "a spin kernel appended"
        found = injection.calibration
        note = " (the least possible: appending costs that much)" if found.least else ""
        terminalreporter.write_line(
            f"  {injection.case}: +{injection.percent:g}% of {injection.unslowed_median_s * 1e6:.1f} µs by {how}, "
            f"{found.cycles} cycles, calibrated +{injection.measured_percent:.2f}% in {len(found.tried)} "
            f"tries{note}")
