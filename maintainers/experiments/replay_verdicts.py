"""Replay today's verdict rules on recorded sensitivity runs: false alarms and misses per case.

    python -m maintainers.experiments.replay_verdicts FOLDER [--baseline-runs K] [--draws N] [--floor F] [--min-us 50]
    python -m maintainers.experiments.replay_verdicts FOLDER --against scratch-baseline [--floor F] [--min-us 50]

FOLDER holds same-*.json (unmodified runs) and slowed-*.json (runs with a
calibrated slowdown), as `maintainers/device/run_gpu_suites.sh sensitivity` writes them.
Each draw takes K of the unmodified runs as this GPU's stored runs (the last
drawn is the baseline; all K are the noise model's history and, being the same
code on the same GPU, the pooled reference), then judges every other
unmodified run and every slowed run with kernelwatch.verdict.against_baseline.judge_record, as a
live run would. With --against PREFIX, the stored runs are FOLDER/PREFIX-*.json
instead (the baselines the sensitivity step compared against; the last is the
baseline) and every unmodified and slowed run is judged once: the live run's
verdicts, re-judged by today's code. --floor replaces the same-GPU floor, to
ask what another floor would have done. Prints, per case of at least --min-us µs (baseline median),
how often an unmodified run was flagged and a slowed one was not, and totals.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from kernelwatch.verdict.against_baseline import Baseline, history_of, judge_record, run_gpu_uuid
from kernelwatch.verdict.record import records_of
from kernelwatch.verdict.stats import SLOWER
from kernelwatch.verdict.threshold import DEFAULT_FLOORS, floors_with_threshold
from maintainers.environment import summary
from maintainers.experiments.sensitivity_table import load_docs  # (PREFIX-1.json, PREFIX-2.json, ... in run order)


def judge_against(stored: dict[str, dict], judged: list[tuple[dict, bool]], counts: dict[str, list[int]], *,
                  floors, min_s: float) -> None:
    """Judge each (run, is_slowed) against the stored runs (the last is the baseline); add to ``counts``."""
    name = list(stored)[-1]
    baseline = Baseline.from_doc(Path(name), stored[name])
    history = history_of(stored)
    for doc, is_slowed in judged:
        for record in records_of(doc):
            base = baseline.cases.get(record.case)
            if base is None or base.median_s < min_s:
                continue
            verdict = judge_record(record, baseline, gpu_uuid=run_gpu_uuid(doc),
                                   history=history.get(record.case, []), floors=floors)
            tally = counts.setdefault(record.case, [0, 0, 0, 0])
            flagged = verdict.label == SLOWER
            if is_slowed:
                tally[2] += not flagged
                tally[3] += 1
            else:
                tally[0] += flagged
                tally[1] += 1


def replay(same: list[dict], slowed: list[dict], *, baseline_runs: int, draws: int, floors, min_s: float,
           seed: int = 0) -> dict[str, list[int]]:
    """Per case: [false alarms, unmodified judged, misses, slowed judged] over all draws."""
    if not 1 <= baseline_runs < len(same):
        raise ValueError(f"--baseline-runs must be 1 to {len(same) - 1} for {len(same)} unmodified runs, "
                         f"got {baseline_runs}")
    rng = random.Random(seed)
    counts: dict[str, list[int]] = {}
    for _ in range(draws):
        chosen = rng.sample(range(len(same)), baseline_runs)
        stored = {f"{i:04d}_same-{index + 1}.json": same[index] for i, index in enumerate(chosen, 1)}
        judged = [(doc, False) for i, doc in enumerate(same) if i not in chosen] + [(doc, True) for doc in slowed]
        judge_against(stored, judged, counts, floors=floors, min_s=min_s)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.replay_verdicts", description=summary(__doc__))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--baseline-runs", type=int, default=3)
    parser.add_argument("--draws", type=int, default=60)
    parser.add_argument("--floor", type=float, help="same-GPU floor as a fraction (default: the suite's)")
    parser.add_argument("--min-us", type=float, default=50.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", metavar="PREFIX", help="judge once against FOLDER/PREFIX-*.json")
    args = parser.parse_args(argv)
    same, slowed = load_docs(args.folder, "same"), load_docs(args.folder, "slowed")
    floors = floors_with_threshold(DEFAULT_FLOORS, args.floor)
    if args.against:
        baselines = load_docs(args.folder, args.against)
        if not baselines or not (same or slowed):
            print(f"error: {args.folder} needs {args.against}-*.json and same-*.json or slowed-*.json", file=sys.stderr)
            return 2
        counts: dict[str, list[int]] = {}
        stored = {f"{i:04d}_{args.against}-{i}.json": doc for i, doc in enumerate(baselines, 1)}
        judge_against(stored, [(doc, False) for doc in same] + [(doc, True) for doc in slowed], counts,
                      floors=floors, min_s=args.min_us * 1e-6)
        heading = f"against the {len(baselines)} {args.against} runs"
    else:
        if len(same) < 2 or not slowed:
            print(f"error: {args.folder} needs at least 2 same-*.json and 1 slowed-*.json", file=sys.stderr)
            return 2
        try:
            counts = replay(same, slowed, baseline_runs=args.baseline_runs, draws=args.draws, floors=floors,
                            min_s=args.min_us * 1e-6, seed=args.seed)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        heading = f"{args.draws} draws of {args.baseline_runs} unmodified runs as the stored runs"
    print(f"{heading}; same-GPU floor {floors.same_gpu * 100:g}%\n")
    print("| case | unmodified flagged | slowed missed |")
    print("| --- | --- | --- |")
    for case, (alarms, quiet, misses, slow) in sorted(counts.items()):
        print(f"| {case.split('::')[-1]} | {alarms} of {quiet} | {misses} of {slow} |")
    totals = [sum(column) for column in zip(*counts.values(), strict=True)] if counts else [0, 0, 0, 0]
    print(f"| **all** | {totals[0]} of {totals[1]} | {totals[2]} of {totals[3]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
