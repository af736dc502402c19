"""`site OUT/`: the static dashboard of the store's histories (src/kernelwatch/history/site.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kernelwatch.storage.history import HistoryError, HistoryStore

from .accuracy import accuracy_series
from .cmd_changes import add_series_arguments, analysed
from .site import write_site

NAME = "site"
HELP = "write the dashboard (index, a page per case, steps and acknowledgements) into OUT/; prints its index"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the folder to write (created; pages replaced)")
    add_series_arguments(parser)


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    analysis = analysed(args, store)
    if analysis is None:
        return 2
    try:
        accuracy = {key: points for key, points in accuracy_series(store.accuracy_history(None, any_profile=True)).items()
                    if args.gpu is None or key.gpu == args.gpu or points[-1].gpu_model == args.gpu}
        index = write_site(args.out, analysis.series, analysis.steps, acknowledged=analysis.acknowledged,
                           reason=analysis.reason, accuracy=accuracy)
    except OSError as error:
        raise HistoryError(f"cannot write the site into {args.out}: {error.strerror or error}") from None
    print(index)
    return 0
