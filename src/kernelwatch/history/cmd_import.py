"""`import PATH...`: stored pytest-benchmark runs into the store (a folder: its NNNN_*.json runs in number order)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelwatch.storage.history import AlreadyRecorded, HistoryStore, RefusedRun
from kernelwatch.storage.history.documents import BaselineError, load_run, stored_runs

NAME = "import"
CREATES_STORE = True  # the one command that makes a store that does not exist
HELP = "record stored runs (files, or folders of NNNN_*.json runs) in the store; a run stored before is skipped"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a run's JSON file or a folder of runs")
    parser.add_argument("--outcome", choices=("passed", "failed"), default="passed",
                        help="the runs' outcome (default passed; a failed run is never a reference)")
    parser.add_argument("--profile", default="nightly",
                        help="the sampling profile the runs were timed with (default nightly, as the committed "
                             "baselines were)")
    parser.add_argument("--label", help="a label stored with each run")


def files_of(paths: list[Path]) -> list[Path]:
    """The run files the paths name: a folder's numbered runs oldest first, and those of its sub-folders."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(stored_runs(path))
            files.extend(files_of(sorted(child for child in path.iterdir() if child.is_dir())))
        else:
            files.append(path)  # load_run names a missing file
    return files


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    files = files_of(args.paths)
    if not files:
        print(f"error: no stored run in {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 1
    imported = skipped = failed = 0
    for path in files:
        try:
            doc = load_run(path)
            run_id = store.record_run(doc, outcome=args.outcome, profile=args.profile, label=args.label,
                                      source=str(path))
        except AlreadyRecorded as known:
            print(f"skipped {path}: already recorded as run {known.run_id}")
            skipped += 1
        except (BaselineError, RefusedRun) as error:  # this file alone: the others are still imported
            print(f"error: {error}", file=sys.stderr)
            failed += 1
        else:
            print(f"imported {path} as run {run_id} ({len(doc['benchmarks'])} cases)")
            imported += 1
    print(f"{imported} imported, {skipped} skipped (already recorded), {failed} failed, into {store.safe_url}")
    return 1 if failed else 0
