"""`import PATH...`: stored pytest-benchmark runs into the store (a folder: its NNNN_*.json runs in number order)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelwatch.storage.history import AlreadyRecorded, HistoryStore, RefusedRun
from kernelwatch.storage.history.documents import (
    BaselineError,
    DocumentError,
    case_outcome,
    checked_run,
    load_run,
    stored_runs,
)
from kernelwatch.verdict.record import records_of

NAME = "import"
CREATES_STORE = True  # the one command that makes a store that does not exist
HELP = "record stored runs (files, or folders of NNNN_*.json runs) in the store; a run stored before is skipped"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a run's JSON file or a folder of runs")
    parser.add_argument("--outcome", choices=("passed", "failed"), default="passed",
                        help="the runs' outcome (default passed); each case keeps its own from its verdict (slower: "
                             "failed, never a reference)")
    parser.add_argument("--other-failures", type=count_of_tests, metavar="N",
                        help="of a failed run: how many failed tests were not timed cases (a correctness test), as "
                             "the plugin counts them. 0: its cases' verdicts are its whole failure, and each case "
                             "that did not fail may be a reference; not given: unknown, and no case of it is one")
    parser.add_argument("--profile", default="nightly",
                        help="the sampling profile the runs were timed with (default nightly, as the committed "
                             "baselines were)")
    parser.add_argument("--label", help="a label stored with each run")


def count_of_tests(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a count of tests, 0 or more: {text!r}")
    return value


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


def unexplained(doc: dict, args: argparse.Namespace) -> str | None:
    """Why a failed run with no other failure is no such run: none of its cases failed on its verdicts."""
    if args.outcome != "failed" or args.other_failures != 0:
        return None
    try:
        records = records_of(checked_run(doc))  # its cases as the store reads them (version 1 migrated)
    except DocumentError:
        return None  # record_run refuses it, saying why
    if any(case_outcome(record) == "failed" for record in records):
        return None
    return ("a failed run with --other-failures 0 failed on its cases' verdicts, and none of this run's cases "
            "failed on one (slower, or an energy or phase verdict): give the count of its other failed tests")


def check_arguments(args: argparse.Namespace) -> None:
    """Before the store is opened (or made): other failures are those of a failed run."""
    if args.outcome == "passed" and args.other_failures:
        args.parser_error("--other-failures counts the failed tests of a failed run: give --outcome failed")


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    files = files_of(args.paths)
    if not files:
        print(f"error: no stored run in {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 1
    imported = skipped = failed = 0
    for path in files:
        try:
            doc = load_run(path, migrate=False)  # the store checks it as written, then migrates it
            if unexplained(doc, args):
                raise RefusedRun(f"cannot record {path}: {unexplained(doc, args)}")
            run_id = store.record_run(doc, outcome=args.outcome, profile=args.profile, label=args.label,
                                      source=str(path), other_failures=args.other_failures)
        except AlreadyRecorded as known:
            print(f"skipped {path}: already recorded as run {known.run_id}")
            skipped += 1
        except (BaselineError, RefusedRun) as error:  # this file alone: the others are still imported
            print(f"error: {error}", file=sys.stderr)
            failed += 1
        else:
            unknown = args.outcome == "failed" and args.other_failures is None
            print(f"imported {path} as run {run_id} ({len(doc['benchmarks'])} cases)"
                  + ("; failed, its other failures unknown: none of its cases is a reference (--other-failures 0 "
                     "where only its cases' verdicts failed it)" if unknown else ""))
            imported += 1
    print(f"{imported} imported, {skipped} skipped (already recorded), {failed} failed, into {store.safe_url}")
    return 1 if failed else 0
