"""Does the energy meter hold on this GPU? Joules per launch of the suite's cases, NVML's three readings against each other, and the energy A/B on a test-only variant.

    python -m maintainers.checks.energy_check measure [--json OUT.json] [--traces DIR] [--ab N]
    python -m maintainers.checks.energy_check agree RUN.json [RUN.json ...]

`measure`: (1) each case of CASES timed by the suite's timer, then its energy by the suite's meter
(src/kernelwatch/timing/energy.py): joules per launch with its 95% interval, mean power, POWER_INSTANT and the
50 Hz samples over the same windows as fractions of the counter's power, idle power, work per joule;
(2) the variant of maintainers/support/energy_variant.py (an add with hidden FMAs) against the plain add,
interleaved, at several FMA counts: time ratio (the timer's interleaved A/B) and energy ratio; the
smallest count that adds 3% of energy at a time within 0.5% is taken; (3) N energy A/Bs of that
variant against the plain add and N of the plain add against itself, alternating: how many of each
the verdict (src/kernelwatch/verdict/energy.py: judge_energy_paired) calls more energy.
--traces writes the traces of the first cases and of the idle GPU (tests/data/energy).

`agree`: the joules per launch that several runs (pytest-benchmark JSON files, or `measure`'s JSON)
recorded for the same cases, side by side, and whether each case's intervals overlap: those of
the runs' own windows, and those that add the spread between runs (src/kernelwatch/verdict/energy.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kernelwatch.history.cmd_changes import positive_int
from maintainers.environment import needs_gpu, summary

MATMUL = [("cublas", 4096), ("warptile_128x256", 4096), ("warptile_128x256", 1024), ("blocktile_2d", 4096)]
ADDS = [("matrix_add_2d_vec4", 8192), ("vector_add_vec4", 8192), ("matrix_add_2d_vec4", 1024),
        ("vector_add_vec4", 1024), ("cupy_add", 1024)]
EXTRAS = (8, 32, 128, 512)  # hidden FMAs per thread tried for the variant
VARIANT_SIDE = 8192
WANTED_ENERGY, TIME_WITHIN = 0.03, 0.005


def _cases():
    """(case id as the suites name it, prepared case, flops, bytes) of every case measured."""
    from kernels import ELEMENTWISE_KERNELS, prepare_add, prepare_matmul
    from suites.perf_cases import random_device

    for name, n in MATMUL:
        prepared = prepare_matmul(name, random_device((n, n), 1), random_device((n, n), 2))
        yield f"suites/test_perf_matmul.py::test_matmul_time[{n}x{n}x{n}-{name}]", prepared, 2.0 * n**3, None
    for name, side in ADDS:
        shape = (side * side,) if ELEMENTWISE_KERNELS[name].ndim == 1 else (side, side)
        prepared = prepare_add(name, random_device(shape, 1), random_device(shape, 2))
        yield f"suites/test_perf_elementwise.py::test_add_time[{side}x{side}-{name}]", prepared, None, prepared.bytes_moved


def _thin(trace) -> dict:
    """A trace with only the polls next to a counter change (all that windows_of reads), for tests/data."""
    data = trace.as_dict()
    polls = data["polls"]
    data["polls"] = [p for i, p in enumerate(polls) if i in (0, len(polls) - 1) or polls[i - 1][1] != p[1]
                     or polls[i + 1][1] != p[1]]
    return data


def _row(case: str, median_s: float, block: dict) -> dict:
    watts = block["active_watts_mean"]
    return {"case": case, "time_s": median_s, "energy": block,
            "half_width": (block["joules_per_launch_high"] - block["joules_per_launch_low"]) / 2
            / block["joules_per_launch"],
            "instant_over_counter": block["instant_watts_mean"] / watts if block["instant_watts_mean"] else None,
            "sampled_over_counter": block["sampled_watts_mean"] / watts if block["sampled_watts_mean"] else None}


def measure(args) -> int:
    needs_gpu("maintainers.checks.energy_check")
    from kernelwatch.timing.energy import EnergyMeter, EnergyPlan, open_power
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer
    from kernelwatch.verdict.energy import MORE_ENERGY, energy_block, interval_text, judge_energy_paired, precise_enough
    from maintainers.support.energy_variant import BusyAdd

    started = time.perf_counter()
    info = gpu_info()
    power, why_not = open_power()
    if power is None:
        print(f"no energy on this GPU: {why_not}", file=sys.stderr)
        return 1
    timer, meter, profile = GpuTimer(info.l2_bytes), EnergyMeter(power), PROFILES["nightly"]
    print(f"{info.name} {info.uuid}, driver {info.driver}; idle {meter.idle_w():.1f} W, "
          f"limit {power.power_limit_w()} W; timer: {'CUPTI' if timer.uses_cupti else timer.note}")
    result = {"gpu": info.name, "uuid": info.uuid, "idle_w": meter.idle_w(), "cases": [], "calibration": [],
              "ab": []}
    traces = Path(args.traces) if args.traces else None
    if traces:
        traces.mkdir(parents=True, exist_ok=True)
        (traces / "idle.json").write_text(json.dumps(_thin(meter.idle_trace)) + "\n")
    print("| case | time | per launch | W | instant/counter | 50 Hz/counter | per joule | replay | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for index, (case, prepared, flops, bytes_moved) in enumerate(_cases()):
        began = time.perf_counter()
        median = timer.measure(prepared.run, profile, case=case).median
        measured = meter.measure(prepared.run, timer.stream, median, case=case, enough=precise_enough)
        block = energy_block(measured, flops=flops, bytes_moved=bytes_moved)
        row = _row(case, median, block)
        result["cases"].append(row)
        if traces and index < 3:
            name = case.rsplit("[", 1)[-1].rstrip("]")
            (traces / f"{name}.json").write_text(json.dumps(_thin(measured.traces[0])) + "\n")
        instant, sampled = (f"{row[key]:.4f}" if row[key] else "-" for key in ("instant_over_counter",
                                                                                 "sampled_over_counter"))
        print(f"| {case.rsplit('::', 1)[-1]} | {median * 1e6:.1f} µs | {interval_text(block)} | "
              f"{block['active_watts_mean']:.0f} | {instant} | {sampled} | "
              f"{block['work_per_joule']:.1f} {block['work_per_joule_unit']} | {block['replay']} | "
              f"{time.perf_counter() - began:.1f} |", flush=True)

    base, twin = BusyAdd(VARIANT_SIDE, 0), BusyAdd(VARIANT_SIDE, 0)
    base.run(timer.stream)
    timer.stream.synchronize()
    base.check()
    short = EnergyPlan(windows=1, ticks_per_window=3, warm_s=0.1)
    chosen = None
    print("\n| hidden FMAs | time ratio | energy ratio |\n|---|---|---|")
    for extra in EXTRAS:
        variant = BusyAdd(VARIANT_SIDE, extra)
        a, b = timer.measure_interleaved(base.run, variant.run, profile, case=f"busy_add extra={extra}")
        time_ratio = b.median / a.median
        ea, eb = meter.measure_interleaved(base.run, variant.run, timer.stream, a.median, b.median, 3, short)
        energy_ratio = (sum(eb.joules_per_launch) / len(eb.joules_per_launch)) / (
            sum(ea.joules_per_launch) / len(ea.joules_per_launch))
        result["calibration"].append({"extra": extra, "time_ratio": time_ratio, "energy_ratio": energy_ratio})
        print(f"| {extra} | {time_ratio:.4f} | {energy_ratio:.4f} |", flush=True)
        if chosen is None and energy_ratio - 1 >= WANTED_ENERGY and abs(time_ratio - 1) <= TIME_WITHIN:
            chosen = (extra, variant, a.median, b.median)
    if chosen is None:
        print("no FMA count adds 3% of energy within 0.5% of time: no A/B run", flush=True)
    else:
        extra, variant, base_s, variant_s = chosen
        result["chosen_extra"] = extra
        print(f"\nA/B runs: variant extra={extra} against the plain add, and the plain add against itself")
        for kind in range(2 * args.ab):
            head, head_s, label = (variant, variant_s, "variant") if kind % 2 == 0 else (twin, base_s, "clean")
            a, b = meter.measure_interleaved(base.run, head.run, timer.stream, base_s, head_s, 5)
            verdict = judge_energy_paired(label, a.joules_per_launch, b.joules_per_launch)
            result["ab"].append({"kind": label, "ratio": verdict.ratio, "low": verdict.ci_low, "high": verdict.ci_high,
                                 "label": verdict.label})
            print(f"{label}: {verdict.reason}", flush=True)
        for label in ("variant", "clean"):
            runs = [run for run in result["ab"] if run["kind"] == label]
            print(f"{label}: {sum(run['label'] == MORE_ENERGY for run in runs)} of {len(runs)} called more energy")
    result["seconds"] = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"energy_check: {result['seconds']:.0f} s")
    return 0


def _energies(path: Path) -> dict[str, dict]:
    doc = json.loads(path.read_text())
    if "benchmarks" in doc:
        return {b["fullname"]: b["extra_info"]["energy"] for b in doc["benchmarks"]
                if (b.get("extra_info") or {}).get("energy")}
    return {row["case"]: row["energy"] for row in doc["cases"]}


def _half(block: dict, prefix: str) -> float:
    """Half the width of a block's interval (`joules_per_launch` or `between_runs`), % of its mean."""
    return (block[f"{prefix}_high"] - block[f"{prefix}_low"]) / 2 / block["joules_per_launch"] * 100


