"""`acknowledge CASE RUN --reason TEXT`: accept the change of a case at a run, so that `changes` passes."""

from __future__ import annotations

import argparse

from harness.storage.history import HistoryStore

NAME = "acknowledge"
HELP = "accept the change of CASE at RUN (the first run after its step, as `changes` prints it), with a reason"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE", help="the case's pytest node id")
    parser.add_argument("run_id", type=int, metavar="RUN", help="the first run after the step (see `changes`)")
    parser.add_argument("--reason", required=True, metavar="TEXT", help="why the change is accepted (required)")
    parser.add_argument("--who", help="who accepts it (default: the login name)")


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    store.acknowledge(args.case, args.run_id, reason=args.reason, who=args.who)
    print(f"acknowledged the change of {args.case} at run {args.run_id}: {args.reason.strip()}")
    return 0
