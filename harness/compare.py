"""Verdicts and the markdown report from two saved runs, on any machine (no GPU needed).

    python -m harness.compare OLD.json NEW.json [--report report.md]

OLD and NEW are files the suite saved (baselines/<gpu>/NNNN_*.json, a
--benchmark-json output, or a run exported from the history store). Every case
of NEW is judged against OLD with the same rules as a live run
(harness/verdict/against_baseline.py): the noise model's floor depends on
whether both runs were recorded on the same GPU (UUID), and a case timed by
another timer in OLD is reported "other timer", not judged. Unlike a live run,
no other stored runs add their spread to the noise or pool into the reference,
so a ratio here can differ from the one the live run recorded.

The output leads with how many cases were judged and why the others were not.
Exit status: 0 when no case is slower; 1 when a case is slower; 2 when a file
cannot be used, or no case of NEW could be judged (the reason is printed).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from harness.report.markdown import counts_text, markdown_report, verdict_counts, where, write_report
from harness.storage.runs import BaselineError, load_run
from harness.verdict.against_baseline import Baseline, judge_record, run_gpu_uuid
from harness.verdict.labels import JUDGED, SLOWER, Verdict
from harness.verdict.record import records_of

EXIT_OK, EXIT_SLOWER, EXIT_UNUSABLE = 0, 1, 2


def compare_runs(old_path: Path, new_path: Path) -> tuple[list[Verdict], str]:
    """Judge NEW's records against OLD; returns (verdicts, markdown report)."""
    new_doc = load_run(new_path)
    gpu = (new_doc.get("machine_info") or {}).get("gpu") or {}
    old_doc = load_run(old_path, expected_gpu=gpu.get("name"))
    baseline = Baseline.from_doc(old_path, old_doc)
    uuid = run_gpu_uuid(new_doc)
    records = records_of(new_doc)
    verdicts = [judge_record(record, baseline, current_gpu_uuid=uuid) for record in records]
    recorded_on = SimpleNamespace(name=gpu.get("name", "unknown GPU"), uuid=uuid, host=gpu.get("host", "unknown host"))
    title = f"Kernel suite on {where(recorded_on)} vs `{old_path}`"
    return verdicts, markdown_report(title, verdicts, {r.case: r for r in records}, [judged_line(verdicts)])


def judged_line(verdicts: list[Verdict]) -> str:
    """"8 of 86 cases judged; not judged: 54 other timer, 24 other host": what the comparison could say."""
    judged = sum(v.label in JUDGED for v in verdicts)
    others = Counter(v.label for v in verdicts if v.label not in JUDGED)
    why = f"; not judged: {counts_text(verdict_counts(others.elements()))}" if others else ""
    return f"{judged} of {len(verdicts)} cases judged{why}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.compare", description=__doc__.splitlines()[0],
        epilog="exit status: 0 no case slower, 1 a case slower, 2 a file unusable or no case judged")
    parser.add_argument("old", type=Path, help="the reference run (JSON saved by the suite)")
    parser.add_argument("new", type=Path, help="the run to judge")
    parser.add_argument("--report", type=Path, help="also write the markdown report here")
    args = parser.parse_args(argv)
    try:
        verdicts, text = compare_runs(args.old, args.new)
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.report:
        try:
            write_report(args.report, text)
        except OSError as error:
            print(f"error: could not write the report {args.report}: {error}", file=sys.stderr)
            return EXIT_UNUSABLE
    print(judged_line(verdicts))
    if args.old.resolve() == args.new.resolve():
        print(f"note: {args.old} was compared with itself: every judged case is 'same' by construction")
    print(text)
    counts = verdict_counts(v.label for v in verdicts)
    print(counts_text(counts))
    if not any(v.label in JUDGED for v in verdicts):
        print("error: no case could be judged: the runs share no case timed by the same timer on a comparable "
              "machine", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_SLOWER if counts.get(SLOWER) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
