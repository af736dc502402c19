"""Ceilings measured in the same run as the cases they judge.

A figure such as "41 TFLOP/s" means little alone; "84% of cuBLAS on this GPU,
measured a minute ago" means a lot. Each ceiling is measured once per session
(per shape for cuBLAS) with the same timer as the cases.
"""

from __future__ import annotations

import functools

import numpy as np

from .timing import GpuTimer, Profile

COPY_BYTES = 1 << 30  # 1 GiB each way: far past the L2, long enough to saturate HBM
HOST_COPY_BYTES = 256 << 20  # pinned host <-> device


class Ceilings:
    def __init__(self, timer: GpuTimer, profile: Profile):
        self.timer = timer
        self.profile = profile
        self._cublas: dict[tuple[int, int, int], float] = {}

    @functools.cached_property
    def copy_bytes_per_s(self) -> float:
        """Device-to-device cudaMemcpyAsync, counting bytes read plus bytes written."""
        import cupy

        src = cupy.ones(COPY_BYTES // 4, np.float32)
        dst = cupy.empty_like(src)
        rt = cupy.cuda.runtime

        def run(stream):
            rt.memcpyAsync(dst.data.ptr, src.data.ptr, COPY_BYTES, rt.memcpyDeviceToDevice, stream.ptr)

        median = self.timer.measure(run, self.profile).median
        return 2 * COPY_BYTES / median

    def _host_copy(self, to_device: bool) -> float:
        import cupy

        from kernels.device import pinned_empty

        host = pinned_empty(HOST_COPY_BYTES // 4)
        host[:] = 1.0
        device = cupy.empty(HOST_COPY_BYTES // 4, np.float32)
        rt = cupy.cuda.runtime
        if to_device:
            dst, src, kind = device.data.ptr, host.ctypes.data, rt.memcpyHostToDevice
        else:
            dst, src, kind = host.ctypes.data, device.data.ptr, rt.memcpyDeviceToHost

        def run(stream):
            rt.memcpyAsync(dst, src, HOST_COPY_BYTES, kind, stream.ptr)

        return HOST_COPY_BYTES / self.timer.measure(run, self.profile, flush=False).median

    @functools.cached_property
    def h2d_bytes_per_s(self) -> float:
        """Pinned host-to-device copy bandwidth."""
        return self._host_copy(True)

    @functools.cached_property
    def d2h_bytes_per_s(self) -> float:
        """Device-to-pinned-host copy bandwidth."""
        return self._host_copy(False)

    @functools.cached_property
    def duplex_bytes_per_s(self) -> float:
        """Both directions at once (pinned), bytes moved per second in total."""
        import cupy

        from kernels.device import pinned_empty

        count = HOST_COPY_BYTES // 4
        host_in, host_out = pinned_empty(count), pinned_empty(count)
        host_in[:] = 1.0
        dev_in, dev_out = cupy.empty(count, np.float32), cupy.ones(count, np.float32)
        other = cupy.cuda.Stream(non_blocking=True)
        fork, join = cupy.cuda.Event(disable_timing=True), cupy.cuda.Event(disable_timing=True)
        rt = cupy.cuda.runtime

        def run(stream):
            fork.record(stream)
            other.wait_event(fork)
            rt.memcpyAsync(dev_in.data.ptr, host_in.ctypes.data, HOST_COPY_BYTES, rt.memcpyHostToDevice, stream.ptr)
            rt.memcpyAsync(host_out.ctypes.data, dev_out.data.ptr, HOST_COPY_BYTES, rt.memcpyDeviceToHost, other.ptr)
            join.record(other)
            stream.wait_event(join)

        return 2 * HOST_COPY_BYTES / self.timer.measure(run, self.profile, flush=False).median

    def cublas_flops_per_s(self, m: int, n: int, k: int) -> float:
        """cuBLAS SGEMM (TF32 off) on random operands of this shape, measured once per shape."""
        if (m, n, k) not in self._cublas:
            import cupy

            from kernels import prepare_matmul

            rng = cupy.random.default_rng(0)
            a = rng.random((m, k), dtype=np.float32)
            b = rng.random((k, n), dtype=np.float32)
            prepared = prepare_matmul("cublas", a, b)
            self._cublas[(m, n, k)] = 2.0 * m * n * k / self.timer.measure(prepared.run, self.profile).median
        return self._cublas[(m, n, k)]


# FP32 lanes per SM by compute capability (CUDA C Programming Guide, arithmetic
# instruction throughput): the datasheet peak is lanes x 2 flops x SMs x max clock.
FP32_LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
                     (9, 0): 128, (10, 0): 128, (12, 0): 128}


def datasheet_fp32_flops_per_s(compute_capability: str, multiprocessors: int, sm_clock_max_mhz: int | None):
    """Peak FP32 FMA rate from the chip's published structure; None where unknown."""
    major, minor = (int(x) for x in compute_capability.split("."))
    lanes = FP32_LANES_PER_SM.get((major, minor))
    if lanes is None or not sm_clock_max_mhz:
        return None
    return 2.0 * lanes * multiprocessors * sm_clock_max_mhz * 1e6


def datasheet_memory_bytes_per_s(memory_clock_max_mhz: int | None, bus_width_bits: int | None):
    """Peak DRAM bandwidth, double data rate over the bus; None where NVML cannot say."""
    if not memory_clock_max_mhz or not bus_width_bits:
        return None
    return 2.0 * memory_clock_max_mhz * 1e6 * bus_width_bits / 8
