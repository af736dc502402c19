"""A fake `cupti` module for the timer's tests on a CPU machine (tests/timing/): FakeCupti keeps the enabled
activity kinds and hands its records over on flush; the fake_cupti fixture builds a GpuTimer on it, samples simulated."""

from __future__ import annotations

import ctypes
import enum
import sys
import types

import pytest

import kernelwatch.timing.timer as timing
from kernelwatch.timing.gpu import ClockState
from kernelwatch.timing.timer import GpuTimer


class FakeCupti:
    """Stands in for `cupti.cupti`: keeps enabled kinds, hands records over on flush."""

    class ActivityKind(enum.IntEnum):
        MEMCPY = 1
        MEMSET = 2
        KERNEL = 3
        CONCURRENT_KERNEL = 10

    class ActivityMemcpyKind(enum.IntEnum):
        HTOD = 1
        DTOD = 8

    def __init__(self, refuse: Exception | None = None):
        self.refuse = refuse
        self.enabled: set[int] = set()
        self.calls: list[tuple[str, int]] = []
        self.pending: list = []
        self.completed = None
        self.now_ns = 1_000_000

    def activity_register_callbacks(self, requested, completed):
        self.requested, self.completed = requested, completed

    def activity_enable(self, kind):
        if self.refuse:
            raise self.refuse
        self.enabled.add(int(kind))
        self.calls.append(("enable", int(kind)))

    def activity_disable(self, kind):
        self.enabled.discard(int(kind))
        self.calls.append(("disable", int(kind)))

    def activity_flush_all(self, flag):
        self.calls.append(("flush", flag))
        records, self.pending = self.pending, []
        if records:
            self.completed(records)

    def activity_get_num_dropped_records(self, context, stream_id, dropped_ptr):
        self.calls.append(("dropped", (context, stream_id)))
        ctypes.c_size_t.from_address(dropped_ptr).value = 0

    def kernel(self, name: str, ns: int) -> None:
        """A kernel of `ns` nanoseconds runs now, back to back with the last; recorded only while
        kernels are being recorded."""
        kernel_kinds = self.enabled & {int(self.ActivityKind.KERNEL), int(self.ActivityKind.CONCURRENT_KERNEL)}
        assert len(kernel_kinds) <= 1, "CUPTI refuses the two kernel kinds at once"
        for kind in kernel_kinds:
            self.pending.append(types.SimpleNamespace(kind=kind, name=name, start=self.now_ns, end=self.now_ns + ns))
        self.now_ns += ns

    def copy_beside(self, ns: int, copy_kind: int = 8) -> None:
        """A copy (device to device unless `copy_kind` says otherwise) of `ns` nanoseconds that ran
        beside the last kernel (another stream), ending with it."""
        if int(self.ActivityKind.MEMCPY) in self.enabled:
            self.pending.append(types.SimpleNamespace(kind=int(self.ActivityKind.MEMCPY), copy_kind=copy_kind,
                                                      name="", start=self.now_ns - ns, end=self.now_ns))


EVENT_COST_NS = 2_000  # what the held events add to each sample in this fake


@pytest.fixture
def fake_cupti(monkeypatch):
    """A GpuTimer built on a fake cupti, without a GPU: samples are simulated."""
    fake = FakeCupti()
    package = types.ModuleType("cupti")
    package.cupti = fake
    monkeypatch.setitem(sys.modules, "cupti", package)
    monkeypatch.setattr(GpuTimer, "_open_device", lambda self, l2_bytes: setattr(
        self, "stream", types.SimpleNamespace(synchronize=lambda: None)))
    monkeypatch.setattr(timing, "clock_state", lambda: ClockState(None, None))

    def sample(self, run, flush=True):
        if flush:
            fake.kernel("flush_l2", 3_000)
        fake.kernel("hold_stream", 10_000)
        started = fake.now_ns
        run(self.stream)
        return (fake.now_ns - started + EVENT_COST_NS) * 1e-9

    monkeypatch.setattr(GpuTimer, "sample", sample)
    return fake