def agree(args) -> int:
    runs = [_energies(Path(path)) for path in args.files]
    common = sorted(set.intersection(*(set(run) for run in runs)))
    if not common:
        print("no case has energy in every file", file=sys.stderr)
        return 1
    print("| case | " + " | ".join(f"run {i + 1} (J, ±% this run, ±% between runs)" for i in range(len(runs))) +
          " | spread | overlap, this run | overlap, between runs |")
    print("|---|" + "---|" * (len(runs) + 3))
    overlapping = {"joules_per_launch": 0, "between_runs": 0}
    for case in common:
        blocks = [run[case] for run in runs]
        means = [b["joules_per_launch"] for b in blocks]
        overlap = {}
        for prefix in overlapping:
            overlap[prefix] = (max(b[f"{prefix}_low"] for b in blocks) <= min(b[f"{prefix}_high"] for b in blocks))
            overlapping[prefix] += overlap[prefix]
        cells = [f"{b['joules_per_launch']:.5g} ±{_half(b, 'joules_per_launch'):.2f} ±{_half(b, 'between_runs'):.2f}"
                 for b in blocks]
        print(f"| {case.rsplit('::', 1)[-1]} | " + " | ".join(cells) +
              f" | {(max(means) / min(means) - 1) * 100:.2f}% | {'yes' if overlap['joules_per_launch'] else 'no'} | "
              f"{'yes' if overlap['between_runs'] else 'no'} |")
    print(f"{len(common)} cases: every run's interval overlaps every other's for {overlapping['joules_per_launch']} "
          f"(this run's windows), for {overlapping['between_runs']} (with the spread between runs)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.energy_check", description=summary(__doc__))
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("measure", help="the cases, NVML's readings and the variant's A/Bs")
    run.add_argument("--json", help="write every figure here")
    run.add_argument("--traces", help="write the first cases' and the idle GPU's traces into this folder")
    run.add_argument("--ab", type=positive_int, default=10, help="energy A/Bs of the variant, and as many clean ones")
    together = commands.add_parser("agree", help="several runs' joules per launch for the same cases")
    together.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    return measure(args) if args.command == "measure" else agree(args)


if __name__ == "__main__":
    sys.exit(main())
