"""Ceilings measured in the same run as the cases they judge.

A figure such as "41 TFLOP/s" means little alone; "84% of cuBLAS on this GPU,
measured a minute ago" means a lot. Each ceiling is measured once per session
(per shape for cuBLAS) with the same timer as the cases, by the harness's own
means, whatever kernels the project has: the array library's matrix product
(`cupy.matmul`, which calls cuBLAS's SGEMM), a device-to-device copy, and copies
between the device and pinned host memory (CuPy's pinned allocator).
"""

from __future__ import annotations

import dataclasses
import functools
import os

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
        windows, its own and its two ceilings', and took 4.9 s (H200, docs/method.md#nightly-time, 2026-12-01
        seventh session)."""
        import cupy

        key = (to_device, chunk_bytes, count)
        if key not in self._host_copies:
            floats = chunk_bytes * count // 4
            host = pinned_floats(floats)
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
        """cuBLAS SGEMM (TF32 off) on random operands of this shape, measured once per shape: `cupy.matmul` of an
        M x K by a K x N float32 matrix into an output of its own, on the timer's stream."""
        if (m, n, k) not in self._cublas:
            import cupy

            if os.environ.get("CUPY_TF32", "0") != "0":
                raise RuntimeError("CUPY_TF32 is set: cuBLAS would round operands to TF32 and the ceiling would "
                                   "not be FP32's; unset it")
            rng = cupy.random.default_rng(0)
            a = rng.random((m, k), dtype=np.float32)
            b = rng.random((k, n), dtype=np.float32)
            out = cupy.empty((m, n), np.float32)

            def run(stream):
                with stream:
                    cupy.matmul(a, b, out=out)

            self._cublas[(m, n, k)] = 2.0 * m * n * k / self.timer.measure(run, self.profile).median
        return self._cublas[(m, n, k)]


def pinned_floats(count: int) -> np.ndarray:
    """An uninitialised float32 NumPy array of `count` elements in page-locked host memory, from CuPy's pinned
    allocator (the array keeps the allocation alive)."""
    import cupy

    memory = cupy.cuda.alloc_pinned_memory(count * 4)
    return np.frombuffer(memory, np.float32, count)


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
