"""`changes`: the steps of every case's history, newest first; exit 1 for an open slower step in the newest runs.

A step is open when it is slower, its first run after lies among the series'
newest N runs, and nobody acknowledged it (`acknowledge CASE RUN --reason`, RUN
being that first run after).  Creeps are printed, and never fail the check: a
creep's end moves with every run, so it has no run to acknowledge; the step it
becomes does.  --since and --gpu narrow what is printed and what is checked.
"""

from __future__ import annotations

import argparse
import shlex
from datetime import UTC, datetime

from harness.storage.history import HistoryStore
from harness.units import p_text

from .analysis import Analysis, analyse
from .series import Point
from .steps import SLOWER, STEP, Step, newest_first, steps_in_newest

NAME = "changes"
HELP = "print the steps of every case's history, newest first; exit 1 for an open slower step in the newest runs"
DEFAULT_NEWEST = 3


def since_date(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM): {text!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of runs, 1 or more: {text!r}")
    return value


def add_series_arguments(parser: argparse.ArgumentParser) -> None:
    """--gpu and --by: which series are read (shared with `site`)."""
    parser.add_argument("--gpu", metavar="UUID|MODEL", help="only this physical GPU (UUID) or GPU model")
    parser.add_argument("--by", choices=("gpu_uuid", "gpu_model"), default="gpu_uuid",
                        help="one series per physical GPU (default) or per GPU model (mixing GPUs: a 5%% floor)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", type=since_date, metavar="DATE",
                        help="only steps whose first run after is at or after DATE (UTC unless it says)")
    add_series_arguments(parser)
    parser.add_argument("--newest", type=positive_int, default=DEFAULT_NEWEST, metavar="N",
                        help=f"an open slower step in a series' newest N runs fails the check (default "
                             f"{DEFAULT_NEWEST})")


def _run_text(point: Point) -> str:
    return f"run {point.run_id}, {point.started_at:%Y-%m-%d %H:%M} UTC, commit {point.commit}"


def describe(step: Step, analysis: Analysis, *, in_newest: bool, newest: int) -> list[str]:
    """The lines of one step (or creep)."""
    key = step.key
    limit = analysis.detectable[key]
    lines = [f"{step.direction} {step.kind} x{step.ratio:.3f} (95% {step.ratio_low:.3f}-{step.ratio_high:.3f}, "
             f"p {p_text(step.p_value)}): {key.case}",
             f"  GPU {key.gpu}, timer {key.timer}, profile {key.profile}; detectable change "
             f"{limit.fraction * 100:.1f}% ({limit.because}); {step.runs_before} runs before, "
             f"{step.runs_after} after"]
    if step.kind == STEP:
        lines += [f"  last run before: {_run_text(step.before)}", f"  first run after: {_run_text(step.after)}"]
    else:
        lines += [f"  from: {_run_text(step.before)}", f"  to:   {_run_text(step.after)}"]
    lines.append(f"  commits: {step.commit_range}")
    reason = analysis.reason(step)
    if reason is not None:
        lines.append(f"  acknowledged: {reason}")
    elif step.kind == STEP and step.direction == SLOWER and in_newest:
        lines.append(f"  OPEN: in the newest {newest} runs; if intended: python -m harness.history acknowledge "
                     f"{shlex.quote(key.case)} {step.after.run_id} --reason TEXT")
    return lines


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    analysis = analyse(store, by=args.by, gpu=args.gpu)
    if not analysis.series:
        print(f"no passed run in {store.safe_url}" + (f" on {args.gpu}" if args.gpu else ""))
        return 0
    recent: set[Step] = set()
    shown: list[Step] = []
    for one in analysis.series:
        steps = analysis.steps[one.key]
        recent.update(steps_in_newest(steps, one, args.newest))
        shown.extend(s for s in steps if args.since is None or s.after.started_at >= args.since)
    open_steps = [s for s in shown if s.kind == STEP and s.direction == SLOWER and s in recent
                  and analysis.reason(s) is None]
    for step in newest_first(shown):
        print("\n".join(describe(step, analysis, in_newest=step in recent, newest=args.newest)))
    cases = len({one.key.case for one in analysis.series})
    print(f"{len(shown)} changes in {len(analysis.series)} series ({cases} cases)"
          f"{f' since {args.since:%Y-%m-%d %H:%M}' if args.since else ''}; "
          f"{len(open_steps)} open slower steps in the newest {args.newest} runs")
    return 1 if open_steps else 0
