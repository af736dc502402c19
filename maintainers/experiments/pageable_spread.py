"""Where does a pageable host routine's spread between processes come from?

    python -m maintainers.experiments.pageable_spread [PROCESSES]

The pageable host routines (allocate, copy in, multiply, copy out, by wall clock) moved 1.3x-1.9x between
nightlies on one H200 and read 1.4x their baseline on an H100
(notes/2026-12-05.md#2026-12-05-twenty-first-session-kernelwatch-an-installable-plugin-its-first-runs-on-an-h100-issues-44-48), while their GPU phases held within
2%: the host phase (staging, Python) carries the spread. This times, in PROCESSES (default 4) fresh processes
per condition, the three host operations of such a routine on a 1000x1000 float32 matrix (4 MB), each the
median of 60 repetitions by the wall clock: a CPU copy (np.copyto), a pageable copy in (cupy.asarray) and
a pageable copy out (ndarray.get(out=...)), with a pinned copy in for contrast. Conditions:

  fresh    a new process, buffers from NumPy (malloc), as a perf-only run meets them
  churn    the same after 2 GB of NumPy arrays of 1-32 MB made and freed, as a nightly's correctness tests do
           before the host routines (glibc then raises its mmap threshold: 4 MB comes from the heap)
  local    fresh, the process bound to the CPUs local to the GPU (sysfs local_cpulist of its PCI device)
  huge     fresh, buffers from an anonymous mmap advised MADV_HUGEPAGE

Prints one line per process (CPU it ran on, huge pages held, the four medians in µs) and per condition the
median and the spread (max/min) of each operation between its processes. If churn is slower than fresh
by about the 1.4x seen, the process's allocation history is the cause; if local is steadier than fresh,
CPU placement is; if huge is faster and steadier, page size is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from maintainers.environment import needs_gpu, summary

CONDITIONS = ("fresh", "churn", "local", "huge")
SHAPE = (1000, 1000)
REPEATS = 60


def local_cpus() -> set[int]:
    """The CPUs sysfs names as local to GPU 0's PCI device (all CPUs where it names none)."""
    import cupy

    bus_id = cupy.cuda.Device(0).pci_bus_id.lower()
    try:
        text = open(f"/sys/bus/pci/devices/{bus_id}/local_cpulist").read().strip()
    except OSError:
        return set(os.sched_getaffinity(0))
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def buffer(condition: str):
    import mmap

    import numpy as np

    if condition != "huge":
        return np.empty(SHAPE, np.float32)
    nbytes = SHAPE[0] * SHAPE[1] * 4
    region = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(region, np.float32).reshape(SHAPE)


def median_us(operation) -> float:
    import time

    import numpy as np

    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        operation()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6)


def child(condition: str) -> dict:
    import cupy
    import numpy as np

    if condition == "local":
        os.sched_setaffinity(0, local_cpus())
    if condition == "churn":
        rng = np.random.default_rng(0)
        for size in rng.integers(1 << 20, 32 << 20, 120):
            held = np.ones(int(size) // 4, np.float32)
            del held
    a, out = buffer(condition), buffer(condition)
    a[:] = np.random.default_rng(1).random(SHAPE, dtype=np.float32)
    out[:] = 0
    pinned = cupy.cuda.alloc_pinned_memory(a.nbytes)
    a_pinned = np.frombuffer(pinned, np.float32, a.size).reshape(SHAPE)
    a_pinned[:] = a
    device = cupy.asarray(a)
    sync = cupy.cuda.get_current_stream().synchronize

    def copy_in(source):
        def run():
            device.set(source)
            sync()
        return run

    def copy_out():
        device.get(out=out)
        sync()

    figures = {"cpu_copy": median_us(lambda: np.copyto(out, a)), "pageable_in": median_us(copy_in(a)),
               "pageable_out": median_us(copy_out), "pinned_in": median_us(copy_in(a_pinned))}
    stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    huge_kb = [line.split()[1] for line in open("/proc/self/smaps_rollup") if line.startswith("AnonHugePages")]
    return {"condition": condition, "cpu": int(stat[36]), "huge_kb": int(huge_kb[0]) if huge_kb else None,
            **figures}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.pageable_spread",
                                     description=summary(__doc__))
    parser.add_argument("processes", type=int, nargs="?", default=4, metavar="PROCESSES",
                        help="fresh processes per condition (default 4)")
    parser.add_argument("--child", choices=CONDITIONS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return
    needs_gpu("maintainers.experiments.pageable_spread")
    print(f"THP: {open('/sys/kernel/mm/transparent_hugepage/enabled').read().strip()}; CPUs {os.cpu_count()}")
    rows = []
    for index in range(args.processes):  # conditions interleaved, so drift over the minutes hits each alike
        for condition in CONDITIONS:
            done = subprocess.run([sys.executable, "-m", "maintainers.experiments.pageable_spread", "--child",
                                   condition], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{condition} process {index} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{condition:6s} cpu {row['cpu']:3d} huge {row['huge_kb']} kB  " + "  ".join(
                f"{key} {row[key]:7.1f}" for key in ("cpu_copy", "pageable_in", "pageable_out", "pinned_in")))
    print("| condition | operation | median µs | max/min between processes |")
    print("| --- | --- | --- | --- |")
    for condition in CONDITIONS:
        mine = [row for row in rows if row["condition"] == condition]
        for key in ("cpu_copy", "pageable_in", "pageable_out", "pinned_in"):
            values = sorted(row[key] for row in mine)
            if values:
                print(f"| {condition} | {key} | {values[len(values) // 2]:.1f} | {values[-1] / values[0]:.2f} |")


if __name__ == "__main__":
    main()
