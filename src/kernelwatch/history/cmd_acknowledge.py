"""`acknowledge CASE RUN --reason TEXT`: accept the change of a case at a run.

RUN is the first run after a step (as `changes` prints it) or a run where the case failed
(the nightly's verdict, as its report prints it); any other run is refused (exit 1, one
sentence naming where the case's steps and failures are). From that run on the case's
reference is the new level: the next nightly judges it against RUN and the runs after it,
never those before, and `changes` no longer counts the step as open.
"""

from __future__ import annotations

import argparse

from kernelwatch.storage.history import HistoryError, HistoryStore

from .analysis import no_change_at

NAME = "acknowledge"
HELP = ("accept the change of CASE at RUN (the first run after a step, or a run where it failed): from RUN on, "
        "its reference is the new level")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE", help="the case's pytest node id")
    parser.add_argument("run_id", type=int, metavar="RUN", help="the first run after the step, or the run where it "
                                                               "failed (see `changes` or the nightly's report)")
    parser.add_argument("--reason", required=True, metavar="TEXT", help="why the change is accepted (required)")
    parser.add_argument("--who", help="who accepts it (default: the login name)")


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    refusal = no_change_at(store, args.case, args.run_id) if args.reason.strip() else None  # a blank reason first
    if refusal:
        raise HistoryError(refusal)
    store.acknowledge(args.case, args.run_id, reason=args.reason, who=args.who)
    print(f"acknowledged the change of {args.case} at run {args.run_id}: {args.reason.strip()}; from that run on, "
          f"its reference is the new level")
    return 0
