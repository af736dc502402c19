"""How much each case's median moves between fresh processes (maintainers/device/run_gpu_suites.sh spread).

    python -m maintainers.experiments.spread_table FOLDER NAME

Reads FOLDER/NAME-*.json (pytest-benchmark JSON of N runs of the same cases,
each in its own process) and prints, per case, the median of the runs'
medians, their range as a percentage of it, and the median within-run rsd:
a range far above what the within-run noise explains is noise that only
comes back between processes (a run's setup: allocations, stream mapping).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from kernelwatch.units import format_duration
from maintainers.environment import summary
from maintainers.experiments.sensitivity_table import load  # (NAME-1.json, NAME-2.json, ... in run order)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.spread_table", description=summary(__doc__))
    parser.add_argument("folder", type=Path, help="the work folder of a run_gpu_suites.sh `spread` step")
    parser.add_argument("name", help="the runs' name: FOLDER/NAME-1.json, NAME-2.json, ...")
    args = parser.parse_args(argv)
    folder, name = args.folder, args.name
    loaded = load(folder, name)
    if not loaded:
        print(f"no {name}-*.json in {folder}")
        return 1
    runs: dict[str, list] = {}
    for records in loaded:
        for record in records:
            runs.setdefault(record.case.split("::")[-1], []).append(record)
    print(f"{name}: {len(loaded)} runs")
    print("| case | median of medians | range between runs | medians | within-run rsd (median) |")
    print("| --- | --- | --- | --- | --- |")
    for case, records in sorted(runs.items()):
        medians = [r.median_s for r in records]
        middle = statistics.median(medians)
        spread = 100 * (max(medians) - min(medians)) / middle
        rsds = [statistics.stdev(r.samples) / statistics.fmean(r.samples) for r in records if len(r.samples) > 1]
        shown = ", ".join(f"{m / middle:.3f}" for m in medians)
        rsd = f"{100 * statistics.median(rsds):.2f}%" if rsds else "-"
        print(f"| {case} | {format_duration(middle)} | {spread:.2f}% | {shown} | {rsd} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
