"""Test-only: slow chosen timed cases down by a calibrated percentage, on a real GPU.

    pytest suites -m perf -p tests.plugins.slowdown --slow-down='*warptile_128x256*:3' --benchmark-compare

PATTERN (fnmatch on the test's node id) : PERCENT. For each matching GPU-timed
case, the run that `gpu_bench.time` measures gets a spin kernel appended on
the same stream, sized so that the case's GPU time grows by PERCENT:

1. once per session, the cost of appending a spin of 0 cycles is measured
   (the gap between two kernels plus the shortest spin: `append_cost`), for
   each timer the cases may get: CUPTI records a launch of 20 µs or more
   with another kernel kind than a shorter one (harness/timing.py), and the
   gap differs between them, so once after a spin too short for that kind
   and once after one long enough;
2. per case, the case is measured as it is (median m0); the spin then runs
   for C = (PERCENT/100 * m0 - append_cost of m0's timer) * SM clock cycles. Where that is
   negative (a case so short that PERCENT of it is less than the append
   cost), the spin is 0 cycles and the summary says which least slowdown
   was injected instead.

The SM clock is the one the GPU runs at now, not its maximum (a GPU held at
a lower clock would spin longer than asked): the median of the clocks read
while the case was measured, else NVML's clock read after it (the device
layer's `clock_state()`, harness.gpu.clock_state on a real GPU), else the
GPU's maximum; a usage error when none is known.

Wall-clock host routines are left alone. The product code has no switch for
this: the plugin wraps the fixture's `time` method.
"""

from __future__ import annotations

import fnmatch
import statistics
from dataclasses import dataclass

import numpy as np
import pytest

from harness.timing import SERIAL_KIND_FROM

SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""


def pytest_addoption(parser):
    parser.getgroup("slow-down (tests only)").addoption(
        "--slow-down", action="append", default=[], metavar="PATTERN:PERCENT",
        help="add PERCENT of GPU time to the timed cases whose node id matches PATTERN")


@dataclass
class Injection:
    case: str
    percent: float
    unslowed_median_s: float
    spin_cycles: int
    append_cost_s: float


class SlowDown:
    """The session's spin kernel and its calibration."""

    def __init__(self, timer, profile, device, gpu):
        import cupy

        self.timer, self.profile, self.device, self.gpu = timer, profile, device, gpu
        self.sm_clock_mhz([])  # a GPU whose clock cannot be known is refused before anything is timed
        self.kernel = cupy.RawKernel(SPIN_SOURCE, "spin")
        self.append_cost_s: dict[str, float] = {}  # timer -> cost of appending a spin of 0 cycles
        for seconds in (0.0, 2 * SERIAL_KIND_FROM):
            cycles = int(seconds * self.sm_clock_mhz([]) * 1e6)
            alone = timer.measure(self.spinner(cycles), profile)
            twice = timer.measure(self.appended(self.spinner(cycles), 0), profile)
            self.append_cost_s[alone.timer] = twice.median - alone.median
        self.injections: list[Injection] = []

    def spinner(self, cycles: int):
        def spin(stream):
            with stream:
                self.kernel((1,), (1,), (np.int64(cycles),))

        return spin

    def appended(self, run, cycles: int):
        spin = self.spinner(cycles)

        def run_then_spin(stream):
            run(stream)
            spin(stream)

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

    def slowed(self, case: str, run, percent: float, flush: bool):
        """`run` with a spin appended that adds `percent` of its GPU time (at least the append cost)."""
        unslowed = self.timer.measure(run, self.profile, flush=flush)
        if unslowed.timer not in self.append_cost_s:
            raise pytest.UsageError(f"--slow-down: {case} was timed by {unslowed.timer}, for which no append cost "
                                    f"was measured (only {', '.join(self.append_cost_s)})")
        append_cost = self.append_cost_s[unslowed.timer]
        wanted = percent / 100 * unslowed.median - append_cost
        clock_hz = self.sm_clock_mhz(unslowed.sm_clock_mhz) * 1e6
        cycles = max(0, int(wanted * clock_hz))  # below the append cost: the least possible slowdown
        self.injections.append(Injection(case, percent, unslowed.median, cycles, append_cost))
        return self.appended(run, cycles)


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
    if percent is None or "gpu_bench" not in request.fixturenames:
        yield
        return
    bench = request.getfixturevalue("gpu_bench")
    stash = request.config.stash
    if SESSION not in stash:
        stash[SESSION] = SlowDown(bench.timer, bench.state.profile, bench.state.device, request.getfixturevalue("gpu"))
    slowdown = stash[SESSION]
    time_unslowed = bench.time

    def time_slowed(case, **options):
        if options.get("wall"):
            return time_unslowed(case, **options)
        run = case.run if hasattr(case, "run") else case  # a prepared case or a plain run
        slowed = slowdown.slowed(request.node.nodeid, run, percent, options.get("flush", True))
        injection = slowdown.injections[-1]
        # the injection goes into the case's record, so that a table can tell the slowdown from the
        # process's own offset (scripts/sensitivity_table.py); the suite's own params dict is updated
        # in place, since a case may still fill it in when its ceiling is measured
        params = options.get("params")
        if params is None:
            params = options["params"] = {}
        params.update(slowed_by_percent=float(percent), unslowed_median_s=injection.unslowed_median_s,
                      spin_cycles=injection.spin_cycles)
        return time_unslowed(slowed, **options)

    bench.time = time_slowed
    yield


def pytest_terminal_summary(terminalreporter):
    slowdown = terminalreporter.config.stash.get(SESSION, None)
    if slowdown is None or not slowdown.injections:
        return
    terminalreporter.section("slow-down (tests.plugins.slowdown)")
    costs = ", ".join(f"{cost * 1e6:.2f} µs ({timer})" for timer, cost in slowdown.append_cost_s.items())
    terminalreporter.write_line(f"appending a kernel costs {costs}; {len(slowdown.injections)} case(s) slowed:")
    for injection in slowdown.injections:
        least = injection.append_cost_s / injection.unslowed_median_s
        note = f" (the least possible here: +{100 * least:.1f}%)" if injection.spin_cycles == 0 else ""
        terminalreporter.write_line(f"  {injection.case}: +{injection.percent:g}% of "
                                    f"{injection.unslowed_median_s * 1e6:.1f} µs ({injection.spin_cycles} cycles){note}")
