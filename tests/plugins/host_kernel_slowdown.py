"""Test-only: slow the matrix product inside chosen host routines by a percentage of its GPU time, on a real GPU.

    pytest suites -m perf -p tests.plugins.host_kernel_slowdown --slow-host-kernel='*pinned*:10' ...

PATTERN (fnmatch on the test's node id) : PERCENT. While a matching test runs,
every launch of a matrix product (kernels.matmul.PreparedMatmul.run, which the
host routines of kernels/host.py call) is followed on its stream by a
one-thread spin kernel (maintainers/support/spin_kernel.py) of PERCENT % of that
product's GPU time: measured with CUDA events over 20 launches at the first
call, turned into SM cycles at the GPU's maximum clock (the clock an H200 holds
under this load). The host routine's kernel phase then grows by PERCENT %; its
copies and its host phase are left as they are. The product code has no
switch for this.
"""

from __future__ import annotations

import fnmatch
import statistics

import numpy as np
import pytest

from maintainers.support.spin_kernel import APPEND_SOURCE

TIMING_LAUNCHES = 20


def pytest_addoption(parser):
    group = parser.getgroup("slow-host-kernel (tests only)")
    group.addoption("--slow-host-kernel", action="append", default=[], metavar="PATTERN:PERCENT",
                    help="add PERCENT of its GPU time to the matrix product inside the host routines matching PATTERN")


def pytest_configure(config):
    """A spec that is no PATTERN:PERCENT with a positive PERCENT is a usage error, before anything runs."""
    for spec in config.getoption("slow_host_kernel"):
        pattern, _, percent = spec.rpartition(":")
        try:
            valid = bool(pattern) and float(percent) > 0
        except ValueError:
            valid = False
        if not valid:
            raise pytest.UsageError(f"--slow-host-kernel {spec!r}: give PATTERN:PERCENT, PERCENT a positive number")


def percent_for(nodeid: str, specs: list[str]) -> float | None:
    for spec in specs:
        pattern, _, percent = spec.rpartition(":")
        if fnmatch.fnmatch(nodeid, pattern):
            return float(percent)
    return None


def gpu_time_s(run, stream) -> float:
    import cupy

    times = []
    for _ in range(TIMING_LAUNCHES):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        run(stream)
        stop.record(stream)
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    percent = percent_for(item.nodeid, item.config.getoption("slow_host_kernel"))
    if percent is None:
        return (yield)
    import cupy

    from kernels.matmul import PreparedMatmul  # the package's `matmul` is a function: import the class

    spin = cupy.RawKernel(APPEND_SOURCE, "spin")
    clock_hz = cupy.cuda.Device().attributes["ClockRate"] * 1e3
    original = PreparedMatmul.run
    cycles: dict[tuple, int] = {}  # per product (a routine prepares a new one each call): its spin

    def run_then_spin(self, stream=None):
        stream = stream if stream is not None else cupy.cuda.get_current_stream()
        key = (self.kernel.name, self.m, self.n, self.k)
        if key not in cycles:  # at the routine's first call: a warm-up, outside its samples
            cycles[key] = int(percent / 100 * gpu_time_s(lambda s: original(self, s), stream) * clock_hz)
        original(self, stream)
        with stream:
            spin((1,), (1,), (np.int64(cycles[key]),))

    PreparedMatmul.run = run_then_spin
    try:
        return (yield)
    finally:
        PreparedMatmul.run = original
        item.user_properties.append(("host_kernel_spin_cycles", sorted(set(cycles.values()))))
