"""Verdicts and the markdown report from two saved runs, on any machine (no GPU needed).

    python -m harness.compare OLD.json NEW.json [--report report.md]

OLD and NEW are files the suite saved (baselines/<gpu>/NNNN_*.json, or a
--benchmark-json output). Every case of NEW is judged against OLD with the
same rules as a live run (harness/verdict/against_baseline.py): the noise model's floor
depends on whether both runs were recorded on the same GPU (UUID), and a case
timed by another timer in OLD is reported "other timer", not judged. Unlike a
live run, no other stored runs add their spread to the noise or pool into the
reference, so a ratio here can differ from the one the live run recorded.
Exit status: 0 when nothing regressed, 1 when a case regressed, 2 when a file
cannot be used (the reason is printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

from harness.report.markdown import counts_text, markdown_report, verdict_counts, write_report
from harness.storage.runs import BaselineError, load_run
from harness.verdict.against_baseline import Baseline, run_gpu_uuid
from harness.verdict.against_baseline import judge_record as judge_one
from harness.verdict.record import records_of
from harness.verdict.stats import REGRESSED


def compare_runs(old_path: Path, new_path: Path) -> tuple[list, str]:
    """Judge NEW's records against OLD; returns (records with verdicts, markdown report)."""
    new_doc = load_run(new_path)
    gpu = (new_doc.get("machine_info") or {}).get("gpu") or {}
    old_doc = load_run(old_path, expected_gpu=gpu.get("name"))
    baseline = Baseline.from_doc(old_path, old_doc)
    uuid = run_gpu_uuid(new_doc)
    records = records_of(new_doc)
    for record in records:
        judge_one(record, baseline, current_gpu_uuid=uuid)
    where = SimpleNamespace(name=gpu.get("name", "unknown GPU"), uuid=uuid, host=gpu.get("host", "unknown host"))
    return records, markdown_report(records, where, old_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.compare", description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the baseline run (JSON saved by the suite)")
    parser.add_argument("new", type=Path, help="the run to judge")
    parser.add_argument("--report", type=Path, help="also write the markdown report here")
    args = parser.parse_args(argv)
    try:
        records, text = compare_runs(args.old, args.new)
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.report:
        try:
            write_report(args.report, text)
        except OSError as error:
            print(f"error: could not write the report {args.report}: {error}", file=sys.stderr)
            return 2
    print(text)
    counts = verdict_counts(records)
    print(counts_text(counts))
    return 1 if counts.get(REGRESSED) else 0


if __name__ == "__main__":
    sys.exit(main())
