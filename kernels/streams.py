"""Vector add over several streams from pinned host memory (seed 002, example 2).

The vector is cut into `chunks` nearly equal pieces; each piece's two
host-to-device copies, its kernel and its device-to-host copy are issued
asynchronously in a stream of its own, so that the copy engines (one per
direction) and the kernel of different pieces overlap. With chunks=1 it is
the same work on one stream, the comparison the seed makes.

`run(stream)` forks from `stream` with an event and joins back, so the whole
pipeline can be timed with events on `stream` like any kernel. Host arrays
must be page-locked (`kernels.pinned_empty`): from pageable memory
cudaMemcpyAsync stages through a driver buffer and does not overlap.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .compile import get_function
from .device import free_device_bytes, int32, is_pinned
from .elementwise import THREADS_1D

H2D_BYTES_PER_ELEMENT = 8  # a and b
D2H_BYTES_PER_ELEMENT = 4  # c


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


def overlap_bound_seconds(n: int, chunks: int, h2d_bytes_per_s: float, d2h_bytes_per_s: float,
                          duplex_bytes_per_s: float | None = None) -> float:
    """Least time the pipeline can take with one copy engine per direction.

    Every input byte crosses host-to-device on one engine; the last chunk's
    result can only start back after its own input arrived, so its
    device-to-host copy (1/chunks of the output) is not hidden. Kernels are
    two orders of magnitude shorter than the copies and are left out.

    duplex_bytes_per_s, when given, is the combined rate of both directions
    copying at once (measured, not assumed: host memory and the I/O path may
    not sustain both directions at full speed). While both engines are busy,
    the bytes they move together cannot exceed it; every byte but the last
    chunk's return trip can overlap, so the bound is also at least
    (in + out - last chunk's out) / duplex + last chunk's out / d2h. This is
    still a lower bound as long as the duplex rate is at least either
    one-way rate.
    """
    h2d = n * H2D_BYTES_PER_ELEMENT / h2d_bytes_per_s
    d2h = n * D2H_BYTES_PER_ELEMENT / d2h_bytes_per_s
    first_h2d = h2d / chunks
    # the pipeline is bound by the slower engine plus the other's unhidden chunk
    bound = max(h2d + d2h / chunks, first_h2d + d2h)
    if duplex_bytes_per_s:
        tail_bytes = n * D2H_BYTES_PER_ELEMENT / chunks
        overlapped = n * (H2D_BYTES_PER_ELEMENT + D2H_BYTES_PER_ELEMENT) - tail_bytes
        bound = max(bound, overlapped / duplex_bytes_per_s + tail_bytes / d2h_bytes_per_s)
    return bound


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
        self._kernel = get_function("elementwise.cu", "vector_add")

    def run(self, stream=None) -> None:
        """Enqueue every chunk's copies and kernel, ordered after and joined back into `stream`."""
        import cupy

        rt = cupy.cuda.runtime
        origin = stream if stream is not None else cupy.cuda.get_current_stream()
        self.fork.record(origin)
        for (start, stop), s, join in zip(self.bounds, self.streams, self.joins, strict=True):
            s.wait_event(self.fork)
            count = stop - start
            offset = start * 4
            nbytes = count * 4
            for device, host in ((self.a, self.a_host), (self.b, self.b_host)):
                rt.memcpyAsync(device.data.ptr + offset, host.ctypes.data + offset, nbytes,
                               rt.memcpyHostToDevice, s.ptr)
            with s:
                grid = (-(-count // THREADS_1D), 1, 1)
                self._kernel(grid, (THREADS_1D, 1, 1), (self.a[start:stop], self.b[start:stop],
                                                       self.c[start:stop], int32(count)))
            rt.memcpyAsync(self.out_host.ctypes.data + offset, self.c.data.ptr + offset, nbytes,
                           rt.memcpyDeviceToHost, s.ptr)
            join.record(s)
            origin.wait_event(join)

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


def choose_chunks(n: int, min_chunk_bytes: int = 2 << 20, max_chunks: int = 32) -> int:
    """Chunk count for n floats: as many as keep each copy at least `min_chunk_bytes`.

    More chunks hide more of the last chunk's return copy (the overlap bound
    falls as 1/chunks), but a copy shorter than a few tens of microseconds is
    dominated by its own overhead. A power of two, at most `max_chunks`.
    """
    chunks = 1
    while chunks * 2 <= max_chunks and n * 4 // (chunks * 2) >= min_chunk_bytes:
        chunks *= 2
    return chunks
