"""How often the verdicts flag unmodified and slowed runs (maintainers/device/run_gpu_suites.sh sensitivity).

    python -m maintainers.experiments.sensitivity_table FOLDER [--min-us 50]

Reads FOLDER/same-*.json (runs of unchanged code against a baseline) and
FOLDER/slowed-*.json (the same runs with a calibrated slowdown injected by
tests/plugins/slowdown.py). Prints, per run, how many cases were flagged, and
per case of at least --min-us µs (baseline median), in how many slowed runs
it was flagged, its ratios and its smallest detectable change. Where the
slowed records carry their injection (the plugin's `unslowed_median_s`), two
more columns split a slowed ratio into its parts: the case before the spin
against the baseline (the process's own offset) and the slowdown the spin
added. Exit status 1 when an unmodified run flagged anything or a slowed
case of that size was missed, or was not timed at all in a slowed run (a case
of that size in the unmodified runs, absent from a slowed one).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from kernelwatch.verdict.labels import SLOWER
from kernelwatch.verdict.record import records_of
from kernelwatch.verdict.stats import format_duration
from maintainers.environment import summary


def load_docs(folder: Path, prefix: str) -> list[dict]:
    """The saved runs FOLDER/PREFIX-1.json, PREFIX-2.json, ... in run order."""
    paths = sorted(folder.glob(f"{prefix}-*.json"), key=lambda p: int(p.stem.split("-")[-1]))
    return [json.loads(p.read_text()) for p in paths]


def load(folder: Path, prefix: str) -> list[list]:
    """The case records of each saved run FOLDER/PREFIX-N.json, in run order."""
    return [records_of(doc) for doc in load_docs(folder, prefix)]


def baseline_median(record) -> float | None:
    return record.median_s / record.ratio if record.ratio else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.sensitivity_table", description=summary(__doc__))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--min-us", type=float, default=50.0)
    args = parser.parse_args(argv)
    same, slowed = load(args.folder, "same"), load(args.folder, "slowed")
    floor = args.min_us * 1e-6
    ok = True
    # a case of that size timed unmodified but missing from a slowed run (its test failed before it
    # was timed) is a slowdown nobody saw: it counts as missed
    expected = {r.case for records in same for r in records if (baseline_median(r) or 0) >= floor}
    print(f"| run | cases | regressed | cases >= {args.min_us:g} µs | of those regressed | not timed |")
    print("| --- | --- | --- | --- | --- | --- |")
    not_timed: dict[str, int] = {}
    for label, runs in (("unmodified", same), ("slowed", slowed)):
        for i, records in enumerate(runs, 1):
            large = [r for r in records if (baseline_median(r) or 0) >= floor]
            flagged = sum(r.verdict == SLOWER for r in records)
            large_flagged = sum(r.verdict == SLOWER for r in large)
            missing = sorted(expected - {r.case for r in records}) if label == "slowed" else []
            for case in missing:
                not_timed[case] = not_timed.get(case, 0) + 1
            print(f"| {label} {i} | {len(records)} | {flagged} | {len(large)} | {large_flagged} | {len(missing)} |")
            ok &= (flagged == 0) if label == "unmodified" else (large_flagged == len(large) and not missing)
    for case, runs in sorted(not_timed.items()):
        print(f"\n{case}: not timed in {runs} slowed run(s) (its test failed before timing: see the run's log)")
    print()
    per_case: dict[str, list] = {}
    for records in slowed:
        for r in records:
            per_case.setdefault(r.case, []).append(r)
    unmodified: dict[str, list] = {}
    for records in same:
        for r in records:
            unmodified.setdefault(r.case, []).append(r)
    print("| case | baseline | detectable (median) | flagged slowed | ratio slowed (min-max) "
          "| flagged unmodified | ratio unmodified (min-max) | before the spin, of baseline | added by the spin |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case, records in sorted(per_case.items()):
        base = baseline_median(records[0])
        if base is None or base < floor:
            continue
        ratios = [r.ratio for r in records]
        quiet = unmodified.get(case, [])
        quiet_ratios = [r.ratio for r in quiet if r.ratio] or [float("nan")]
        detectable = statistics.median(r.detectable for r in records if r.detectable is not None)
        injected = [(r.median_s, r.params["unslowed_median_s"]) for r in records if r.params.get("unslowed_median_s")]
        offsets = [before / base for _, before in injected]
        added = [after / before - 1 for after, before in injected]
        split = (f"{min(offsets):.3f}-{max(offsets):.3f} | {100 * min(added):+.1f}% to {100 * max(added):+.1f}%"
                 if injected else "— | —")
        print(f"| {case.split('::')[-1]} | {format_duration(base)} | {100 * detectable:.1f}% "
              f"| {sum(r.verdict == SLOWER for r in records)}/{len(records)} | {min(ratios):.3f}-{max(ratios):.3f} "
              f"| {sum(r.verdict == SLOWER for r in quiet)}/{len(quiet)} "
              f"| {min(quiet_ratios):.3f}-{max(quiet_ratios):.3f} "
              f"| {split} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
