"""Tables of the history store's GPU runs (maintainers/device/history_gpu_runs.sh): what each verdict flagged, and against what.

    python -m maintainers.experiments.history_verdicts FOLDER [--baseline FILE] [--min-us 50]

Reads FOLDER/same-*.json (unmodified runs judged with --kernelwatch-history) and
FOLDER/slowed-*.json (the same with tests/plugins/slowdown.py's calibrated
slowdown). Per run: cases, how many were slower, and which reference they
used. Per case: how often the unmodified and the slowed runs were flagged
against this GPU's own history, and how often the very same slowed samples
are flagged against the newest committed baseline (kernelwatch.compare, which has
the 5% floor of another GPU). Exit status 1 when an unmodified run flagged a
case or a slowed GPU-timed case of --min-us or more was missed against history.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from kernelwatch.compare import compare_runs
from kernelwatch.storage.runs import stored_runs
from kernelwatch.units import format_duration, percent
from kernelwatch.verdict.labels import HISTORY_REFERENCE, SLOWER
from kernelwatch.verdict.record import TIMER_WALL, records_of
from maintainers.environment import summary


def runs_of(folder: Path, prefix: str) -> list[Path]:
    return sorted(folder.glob(f"{prefix}-*.json"), key=lambda p: int(p.stem.split("-")[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.experiments.history_verdicts", description=summary(__doc__))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--baseline", type=Path, help="default: the newest run of baselines/NVIDIA_H200")
    parser.add_argument("--min-us", type=float, default=50.0)
    args = parser.parse_args(argv)
    baseline = args.baseline or stored_runs(Path("baselines") / "NVIDIA_H200")[-1]
    same, slowed = runs_of(args.folder, "same"), runs_of(args.folder, "slowed")
    ok = True
    print("| run | cases | slower | against history | against the baseline | labels |")
    print("| --- | --- | --- | --- | --- | --- |")
    per_case: dict[str, dict] = {}
    for path in same + slowed:
        records = records_of(json.loads(path.read_text()))
        labels = Counter(r.verdict for r in records)
        own = sum((r.reference or "").startswith(HISTORY_REFERENCE) for r in records)
        print(f"| {path.stem} | {len(records)} | {labels[SLOWER]} | {own} | {len(records) - own} | "
              f"{', '.join(f'{n} {label}' for label, n in sorted(labels.items()))} |")
        kind = path.stem.split("-")[0]
        against_baseline = {v.case: v for v in compare_runs(baseline, path)[0]} if kind == "slowed" else {}
        for r in records:
            entry = per_case.setdefault(r.case, {"wall": r.timer == TIMER_WALL, "median": [], "same": [], "slowed": [],
                                                 "baseline": [], "detectable": [], "injected": [], "base_det": []})
            entry[kind].append(r.verdict == SLOWER)
            if kind == "same":
                entry["median"].append(r.median_s)
                entry["detectable"].append(r.detectable or 0)
            else:
                if r.params.get("unslowed_median_s"):
                    entry["injected"].append(r.median_s / r.params["unslowed_median_s"] - 1)
                verdict = against_baseline.get(r.case)
                if verdict is not None:
                    entry["baseline"].append(verdict.label == SLOWER)
                    entry["base_det"].append(verdict.detectable or 0)
    print()
    print("| case | median | detectable (history) | unmodified flagged | slowed flagged (history) | injected "
          "| same slowed runs flagged against the baseline (its detectable) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for case, e in sorted(per_case.items()):
        median = statistics.median(e["median"]) if e["median"] else None
        big = median is not None and median >= args.min_us * 1e-6 and not e["wall"]
        injected = (f"{percent(min(e['injected']))} to {percent(max(e['injected']))}" if e["injected"] else "—")
        print(f"| `{case.split('::')[-1]}` | {format_duration(median) if median else '—'} | "
              f"{percent(statistics.median(e['detectable'])) if e['detectable'] else '—'} | "
              f"{sum(e['same'])}/{len(e['same'])} | {sum(e['slowed'])}/{len(e['slowed'])} | {injected} | "
              f"{sum(e['baseline'])}/{len(e['baseline'])} "
              f"({percent(statistics.median(e['base_det'])) if e['base_det'] else '—'}) |")
        if any(e["same"]) or (big and e["slowed"] and not all(e["slowed"])):
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
