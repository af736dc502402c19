"""Test-only: slow chosen timed cases down by a calibrated percentage, on a real GPU.

    pytest suites -m perf -p tests.plugins.slowdown --slow-down='*warptile_128x256*:3' --benchmark-compare

PATTERN (fnmatch on the test's node id) : PERCENT. For each matching GPU-timed
case, the run that `gpu_bench.time` measures gets a spin kernel appended on
the same stream, sized so that the case's GPU time grows by PERCENT:

1. once per session, the cost of appending a spin of 0 cycles is measured
   (the gap between two kernels plus the shortest spin: `append_cost`);
2. per case, the case is measured as it is (median m0); the spin then runs
   for C = (PERCENT/100 * m0 - append_cost) * SM clock cycles. Where that is
   negative (a case so short that PERCENT of it is less than the append
   cost), the spin is 0 cycles and the summary says which least slowdown
   was injected instead.

Wall-clock host routines are left alone. The product code has no switch for
this: the plugin wraps the fixture's `time` method.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np
import pytest

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


class SlowDown:
    """The session's spin kernel and its calibration."""

    def __init__(self, timer, profile, sm_clock_mhz: int):
        import cupy

        self.timer, self.profile, self.clock_hz = timer, profile, sm_clock_mhz * 1e6
        self.kernel = cupy.RawKernel(SPIN_SOURCE, "spin")
        alone = timer.measure(self.spinner(0), profile).median
        twice = timer.measure(self.appended(self.spinner(0), 0), profile).median
        self.append_cost_s = twice - alone
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

    def slowed(self, case: str, run, percent: float, flush: bool):
        """`run` with a spin appended that adds `percent` of its GPU time (at least the append cost)."""
        median = self.timer.measure(run, self.profile, flush=flush).median
        wanted = percent / 100 * median - self.append_cost_s
        cycles = max(0, int(wanted * self.clock_hz))  # below the append cost: the least possible slowdown
        self.injections.append(Injection(case, percent, median, cycles))
        return self.appended(run, cycles)


_SESSION: dict[str, SlowDown] = {}


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
    if "slowdown" not in _SESSION:
        gpu = request.getfixturevalue("gpu")
        _SESSION["slowdown"] = SlowDown(bench.timer, bench.state.profile, gpu.sm_clock_max_mhz)
    slowdown = _SESSION["slowdown"]
    time_unslowed = bench.time

    def time_slowed(case, **options):
        if options.get("wall"):
            return time_unslowed(case, **options)
        run = case.run if hasattr(case, "run") else case  # a prepared case or a plain run
        slowed = slowdown.slowed(request.node.nodeid, run, percent, options.get("flush", True))
        return time_unslowed(slowed, **options)

    bench.time = time_slowed
    yield


def pytest_terminal_summary(terminalreporter):
    slowdown = _SESSION.get("slowdown")
    if slowdown is None or not slowdown.injections:
        return
    terminalreporter.section("slow-down (tests.plugins.slowdown)")
    terminalreporter.write_line(f"appending a kernel costs {slowdown.append_cost_s * 1e6:.2f} µs; "
                                f"{len(slowdown.injections)} case(s) slowed:")
    for injection in slowdown.injections:
        least = slowdown.append_cost_s / injection.unslowed_median_s
        note = f" (the least possible here: +{100 * least:.1f}%)" if injection.spin_cycles == 0 else ""
        terminalreporter.write_line(f"  {injection.case}: +{injection.percent:g}% of "
                                    f"{injection.unslowed_median_s * 1e6:.1f} µs ({injection.spin_cycles} cycles){note}")
