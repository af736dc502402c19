"""Does the suite's GPU time agree with Nsight Compute's gpu__time_duration.sum?

Three steps (maintainers/checks/ncu_check.sh runs them on a GPU machine):

    python3 -m maintainers.checks.ncu_check time  > ours.json    # the suite's timer, nightly profile
    ncu --profile-from-start off --clock-control none --cache-control all \\
        --metrics gpu__time_duration.sum --csv --log-file ncu.csv python3 -m maintainers.checks.ncu_check launch
    python3 -m maintainers.checks.ncu_check compare ours.json ncu.csv

The cases are every timed single-kernel GPU case of the nightly suite: each
matmul kernel at n = 1000, 1024, 4096 and 8192, each elementwise add at
1024x1024 and 8192x8192 (1D kernels on the same element counts; 1024x1024
is vector_add_vec4's 1 M-float case). The streams pipeline is left out: its figure
is a span over copies on two copy engines and kernels on several streams,
which ncu (one kernel at a time, serialized, caches flushed before each)
cannot reproduce.

Matching ncu's rows to cases: `launch` warms every case up outside the
profiled window, then, inside cudaProfilerStart/Stop, launches a marker
kernel of its own before each of a case's launches. The rows between two
markers are one launch of one case, in launch order; a launch of several
kernels (cuBLAS chooses its kernels at run time) counts as the sum of their
durations. An optional last argument, a substring, keeps only the cases
whose name contains it (all three steps must get the same one).

Pass: cases of 20 µs or more within 2% of ncu; 3-20 µs within 1 µs of it;
below 3 µs no criterion (listed only).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

from maintainers.environment import needs, needs_gpu, summary

LAUNCHES = 5  # per case under ncu: 8192-cubed naive kernels take ~0.2 s each
MATMUL_SIZES = (1000, 1024, 4096, 8192)  # suites/perf_cases.py MATMUL_SIZES["full"]
ADD_SIDES = (1024, 8192)  # suites/perf_cases.py ADD_SIDES["full"]
MARKER = "ncu_check_marker"
RELATIVE_LIMIT, RELATIVE_FROM = 0.02, 20e-6  # within 2% from 20 µs up
ABSOLUTE_LIMIT, ABSOLUTE_FROM = 1e-6, 3e-6  # within 1 µs from 3 to 20 µs
UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
         "s": 1.0, "second": 1.0}


def case_list(only: str = "") -> list[tuple[str, str, str, tuple[int, ...]]]:
    """(case, family, registry name, shape) in launch order."""
    from kernels import ELEMENTWISE_KERNELS, MATMUL_KERNELS

    cases = [(f"{name} {n}", "matmul", name, (n, n)) for name in MATMUL_KERNELS for n in MATMUL_SIZES]
    for name, kernel in ELEMENTWISE_KERNELS.items():
        for side in ADD_SIDES:
            # as suites/test_perf_elementwise.py shapes them: vectors for 1D kernels, matrices otherwise
            shape = (side * side,) if kernel.ndim == 1 else (side, side)
            cases.append((f"{name} {side}x{side}", "add", name, shape))
    return [case for case in cases if only in case[0]]


def prepare(family: str, name: str, shape: tuple[int, ...]):
    from kernels import prepare_add, prepare_matmul
    from suites.perf_cases import random_device

    prepare_family = prepare_matmul if family == "matmul" else prepare_add
    return prepare_family(name, random_device(shape, 1), random_device(shape, 2))


def time_ours(only: str) -> None:
    import cupy

    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer

    info = gpu_info()
    timer = GpuTimer(info.l2_bytes)
    result = {"uses_cupti": timer.uses_cupti, "note": timer.note, "gpu_uuid": info.uuid, "cases": {}}
    for case, family, name, shape in case_list(only):
        m = timer.measure(prepare(family, name, shape).run, PROFILES["nightly"], case=case)
        result["cases"][case] = {"timer": m.timer, "median_s": m.median,
                                 "event_median_s": statistics.median(m.event_samples),
                                 "rsd": m.rsd, "samples": len(m.samples)}
        cupy.get_default_memory_pool().free_all_blocks()
    print(json.dumps(result, indent=1))


def launch(only: str) -> None:
    import cupy
    from cupy.cuda import profiler

    marker = cupy.RawKernel(f'extern "C" __global__ void {MARKER}() {{}}', MARKER)
    marker((1,), (1,), ())  # built before the profiled window
    for _case, family, name, shape in case_list(only):
        prepared = prepare(family, name, shape)
        prepared.run()  # compilation, cuBLAS handles and workspaces: outside the profiled window
        cupy.cuda.runtime.deviceSynchronize()
        profiler.start()
        for _ in range(LAUNCHES):
            marker((1,), (1,), ())
            prepared.run()
        cupy.cuda.runtime.deviceSynchronize()
        profiler.stop()
        cupy.get_default_memory_pool().free_all_blocks()


def ncu_rows(path: Path) -> list[tuple[str, float]]:
    """(kernel name, seconds) of every profiled kernel, in launch order."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    rows = []
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        seconds = float(row["Metric Value"].replace(",", "")) * UNITS[row["Metric Unit"]]
        rows.append((int(row["ID"]), row["Kernel Name"], seconds))
    return [(name, seconds) for _id, name, seconds in sorted(rows)]


