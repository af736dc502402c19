"""`remove-run RUN --reason TEXT`: take a run that should not be there out of the store, its removal logged.

A run of samples a broken timer gave, or of another GPU imported by mistake, moves every series it
is in and every reference it is pooled into. This removes it, its cases and the acknowledgements
at it, in one transaction, and logs the removal in the store (its reason, who, when, and what the
run was): `runs --removed` lists the log. The run's document is not kept: `export RUN -o FILE`
first to keep it (`import` takes it back).
"""

from __future__ import annotations

import argparse

from kernelwatch.storage.history import HistoryStore

NAME = "remove-run"
HELP = "remove a run that should not be there (its cases and acknowledgements too), its reason logged in the store"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", type=int, metavar="RUN", help="the run's id (see `runs`)")
    parser.add_argument("--reason", required=True, metavar="TEXT", help="why it should not be there (required)")
    parser.add_argument("--who", help="who removes it (default: the login name)")


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    removal = store.remove_run(args.run_id, reason=args.reason, who=args.who)
    run = removal.run
    acknowledged = run["acknowledgements"]
    print(f"removed run {removal.run_id} ({run['started_at']} UTC, commit {(run['commit'] or '?')[:10]}, "
          f"{run['gpu_model'] or 'unknown GPU'}, {run['case_count']} cases"
          + (f", {acknowledged} acknowledgement{'s' if acknowledged != 1 else ''}" if acknowledged else "")
          + f") from {store.safe_url}: {removal.reason}; logged as removal {removal.id} (`runs --removed`)")
    return 0
