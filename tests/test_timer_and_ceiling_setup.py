"""What the timer and the ceilings ask of CuPy, recorded by a fake of it on this CPU machine.

The GPU tests (suites/test_harness_on_gpu.py) show the effects on one GPU: the held stream, the L2
flush, the ceilings' figures. What they cannot show is what holds on another GPU (a flush buffer
for an L2 larger than the H200's) or what no figure reveals (a copy out of its buffer, a copy the
wrong way round at a rate alike both ways): those are checked here, call by call.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from harness.timing import ceilings as ceilings_module
from harness.timing import timer as timer_module
from harness.timing.ceilings import COPY_BYTES, datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s
from harness.timing.profile import PROFILES

MiB = 2**20


class FakePointer(bytearray):
    ptr = 0x7000_0000


class FakeStream(types.SimpleNamespace):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def fake_cupy(monkeypatch) -> types.SimpleNamespace:
    made = types.SimpleNamespace(streams=[], ones=[], copies=[], device_arrays=[], launches=[])

    def stream(non_blocking=False):
        made.streams.append(non_blocking)
        return FakeStream(non_blocking=non_blocking, ptr=0)

    def device_array(count, dtype=np.float32):
        array = types.SimpleNamespace(size=count, nbytes=count * np.dtype(dtype).itemsize,
                                      data=types.SimpleNamespace(ptr=0x1000_0000 * (1 + len(made.device_arrays))))
        made.device_arrays.append(array)
        return array

    def ones(count, dtype=np.float32):
        made.ones.append(count)
        return device_array(count, dtype)

    runtime = types.SimpleNamespace(hostAllocMapped=2, memcpyHostToDevice=1, memcpyDeviceToHost=2,
                                    memcpyAsync=lambda dst, src, size, kind, stream: made.copies.append(
                                        (dst, src, size, kind)))
    module = types.SimpleNamespace(get_function=lambda name: lambda grid, block, args: made.launches.append(
        (name, grid, block, args)))
    cuda = types.SimpleNamespace(
        Stream=stream, Event=object, runtime=runtime,
        PinnedMemory=lambda size, flags: size, PinnedMemoryPointer=lambda memory, offset: FakePointer(memory),
        Device=lambda index=None: types.SimpleNamespace(id=0, attributes={"MultiProcessorCount": 132}))
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        cuda=cuda, ones=ones, zeros=device_array, empty=device_array, RawModule=lambda **kwargs: module))
    timer_module._timer_module.cache_clear()
    return made


@pytest.fixture
def made(monkeypatch):
    yield fake_cupy(monkeypatch)
    timer_module._timer_module.cache_clear()


def test_the_timers_stream_does_not_wait_on_the_legacy_default_stream(made):
    timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    # a blocking stream would serialise with anything queued on CuPy's default (legacy) stream
    assert made.streams == [True]


@pytest.mark.parametrize("l2_mib", [4, 40, 50, 96, 126, 256])
def test_the_flush_buffer_is_at_least_twice_the_l2_on_any_gpu(made, l2_mib):
    timer_module.GpuTimer(l2_mib * MiB, prefer_cupti=False)
    flush_bytes = made.ones[0] * 4
    assert flush_bytes >= 2 * l2_mib * MiB and flush_bytes >= 64 * MiB


def test_the_flush_reads_its_whole_buffer_and_nothing_past_its_end(made):
    timer = timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    timer.flush_l2()
    ((name, _, _, (buffer, n4, _)),) = made.launches
    assert name == "flush_l2" and buffer is made.device_arrays[0] and made.ones == [buffer.size]
    # the kernel reads float4s (harness/timing/kernels.cu): n4 of 16 bytes each span the buffer exactly
    assert int(n4) * 16 == buffer.nbytes


class FakeTimer:
    def measure(self, run, profile, flush=True, case=""):
        run(types.SimpleNamespace(ptr=0))
        return types.SimpleNamespace(median=1e-3)


@pytest.mark.parametrize("to_device", [True, False], ids=["to device", "to host"])
@pytest.mark.parametrize("count", [1, 4, 16])
def test_host_copies_move_each_chunk_once_within_both_buffers_and_the_asked_way(made, monkeypatch, to_device,
                                                                                 count):
    hosts = []

    def pinned_empty(floats, dtype=np.float32):
        hosts.append(np.empty(floats, dtype))
        return hosts[-1]

    monkeypatch.setitem(sys.modules, "kernels.device", types.SimpleNamespace(pinned_empty=pinned_empty))
    chunk = 64 * 1024
    assert ceilings_module.Ceilings(FakeTimer(), PROFILES["quick"]).host_copy_seconds(to_device, chunk, count) == 1e-3
    (host,), (device,) = hosts, made.device_arrays
    host_start, device_start = host.ctypes.data, device.data.ptr
    assert host.nbytes == device.nbytes == chunk * count
    assert len(made.copies) == count
    seen = set()
    for dst, src, size, kind in made.copies:
        h, d = (src, dst) if to_device else (dst, src)
        assert kind == (1 if to_device else 2)
        assert size == chunk
        assert host_start <= h and h + size <= host_start + host.nbytes
        assert device_start <= d and d + size <= device_start + device.nbytes
        assert h - host_start == d - device_start
        seen.add(h - host_start)
    assert seen == {i * chunk for i in range(count)}


# FP32 lanes per SM, CUDA C Programming Guide, "Arithmetic Instructions" throughput table
GUIDE_FP32_LANES = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128,
                    "12.0": 128}


@pytest.mark.parametrize("capability, lanes", sorted(GUIDE_FP32_LANES.items()))
def test_the_datasheet_fp32_peak_is_lanes_times_two_flops_times_sms_times_the_clock(capability, lanes):
    assert datasheet_fp32_flops_per_s(capability, 100, 1000) == 2.0 * lanes * 100 * 1000 * 1e6


@pytest.mark.parametrize("capability", ["6.1", "7.2", "7.6", "8.5", "8.8", "9.1", "11.0"])
def test_a_compute_capability_the_guide_table_does_not_list_has_no_datasheet_peak(capability):
    assert datasheet_fp32_flops_per_s(capability, 100, 1000) is None


def test_the_datasheet_memory_peak_is_double_data_rate_over_the_bus_in_bytes():
    """2 transfers per clock x MHz x 1e6 x bus bits / 8: 1000 MHz over 4096 bits is 1.024 TB/s exactly."""
    assert datasheet_memory_bytes_per_s(1000, 4096) == 2.0 * 1000 * 1e6 * 4096 / 8 == 1.024e12


def test_the_device_copy_ceiling_moves_one_gib_each_way():
    assert COPY_BYTES == 2**30


def test_the_device_copy_ceiling_copies_its_gib_between_two_buffers_of_a_gib(made):
    cupy = sys.modules["cupy"]
    cupy.empty_like = lambda array: cupy.empty(array.size, np.float32)
    cupy.cuda.runtime.memcpyDeviceToDevice = 3
    rate = ceilings_module.Ceilings(FakeTimer(), PROFILES["quick"]).copy_bytes_per_s
    src, dst = made.device_arrays
    assert src.nbytes == dst.nbytes == 2**30  # no larger than the copy: 2 GiB of device memory in all
    assert made.copies == [(dst.data.ptr, src.data.ptr, 2**30, 3)]  # from src to dst, device to device
    assert rate == 2 * 2**30 / 1e-3  # bytes read plus bytes written over the median
