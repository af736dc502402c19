"""Does the streams pipeline move with its pinned allocation, or with the process?

    python -m maintainers.experiments.streams_spread [ALLOCATIONS [MIN_TIME_S]]

The streams cases move between processes by a standard deviation of 0.2-1.9%
(docs/method.md#host-copy-spread), against at most 0.37% for GPU-only work. One process here times the
suite's pipeline (10 M floats, nightly profile, the suite's own timer) at 1, 4
and 16 chunks on ALLOCATIONS (default 5) fresh sets of pinned host buffers, then
the first set again. If the medians move between allocations as much as between
processes, the allocation is the cause and a case could sample over several;
if they hold still within the process, the process (or the host) is.
MIN_TIME_S (default the nightly profile's) samples each case for at least so
many seconds of GPU time, to see whether a longer window steadies the medians.
Prints one line per allocation and the spread (std of the log medians, %).
"""

from __future__ import annotations

import argparse

from maintainers.environment import needs_gpu, summary

CHUNKS = (1, 4, 16)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.streams_spread", description=summary(__doc__))
    parser.add_argument("allocations", type=int, nargs="?", default=5, metavar="ALLOCATIONS",
                        help="fresh sets of pinned host buffers (default 5)")
    parser.add_argument("min_time", type=float, nargs="?", metavar="MIN_TIME_S",
                        help="seconds of GPU time each case samples at least (default: the nightly profile's)")
    args = parser.parse_args(argv)
    needs_gpu("maintainers.experiments.streams_spread")
    import dataclasses

    import numpy as np

    from kernels import pinned_empty
    from kernels.streams import PreparedStreams
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer
    from suites.perf_cases import STREAM_FLOATS

    timer = GpuTimer(gpu_info().l2_bytes)
    profile = PROFILES["nightly"]
    allocations = args.allocations
    if args.min_time is not None:
        min_time = args.min_time
        profile = dataclasses.replace(profile, min_time=min_time, time_cap=max(profile.time_cap, 3 * min_time),
                                      max_samples=100_000)
    print(f"profile: min_time {profile.min_time} s, target rsd {profile.target_rsd}, cap {profile.time_cap} s")
    n = STREAM_FLOATS
    kept = []
    rows: dict[str, list[float]] = {}

    def time_set(label, buffers):
        a, b, out = buffers
        medians, counts = [], []
        for chunks in CHUNKS:
            m = timer.measure(PreparedStreams(a, b, out, chunks).run, profile, flush=False, case=f"streams {chunks}")
            medians.append(m.median)
            counts.append(len(m.samples))
        rows[label] = medians
        print(f"| {label} | " + " | ".join(f"{m * 1e6:.1f}" for m in medians) + f" | {m.timer}, {'/'.join(map(str, counts))} samples |", flush=True)

    print("| allocation | " + " | ".join(f"{c} chunk(s) µs" for c in CHUNKS) + " | timer |")
    print("| --- | " + " | ".join("---" for _ in CHUNKS) + " | --- |")
    for i in range(allocations):
        buffers = tuple(pinned_empty(n) for _ in range(3))
        buffers[0][:] = np.random.default_rng(1).random(n, dtype=np.float32)
        buffers[1][:] = np.random.default_rng(2).random(n, dtype=np.float32)
        kept.append(buffers)
        time_set(f"set {i + 1}", buffers)
    time_set("set 1 again", kept[0])
    fresh = np.log(np.array([rows[f"set {i + 1}"] for i in range(allocations)]))
    spread = 100 * fresh.std(axis=0, ddof=1)
    again = 100 * (np.array(rows["set 1 again"]) / np.array(rows["set 1"]) - 1)
    print("| spread between sets, % | " + " | ".join(f"{s:.2f}" for s in spread) + " | |")
    print("| set 1 again against set 1, % | " + " | ".join(f"{d:+.2f}" for d in again) + " | |")


if __name__ == "__main__":
    main()
