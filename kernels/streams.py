"""Vector add over several streams from pinned host memory (cuda-notes-ch5, example 2).

The vector is cut into `chunks` nearly equal pieces; each piece's two
host-to-device copies, its kernel and its device-to-host copy are issued
asynchronously in a stream of its own, so that the copy engines (one per
direction) and the kernel of different pieces overlap. With chunks=1 it is
the same work on one stream, the comparison the tutorial makes.

`run(stream)` forks from `stream` with an event and joins back, so the whole
pipeline can be timed with events on `stream` like any kernel. Host arrays
must be page-locked (`kernels.pinned_empty`): from pageable memory
cudaMemcpyAsync stages through a driver buffer and does not overlap.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from . import checks
from .compile import KernelBuild, get_function
from .device import free_device_bytes, int32, is_pinned
from .elementwise import plan_launch
from .registry import ELEMENTWISE_KERNELS, ELEMENTWISE_SOURCE

H2D_BYTES_PER_ELEMENT = 8  # a and b
D2H_BYTES_PER_ELEMENT = 4  # c
CHUNK_KERNEL = ELEMENTWISE_KERNELS["vector_add"]  # the tutorial's kernel, one element per thread


def chunk_bounds(n: int, chunks: int) -> list[tuple[int, int]]:
    """[start, stop) of each chunk; the first n % chunks chunks are one element longer."""
    checks.check_chunks(chunks, n)
    base, extra = divmod(n, chunks)
    bounds, start = [], 0
    for i in range(chunks):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def overlap_bound_seconds(chunks: int, h2d_all_s: float, d2h_all_s: float) -> float:
    """Least time the pipeline can take with one copy engine per direction.

    h2d_all_s is the time of all the pipeline's host-to-device copies issued
    back to back on one stream (2 x chunks copies of a chunk each), d2h_all_s
    that of its device-to-host copies (chunks copies): measured at the very
    transfer sizes the pipeline uses, so per-copy overheads are included.
    The host-to-device engine must finish every input copy, and the last
    chunk's result can only go back after that (1/chunks of d2h_all_s);
    symmetrically the device-to-host engine cannot start before the first
    chunk's input arrived. Kernels, two orders of magnitude shorter than the
    copies, are left out.
    """
    if chunks < 1:
        raise ValueError(f"chunks must be positive, got {chunks}")
    return max(h2d_all_s + d2h_all_s / chunks, h2d_all_s / chunks + d2h_all_s)


class PreparedStreams:
    """Device buffers, streams and events for one pipelined vector add."""

    def __init__(self, a_host: np.ndarray, b_host: np.ndarray, out_host: np.ndarray, chunks: int):
        import cupy

        checks.check_same_shape(a_host, b_host, 1, np.ndarray)
        checks.check_output(out_host, a_host.shape, np.ndarray)
        self.bounds = chunk_bounds(a_host.size, chunks)
        for name, array in (("a", a_host), ("b", b_host), ("out", out_host)):
            if not is_pinned(array):
                raise ValueError(f"{name} must be in pinned host memory (use kernels.pinned_empty)")
        checks.check_fits(3 * a_host.nbytes, free_device_bytes(), f"vector_add_streams of {a_host.size} floats")
        self.a_host, self.b_host, self.out_host = a_host, b_host, out_host
        self.a, self.b, self.c = (cupy.empty_like(a_host) for _ in range(3))
        self.streams = [cupy.cuda.Stream(non_blocking=True) for _ in self.bounds]
        self.fork = cupy.cuda.Event(disable_timing=True)
        self.joins = [cupy.cuda.Event(disable_timing=True) for _ in self.bounds]
        self.launches = [plan_launch(CHUNK_KERNEL, (stop - start,)) for start, stop in self.bounds]
        self._kernel = get_function(ELEMENTWISE_SOURCE, CHUNK_KERNEL.function)

    def run(self, stream=None) -> None:
        """Enqueue every chunk's copies and kernel, ordered after and joined back into `stream`."""
        import cupy

        rt = cupy.cuda.runtime
        origin = stream if stream is not None else cupy.cuda.get_current_stream()
        self.fork.record(origin)
        for (start, stop), launch, s, join in zip(self.bounds, self.launches, self.streams, self.joins, strict=True):
            s.wait_event(self.fork)
            count = stop - start
            offset = start * 4
            nbytes = count * 4
            for device, host in ((self.a, self.a_host), (self.b, self.b_host)):
                rt.memcpyAsync(device.data.ptr + offset, host.ctypes.data + offset, nbytes,
                               rt.memcpyHostToDevice, s.ptr)
            with s:
                self._kernel(launch.grid, launch.block, (self.a[start:stop], self.b[start:stop], self.c[start:stop],
                                                         *(int32(size) for size in launch.sizes)))
            rt.memcpyAsync(self.out_host.ctypes.data + offset, self.c.data.ptr + offset, nbytes,
                           rt.memcpyDeviceToHost, s.ptr)
            join.record(s)
            origin.wait_event(join)

    def build(self) -> KernelBuild:
        """The chunk kernel's build; the launch includes this file's text, since the pipeline
        (streams, copies, events) is host code that SASS alone does not describe."""
        pipeline = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
        grids = sorted({launch.grid for launch in self.launches})
        return KernelBuild(ELEMENTWISE_SOURCE, CHUNK_KERNEL.function, (),
                           f"chunks={len(self.bounds)} grids={grids} pipeline={pipeline}")

    def same_case_in(self, package) -> PreparedStreams:
        """This case prepared by another version of the `kernels` package (the same host arrays)."""
        return package.PreparedStreams(self.a_host, self.b_host, self.out_host, len(self.bounds))

    def poison(self) -> None:
        self.out_host.fill(np.nan)
        self.c.fill(np.nan)


def vector_add_streams(a_host: np.ndarray, b_host: np.ndarray, chunks: int, out_host: np.ndarray) -> np.ndarray:
    """out_host = a_host + b_host through `chunks` streams; waits for the result (a host routine)."""
    import cupy

    prepared = PreparedStreams(a_host, b_host, out_host, chunks)
    stream = cupy.cuda.get_current_stream()
    prepared.run(stream)
    stream.synchronize()
    return out_host