def ncu_launches(rows: list[tuple[str, float]], cases: list[str]) -> dict[str, list[tuple[float, int]]]:
    """case -> [(summed seconds, kernel count)] per launch, split at the marker rows."""
    segments: list[list[float]] = []
    for name, seconds in rows:
        if name.split("(")[0].strip() == MARKER:
            segments.append([])
        elif segments:
            segments[-1].append(seconds)
    if len(segments) != LAUNCHES * len(cases):
        raise SystemExit(f"ncu shows {len(segments)} marked launches, expected {LAUNCHES} for each of "
                         f"{len(cases)} cases: the launch step and this step disagree, or ncu missed kernels")
    by_case: dict[str, list[tuple[float, int]]] = {}
    for index, kernels in enumerate(segments):
        if not kernels:
            raise SystemExit(f"launch {index % LAUNCHES + 1} of {cases[index // LAUNCHES]} shows no kernel in ncu")
        by_case.setdefault(cases[index // LAUNCHES], []).append((sum(kernels), len(kernels)))
    return by_case


def verdict(ours: float, ncu: float) -> tuple[str, bool]:
    """The comparison's text and whether it passes the criterion of its size."""
    diff = ours - ncu
    text = f"{diff * 1e6:+.2f} µs ({100 * diff / ncu:+.1f}%)"
    if ncu >= RELATIVE_FROM:
        return text, abs(diff) <= RELATIVE_LIMIT * ncu
    if ncu >= ABSOLUTE_FROM:
        return text, abs(diff) <= ABSOLUTE_LIMIT
    return text + ", below 3 µs: not judged", True


def compare(ours_path: Path, ncu_path: Path, only: str) -> int:
    ours = json.loads(ours_path.read_text())
    names = [case for case, *_ in case_list(only)]
    launches = ncu_launches(ncu_rows(ncu_path), names)
    print(f"CUPTI: {'yes' if ours['uses_cupti'] else 'no'} {ours['note']}".rstrip())
    print("| case | CUPTI (µs) | kind | events (µs) | ncu (µs) | CUPTI vs ncu | pass |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")
    failed = []
    for case in names:
        figures = ours["cases"][case]
        ncu = statistics.median(seconds for seconds, _ in launches[case])
        kernels = max(count for _, count in launches[case])
        cupti = figures["median_s"] if figures["timer"].startswith("cupti") else None
        text, ok = verdict(cupti, ncu) if cupti is not None else ("no CUPTI figure", False)
        if kernels > 1:
            text += f", {kernels} kernels summed"
        if not ok:
            failed.append(case)
        shown = f"{cupti * 1e6:.2f}" if cupti is not None else "-"
        kind = figures["timer"].removeprefix("cupti ")
        print(f"| {case} | {shown} | {kind} | {figures['event_median_s'] * 1e6:.2f} | {ncu * 1e6:.2f} | {text} | "
              f"{'yes' if ok else 'NO'} |")
    print(f"\n{len(names) - len(failed)} of {len(names)} cases pass (20 µs and more: within 2% of ncu; "
          f"3-20 µs: within 1 µs)" + (f"; failing: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.ncu_check", description=summary(__doc__),
                                     epilog="exit status of compare: 0 every case passes, 1 one does not; 2 bad arguments")
    steps = parser.add_subparsers(dest="step", required=True)
    for name, text in (("time", "time every case with the suite's timer; JSON on standard output"),
                       ("launch", "launch every case between markers, for ncu to profile")):
        step = steps.add_parser(name, help=text)
        step.add_argument("only", nargs="?", default="", help="keep only the cases whose name contains this")
    step = steps.add_parser("compare", help="compare the timer's JSON with ncu's CSV")
    step.add_argument("ours", type=Path, help="what `time` wrote")
    step.add_argument("ncu", type=Path, help="ncu's --csv --log-file")
    step.add_argument("only", nargs="?", default="", help="the same substring the other two steps got")
    args = parser.parse_args(argv)
    if args.step == "compare":
        for path in (args.ours, args.ncu):
            if not path.is_file():
                parser.error(f"no such file: {path}")
        return compare(args.ours, args.ncu, args.only)
    needs("maintainers.checks.ncu_check", "cupy", "numpy", tox_env="gpu-cuda13")
    needs_gpu("maintainers.checks.ncu_check")
    (time_ours if args.step == "time" else launch)(args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
