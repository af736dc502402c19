"""`runs`: the stored runs, newest first, as a table; `runs --removed`: the log of the runs removed (`remove-run`)."""

from __future__ import annotations

import argparse

from kernelwatch.storage.history import HistoryStore, Removal, RunSummary

from .cmd_changes import positive_int

NAME = "runs"
HELP = "list the stored runs, newest first"
COLUMNS = ("id", "date (UTC)", "commit", "branch", "profile", "GPU", "host", "outcome", "cases")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", help="only runs on this GPU model (e.g. 'NVIDIA H200') or GPU UUID")
    parser.add_argument("--outcome", choices=("passed", "failed"), help="only runs of this outcome")
    parser.add_argument("--limit", type=positive_int, metavar="N", help="only the newest N runs (1 or more)")
    parser.add_argument("--removed", action="store_true",
                        help="the runs removed instead (remove-run): when, by whom, why, and what each run was")


def _gpu_text(run: RunSummary) -> str:
    uuids = ", ".join(uuid[:12] for uuid in run.gpu_uuids) or "no UUID"
    return f"{run.gpu_model or 'unknown GPU'} ({uuids})"


def row(run: RunSummary) -> tuple[str, ...]:
    commit = (run.commit or "?")[:10] + ("+dirty" if run.dirty else "")
    return (str(run.id), run.started_at.strftime("%Y-%m-%d %H:%M"), commit, run.branch or "", run.profile or "",
            _gpu_text(run), run.host or "", run.outcome, str(run.case_count))


def table(rows: list[tuple[str, ...]], columns: tuple[str, ...] = COLUMNS) -> str:
    widths = [max(len(line[i]) for line in [columns, *rows]) for i in range(len(columns))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
                     for line in [columns, *rows])


REMOVED_COLUMNS = ("removal", "removed (UTC)", "by", "run", "date (UTC)", "commit", "GPU", "cases", "reason")


def removed_row(removal: Removal) -> tuple[str, ...]:
    run = removal.run
    return (str(removal.id), removal.removed_at.strftime("%Y-%m-%d %H:%M"), removal.who, str(removal.run_id),
            run["started_at"][:16], (run["commit"] or "?")[:10], run["gpu_model"] or "unknown GPU",
            str(run["case_count"]), removal.reason)


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    if args.removed:
        removals = store.removals()[:args.limit]
        print(table([removed_row(removal) for removal in removals], REMOVED_COLUMNS) if removals else
              f"no run was removed from {store.safe_url}")
        return 0
    runs = store.runs(gpu=args.gpu, outcome=args.outcome, limit=args.limit)
    if not runs:
        print(f"no stored run in {store.safe_url}" + (" matches" if args.gpu or args.outcome else ""))
        return 0
    print(table([row(run) for run in runs]))
    return 0
