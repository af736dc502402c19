"""Where does energy move between processes? The same case measured on the same buffers, and on fresh copies.

    python -m maintainers.experiments.energy_spread [--rounds N]

Three runs of the nightly's energy cases gave joules per launch 0.3-1.7% apart between processes
while each run's own 95% interval was 0.1-0.4% wide (docs/method.md#energy-between-processes, 2026-12-02). One suspect is where
the inputs live: a fresh process allocates them at other physical addresses (other L2 slices and
HBM channels). Per case this measures, alternating, N times on the buffers it was prepared with
and N times on a fresh copy of the inputs each time (the old copies kept alive, so the memory pool
cannot hand the same block back), with the suite's meter and plan, and prints the spread of each
group. A spread of the fresh copies far above that of the same buffers points at the allocation.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from maintainers.environment import needs_gpu, summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.energy_spread", description=summary(__doc__))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    needs_gpu("maintainers.experiments.energy_spread")
    from kernels import prepare_add, prepare_matmul
    from kernelwatch.timing.energy import EnergyMeter, EnergyPlan, open_power
    from kernelwatch.timing.gpu import gpu_info
    from kernelwatch.timing.profile import PROFILES
    from kernelwatch.timing.timer import GpuTimer
    from suites.perf_cases import random_device

    info = gpu_info()
    power, why_not = open_power()
    if power is None:
        print(why_not, file=sys.stderr)
        return 1
    timer, meter = GpuTimer(info.l2_bytes), EnergyMeter(power)
    plan = EnergyPlan(windows=3, ticks_per_window=5, warm_s=0.2)
    cases = [("warptile_128x256 4096", lambda a, b: prepare_matmul("warptile_128x256", a, b), (4096, 4096)),
             ("cublas 4096", lambda a, b: prepare_matmul("cublas", a, b), (4096, 4096)),
             ("matrix_add_2d_vec4 1024", lambda a, b: prepare_add("matrix_add_2d_vec4", a, b), (1024, 1024)),
             ("matrix_add_2d_vec4 8192", lambda a, b: prepare_add("matrix_add_2d_vec4", a, b), (8192, 8192))]
    print(f"{info.name} {info.uuid}; idle {meter.idle_w():.1f} W")
    print("| case | buffers | J per launch, each measurement | spread (max/min - 1) | °C |")
    print("|---|---|---|---|---|")
    for name, prepare, shape in cases:
        a, b = random_device(shape, 1), random_device(shape, 2)
        same = prepare(a, b)
        median = timer.measure(same.run, PROFILES["nightly"], case=name).median
        kept, groups, temps = [], {"same": [], "fresh": []}, {"same": [], "fresh": []}
        for _ in range(args.rounds):
            fresh = prepare(a.copy(), b.copy())
            kept.append(fresh)
            for label, prepared in (("same", same), ("fresh", fresh)):
                measured = meter.measure(prepared.run, timer.stream, median, plan, case=name)
                groups[label].append(statistics.fmean(measured.joules_per_launch))
                temps[label].append(measured.temperature_c)
        for label, values in groups.items():
            print(f"| {name} | {label} | {', '.join(f'{v:.5g}' for v in values)} | "
                  f"{(max(values) / min(values) - 1) * 100:.2f}% | "
                  f"{min(t[0] for t in temps[label])}-{max(t[1] for t in temps[label])} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
