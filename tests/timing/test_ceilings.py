"""What the timer and the ceilings ask of CuPy, recorded by a fake of it on this CPU machine.

The GPU tests (suites/test_harness_on_gpu.py) show the effects on one GPU: the held stream, the L2
flush, the ceilings' figures. What they cannot show is what holds on another GPU (a flush buffer
for an L2 larger than the H200's) or what no figure reveals (a copy out of its buffer, a copy the
wrong way round at a rate alike both ways, a sample's work queued out of order, a hold that timed
out): those are checked here, call by call.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from kernelwatch.timing import ceilings as ceilings_module
from kernelwatch.timing import timer as timer_module
from kernelwatch.timing.ceilings import COPY_BYTES, datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s
from kernelwatch.timing.profile import PROFILES

MiB = 2**20


class FakePinnedMemory:
    """Mapped pinned host memory at a fake address (CuPy's PinnedMemory)."""

    def __init__(self, size, flags):
        self.size, self.flags, self.ptr = size, flags, 0x7000_0000


class FakePointer(bytearray):
    """A place in pinned memory (CuPy's PinnedMemoryPointer): its buffer runs from `ptr` to the end of the
    allocation, as CuPy's does. It holds the bytes themselves, which the host's numpy view and the fake GPU share."""

    def __init__(self, memory, offset):
        super().__init__(memory.size - offset)
        self.mem, self.ptr = memory, memory.ptr + offset


class IllegalAddress(Exception):
    """What CUDA reports when a kernel reads or writes a word outside its allocation or off a 4-byte boundary."""


def word(pointer: FakePointer, address) -> slice:
    """The bytes of `pointer` that the GPU reads or writes as the 32-bit word at `address`."""
    address, start, end = int(address), pointer.mem.ptr, pointer.mem.ptr + pointer.mem.size
    if address % 4 or not start <= address <= end - 4:
        raise IllegalAddress(f"{address:#x} is no word of the pinned allocation [{start:#x}, {end:#x})")
    return slice(address - pointer.ptr, address - pointer.ptr + 4)


class FakeStream(types.SimpleNamespace):
    """A CUDA stream; `with stream:` makes it the current one, as CuPy's does."""

    def __enter__(self):
        self.previous, self.made.current = self.made.current, self
        return self

    def __exit__(self, *exc):
        self.made.current = self.previous
        return False

    def synchronize(self):
        self.made.log.append(("synchronize", self))


def fake_cupy(monkeypatch) -> types.SimpleNamespace:
    """A fake CuPy recording what is asked of it. Its GPU runs the hold kernel when an event is waited for: the
    kernel gives up and sets its timeout word (kernels.cu) where the release word is still 0 then, or where the
    launches behind it took longer to queue (`made.enqueue_ns`) than its timeout. Events' times are
    `made.elapsed_ms` apart."""
    made = types.SimpleNamespace(streams=[], ones=[], copies=[], device_arrays=[], launches=[], log=[], holds=[],
                                 pinned=None, enqueue_ns=0, elapsed_ms=1.0)
    made.current = FakeStream(non_blocking=False, ptr=0, made=made)  # CuPy's default stream

    def released():  # the release word (the first) as the host last wrote it; None before it exists
        return None if made.pinned is None else int.from_bytes(made.pinned[:4], "little")

    def stream(non_blocking=False):
        made.streams.append(non_blocking)
        return FakeStream(non_blocking=non_blocking, ptr=0, made=made)

    def device_array(count, dtype=np.float32):
        if isinstance(count, tuple) and all(isinstance(side, int) for side in count):  # a shape
            count = int(np.prod(count))
        if not isinstance(count, int):  # cupy._core.internal.get_size
            raise ValueError("size should be None, collections.abc.Sequence, or int")
        array = types.SimpleNamespace(size=count, nbytes=count * np.dtype(dtype).itemsize,
                                      data=types.SimpleNamespace(ptr=0x1000_0000 * (1 + len(made.device_arrays))))
        made.device_arrays.append(array)
        return array

    def ones(count, dtype=np.float32):
        made.ones.append(count)
        return device_array(count, dtype)

    def pinned_pointer(memory, offset):
        made.pinned = FakePointer(memory, offset)
        return made.pinned

    def function(name):
        def launch(grid, block, args):
            made.launches.append((name, grid, block, args))
            made.log.append(("launch", name, made.current, released()))
            if name == "hold_stream":
                made.holds.append(args)
        return launch

    class Event:
        def record(self, stream=None):
            made.log.append(("record", self, stream, released()))

        def synchronize(self):
            for release, timeout_ns, timed_out in made.holds:
                if made.pinned[word(made.pinned, release)] == bytes(4) or made.enqueue_ns > int(timeout_ns):
                    made.pinned[word(made.pinned, timed_out)] = (1).to_bytes(4, "little")
            made.holds.clear()
            made.log.append(("synchronize", self, released()))

    def elapsed_time(start, stop):
        assert start is not stop and isinstance(start, Event) and isinstance(stop, Event)
        return made.elapsed_ms

    runtime = types.SimpleNamespace(hostAllocMapped=2, memcpyHostToDevice=1, memcpyDeviceToHost=2,
                                    memcpyAsync=lambda dst, src, size, kind, stream: made.copies.append(
                                        (dst, src, size, kind)))
    module = types.SimpleNamespace(get_function=function)
    cuda = types.SimpleNamespace(
        Stream=stream, Event=Event, runtime=runtime, get_current_stream=lambda: made.current,
        get_elapsed_time=elapsed_time, PinnedMemory=FakePinnedMemory, PinnedMemoryPointer=pinned_pointer,
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


@pytest.mark.parametrize("l2_mib", [4, 32, 40, 50, 96, 126, 256])
def test_the_flush_buffer_is_twice_the_l2_or_64_mib_on_any_gpu(made, l2_mib):
    """Twice the L2 (timer.py's docstring, docs/method.md), never under the 64 MiB floor (docs/method.md#flush-buffer) and no larger:
    the buffer keeps that much device memory from the cases for the whole run."""
    timer_module.GpuTimer(l2_mib * MiB, prefer_cupti=False)
    assert made.ones == [max(2 * l2_mib, 64) * MiB // 4]  # floats, a whole number of them (CuPy takes no other)


def test_the_flush_reads_its_whole_buffer_and_nothing_past_its_end(made):
    timer = timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    timer.flush_l2()
    ((name, grid, block, (buffer, n4, _)),) = made.launches
    assert name == "flush_l2" and buffer is made.device_arrays[0] and made.ones == [buffer.size]
    # the kernel reads float4s (src/kernelwatch/timing/kernels.cu): n4 of 16 bytes each span the buffer exactly
    assert int(n4) * 16 == buffer.nbytes
    # and strides by x alone: a launch of more than one dimension would read every float4 once per y and z
    assert grid[1:] == block[1:] == (1, 1) and block[0] % 32 == 0
    assert grid[0] == 4 * 132  # four blocks on each of the fake GPU's SMs: every SM reads its share


def sample_of_a_kernel(made, timer, flush=True, enqueue_ns=0):
    """One sample of a run that launches `kernel` on the stream it is given (taking `enqueue_ns` to queue)."""
    def run(stream):
        made.enqueue_ns = enqueue_ns
        with stream:
            sys.modules["cupy"].RawModule().get_function("kernel")((1, 1, 1), (1, 1, 1), ())

    return timer.sample(run, flush) if flush is not None else timer.sample(run)


def test_a_sample_holds_the_stream_until_its_stop_event_is_queued_and_gives_seconds(made):
    timer = timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    made.elapsed_ms = 2.5
    seconds = sample_of_a_kernel(made, timer)
    start, stop = (entry[1] for entry in made.log if entry[0] == "record")
    # the flush, the hold, the start event, the launch under test and the stop event, in that order on the
    # timer's stream; the release word reads 0 until all of them are queued, and not 0 (the hold's release: any
    # value but 0, kernels.cu) when the stop event is waited for
    assert [entry[:2] for entry in made.log] == [("launch", "flush_l2"), ("launch", "hold_stream"), ("record", start),
                                              ("launch", "kernel"), ("record", stop), ("synchronize", stop)]
    assert [entry[2] for entry in made.log[:-1]] == [timer.stream] * 5
    assert [entry[-1] != 0 for entry in made.log] == [False] * 5 + [True]
    assert seconds == pytest.approx(2.5e-3, rel=1e-12)  # CUDA's milliseconds, in seconds
    # one thread spins on the release word: a grid or block of no thread would launch nothing, and hold nothing
    assert [(grid, block) for name, grid, block, _ in made.launches if name == "hold_stream"] == [((1, 1, 1), (1, 1, 1))]


@pytest.mark.parametrize("flush", [None, True, False], ids=["default", "flush", "no flush"])
def test_a_sample_flushes_the_l2_first_unless_told_not_to(made, flush):
    timer = timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    sample_of_a_kernel(made, timer, flush)
    assert [name for name, *_ in made.launches] == ["flush_l2"] * (flush is not False) + ["hold_stream", "kernel"]


def test_a_hold_that_gives_up_before_the_release_raises_and_the_next_sample_is_timed(made):
    """A launch that takes longer than the hold's 2 s to queue is not timed from a held stream: an error, not a
    figure. The timeout is the hold's own (its word reset for every sample), so the next sample goes on."""
    timer = timer_module.GpuTimer(50 * MiB, prefer_cupti=False)
    with pytest.raises(RuntimeError, match="longer than 2 s to enqueue; the held stream timed out"):
        sample_of_a_kernel(made, timer, enqueue_ns=3 * 10**9)
    made.elapsed_ms = 4.0
    assert sample_of_a_kernel(made, timer, enqueue_ns=10**9) == pytest.approx(4e-3, rel=1e-12)


class FakeTimer:
    def measure(self, run, profile, flush=True, case=""):
        run(types.SimpleNamespace(ptr=0))
        return types.SimpleNamespace(median=1e-3)


@pytest.mark.parametrize("to_device", [True, False], ids=["to device", "to host"])
@pytest.mark.parametrize("count", [1, 4, 16])
def test_host_copies_move_each_chunk_once_within_both_buffers_and_the_asked_way(made, monkeypatch, to_device,
                                                                                 count):
    allocations = []

    def alloc_pinned_memory(size):  # CuPy's pinned allocator: a buffer of `size` bytes
        allocations.append(bytearray(size))
        return allocations[-1]

    sys.modules["cupy"].cuda.alloc_pinned_memory = alloc_pinned_memory
    chunk = 64 * 1024
    assert ceilings_module.Ceilings(FakeTimer(), PROFILES["quick"]).host_copy_seconds(to_device, chunk, count) == 1e-3
    (device,) = made.device_arrays
    (memory,) = allocations
    host = np.frombuffer(memory, np.uint8)  # the pinned allocation itself: the copies' host side lies in it
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


class FakeRandom:
    """cupy.random.default_rng's generator: notes the operands' shapes and dtypes."""

    def __init__(self, made):
        self.made = made

    def random(self, shape, dtype):
        self.made.operands.append((shape, np.dtype(dtype)))
        return types.SimpleNamespace(shape=shape)


def fake_matmul(made, monkeypatch):
    cupy = sys.modules["cupy"]
    made.operands, made.products = [], []
    monkeypatch.setattr(cupy, "random", types.SimpleNamespace(default_rng=lambda seed: FakeRandom(made)), raising=False)
    monkeypatch.setattr(cupy, "matmul", lambda a, b, out: made.products.append((a.shape, b.shape, out.size, made.current)),
                        raising=False)


def test_the_cublas_ceiling_is_cupys_matmul_of_float32_operands_on_the_timers_stream_once_a_shape(made, monkeypatch):
    fake_matmul(made, monkeypatch)
    monkeypatch.delenv("CUPY_TF32", raising=False)
    stream = FakeStream(non_blocking=True, ptr=7, made=made)

    class StreamTimer:
        def measure(self, run, profile, flush=True, case=""):
            run(stream)
            return types.SimpleNamespace(median=2e-3)

    ceilings = ceilings_module.Ceilings(StreamTimer(), PROFILES["quick"])
    assert ceilings.cublas_flops_per_s(64, 32, 16) == 2.0 * 64 * 32 * 16 / 2e-3
    assert made.operands == [((64, 16), np.dtype(np.float32)), ((16, 32), np.dtype(np.float32))]
    assert made.products == [((64, 16), (16, 32), 64 * 32, stream)]  # into an M x N output, on the timed stream
    assert ceilings.cublas_flops_per_s(64, 32, 16) == 2.0 * 64 * 32 * 16 / 2e-3
    assert len(made.products) == 1  # measured once per shape


def test_the_cublas_ceiling_refuses_tf32(made, monkeypatch):
    fake_matmul(made, monkeypatch)
    monkeypatch.setenv("CUPY_TF32", "1")
    with pytest.raises(RuntimeError, match="CUPY_TF32 is set"):
        ceilings_module.Ceilings(FakeTimer(), PROFILES["quick"]).cublas_flops_per_s(8, 8, 8)
    assert made.products == []
