"""`export RUN`: a stored run back as pytest-benchmark JSON (what `python -m kernelwatch.compare` reads)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kernelwatch.storage.history import HistoryError, HistoryStore
from kernelwatch.storage.history.documents import write_text_atomically

NAME = "export"
HELP = "write a stored run as pytest-benchmark JSON (to stdout, or to a file with -o)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", type=int, metavar="RUN", help="the run's id (see `runs`)")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of stdout")


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    text = json.dumps(store.export_run(args.run_id), indent=2) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        write_text_atomically(args.output, text, replace=True)
    except OSError as error:
        raise HistoryError(f"cannot write run {args.run_id} to {args.output}: {error.strerror or error}") from None
    print(f"run {args.run_id} written to {args.output}", file=sys.stderr)
    return 0
