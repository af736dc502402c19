"""Why a lone 4 MiB pinned host-to-device copy sometimes samples slow (GPU).

    python3 -m experiments.lone_copy

suites/test_harness_on_gpu.py's host-copy ceiling test failed twice in 25 runs on one H200 host
(GPU-e767c524, 2026-12-04): one copy's median 130.5 µs against 79 µs per copy of four and of sixteen
(four / one 2.43, the test wants more than 3). This measures the ceiling as the suite does (a fresh
`Ceilings` per trial, the nightly profile) under four conditions: back to back, after 0.2 s and 2 s with
the GPU idle, and right after a second of kernels; per trial the median, minimum and slow share of the
lone copy's samples, the PCIe link generation NVML reports just before, and the ratios the test checks.
"""

from __future__ import annotations

import statistics
import time

CHUNK = 4 << 20
TRIALS = 6


def main() -> None:
    import cupy
    import pynvml

    from harness.timing.ceilings import Ceilings
    from harness.timing.gpu import gpu_info
    from harness.timing.profile import PROFILES
    from harness.timing.timer import GpuTimer

    info = gpu_info()
    print(f"GPU {info.name} uuid={info.uuid} host={info.host}")
    timer = GpuTimer(info.l2_bytes)
    profile = PROFILES["nightly"]
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    busy = cupy.ones(64 << 20, cupy.float32)

    def kernels_for(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for _ in range(20):
                cupy.multiply(busy, 1.0000001, out=busy)
            cupy.cuda.Device().synchronize()

    before = {"back to back": lambda: None, "idle 0.2 s": lambda: time.sleep(0.2),
              "idle 2 s": lambda: time.sleep(2.0), "after 1 s of kernels": lambda: kernels_for(1.0)}
    print("| condition | link gen | one: median µs | min µs | n | share > 1.3 min | four / one | sixteen / four |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, wait in before.items():
        for _ in range(TRIALS):
            ceilings = Ceilings(timer, profile)
            wait()
            gen = pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)
            one = timer.measure(_copies(1), profile, flush=False).samples
            four = ceilings.host_copy_seconds(True, CHUNK, 4)
            sixteen = ceilings.host_copy_seconds(True, CHUNK, 16)
            median, low = statistics.median(one), min(one)
            slow = sum(s > 1.3 * low for s in one) / len(one)
            print(f"| {name} | {gen} | {median * 1e6:.1f} | {low * 1e6:.1f} | {len(one)} | {slow:.0%} | "
                  f"{four / median:.2f} | {sixteen / four:.2f} |")


def _copies(count: int):
    """The run `Ceilings.host_copy_seconds` times, kept so that its samples can be read."""
    import cupy
    import numpy as np

    from kernels.device import pinned_empty

    floats = CHUNK * count // 4
    host = pinned_empty(floats)
    host[:] = 1.0
    device = cupy.empty(floats, np.float32)
    rt = cupy.cuda.runtime

    def run(stream):
        for i in range(count):
            rt.memcpyAsync(device.data.ptr + i * CHUNK, host.ctypes.data + i * CHUNK, CHUNK,
                           rt.memcpyHostToDevice, stream.ptr)

    run.keep = (host, device)
    return run


if __name__ == "__main__":
    main()
