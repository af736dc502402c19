"""Ceilings measured in the same run as the cases they judge.

A figure such as "41 TFLOP/s" means little alone; "84% of cuBLAS on this GPU,
measured a minute ago" means a lot. Each ceiling is measured once per session
(per shape for cuBLAS) with the same timer as the cases.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from kernelwatch.timing.profile import Profile
from kernelwatch.timing.timer import GpuTimer

COPY_BYTES = 1 << 30  # 1 GiB each way: far past the L2, long enough to saturate HBM


def for_a_figure(profile: Profile) -> Profile:
    """`profile` without the host-copy window: for a ceiling, a figure that no verdict judges."""
    return dataclasses.replace(profile, host_copy_min_time=0.0)


class Ceilings:
    def __init__(self, timer: GpuTimer, profile: Profile):
        self.timer = timer
        self.profile = profile
        self._cublas: dict[tuple[int, int, int], float] = {}
        self._host_copies: dict[tuple[bool, int, int], float] = {}

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

    def host_copy_seconds(self, to_device: bool, chunk_bytes: int, count: int) -> float:
        """`count` copies of `chunk_bytes` each between pinned host memory and the device,
        issued back to back on one stream: what one copy engine needs for that traffic.

        Sampled as the profile samples GPU-only work, without the host-copy window: that window
        is for a verdict between processes (a case's median drifts over seconds), and a ceiling
        is a figure beside the case, never judged. With it, each streams case sampled three such
        windows, its own and its two ceilings', and took 4.9 s (H200, NOTES.md, 2026-12-01
        seventh session)."""
        import cupy

        from kernels.device import pinned_empty

        key = (to_device, chunk_bytes, count)
        if key not in self._host_copies:
            floats = chunk_bytes * count // 4
            host = pinned_empty(floats)
            host[:] = 1.0
            device = cupy.empty(floats, np.float32)
            rt = cupy.cuda.runtime
            kind = rt.memcpyHostToDevice if to_device else rt.memcpyDeviceToHost

            def run(stream):
                for i in range(count):
                    h, d = host.ctypes.data + i * chunk_bytes, device.data.ptr + i * chunk_bytes
                    dst, src = (d, h) if to_device else (h, d)
                    rt.memcpyAsync(dst, src, chunk_bytes, kind, stream.ptr)

            self._host_copies[key] = self.timer.measure(run, for_a_figure(self.profile), flush=False).median
        return self._host_copies[key]

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
