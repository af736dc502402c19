"""Why a lone 4 MiB pinned host-to-device copy sometimes samples slow (GPU).

    python -m maintainers.experiments.lone_copy

suites/test_harness_on_gpu.py's host-copy ceiling test failed twice in 25 runs on one H200 host
(GPU-e767c524, 2026-12-04): one copy's median 130.5 µs against 79 µs per copy of four and of sixteen
(four / one 2.43, the test wants more than 3). This measures the ceiling as the suite does (a fresh
`Ceilings` per trial, the nightly profile) under four conditions: back to back, after 0.2 s and 2 s with
the GPU idle, and right after a second of kernels; per trial the median, minimum and slow share of the
lone copy's samples, the PCIe link generation NVML reports just before, and the ratios the test checks.
"""

from __future__ import annotations

import argparse
import time

from maintainers.environment import needs_gpu, summary

CHUNK = 4 << 20
TRIALS = 6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.lone_copy", description=summary(__doc__))
    parser.parse_args(argv)
    needs_gpu("maintainers.experiments.lone_copy")
    import cupy
    import pynvml

    from kernelwatch.timing.ceilings import Ceilings
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer

    info = gpu_info()
    print(f"GPU {info.name} uuid={info.uuid} host={info.host}")
    timer = KeptTimer(GpuTimer(info.l2_bytes))
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
            one = ceilings.host_copy_seconds(True, CHUNK, 1)
            samples = timer.last.samples
            four = ceilings.host_copy_seconds(True, CHUNK, 4)
            sixteen = ceilings.host_copy_seconds(True, CHUNK, 16)
            slow = sum(s > 1.3 * min(samples) for s in samples) / len(samples)
            print(f"| {name} | {gen} | {one * 1e6:.1f} | {min(samples) * 1e6:.1f} | {len(samples)} | {slow:.0%} | "
                  f"{four / one:.2f} | {sixteen / four:.2f} |")


class KeptTimer:
    """The timer, keeping its last measurement: `Ceilings` gives only a median, this reads its samples too."""

    def __init__(self, timer):
        self.timer, self.last = timer, None

    def measure(self, run, profile, **options):
        self.last = self.timer.measure(run, profile, **options)
        return self.last


if __name__ == "__main__":
    main()
