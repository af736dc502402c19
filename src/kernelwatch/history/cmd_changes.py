"""`changes`: the steps of every case's history, newest first; exit 1 for an open slower step or a failing case.

Every run is read, failed ones too: a step is found at the run where it
happened, and each is printed with the verdicts of the runs at its new level.
A slower step is open when its first run after lies among the series' newest N
runs, or its case still fails in the newest run, and nobody accepted it: an
`acknowledge CASE RUN --reason` at that first run after, or a slowdown accepted
at any run of the new level (an Accept-Slowdown trailer in the nightly, or an
acknowledgement of that run).  A case that failed in its newest runs (the
nightly's verdict) is open even before the change-point detector has runs
enough to call it a step (MIN_RUNS_AT_LEVEL on each side); it is printed with
the commits of its window and the `bisect` line for them.  Creeps are printed,
and never fail the check: a creep's end moves with every run, so it has no run
to acknowledge; the step it becomes does.  --since and --gpu narrow what is
printed and what is checked.  A history too short for any step says so.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import UTC, datetime

from kernelwatch.storage.history import HistoryStore
from kernelwatch.units import p_text
from kernelwatch.verdict.threshold import THRESHOLD_HELP, judging_floors

from .accuracy import accuracy_series, accuracy_steps, describe_step, is_open
from .analysis import Analysis, Failing, analyse
from .bisect import command_line
from .series import Point, Series, states_text
from .steps import MIN_RUNS_AT_LEVEL, SLOWER, STEP, Step, newest_first, steps_in_newest

NAME = "changes"
HELP = ("print the steps of every case's history and the cases failing now, newest first, with their commits; exit 1 "
        "for an open slower step or a failing case")
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
    """--gpu and --by: which series are read, and --threshold: how they are judged (shared with `site`)."""
    parser.add_argument("--gpu", metavar="UUID|MODEL", help="only this physical GPU (UUID) or GPU model")
    parser.add_argument("--by", choices=("gpu_uuid", "gpu_model"), default="gpu_uuid",
                        help="one series per physical GPU (default) or per GPU model (mixing GPUs: a 5%% floor)")
    parser.add_argument("--threshold", metavar="FRACTION", help=THRESHOLD_HELP)


def analysed(args: argparse.Namespace, store: HistoryStore) -> Analysis | None:
    """The store's series judged at the floors a live run takes (--threshold, else $KERNELWATCH_THRESHOLD); None,
    said in one line naming where it came from, for a threshold that is no fraction."""
    try:
        floors = judging_floors(args.threshold)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    return analyse(store, by=args.by, gpu=args.gpu, floors=floors)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", type=since_date, metavar="DATE",
                        help="only steps whose first run after is at or after DATE (UTC unless it says)")
    add_series_arguments(parser)
    parser.add_argument("--newest", type=positive_int, default=DEFAULT_NEWEST, metavar="N",
                        help=f"an open slower step in a series' newest N runs fails the check (default "
                             f"{DEFAULT_NEWEST})")


def _run_text(point: Point) -> str:
    return f"run {point.run_id}, {point.started_at:%Y-%m-%d %H:%M} UTC, commit {point.commit}"


def _accept_hint(case: str, run_id: str) -> str:
    return (f"if intended: python -m kernelwatch.history acknowledge {shlex.quote(case)} {run_id} --reason TEXT "
            f"(or a commit with an Accept-Slowdown trailer before the next nightly)")


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
        one = next(s for s in analysis.series if s.key == key)
        later = [s.index for s in analysis.steps[key] if s.kind == STEP and s.index > step.index]
        level = one.points[step.index:min(later, default=len(one.points))]
        lines += [f"  last run before: {_run_text(step.before)}", f"  first run after: {_run_text(step.after)}",
                  f"  runs after: {states_text(level)}"]
    else:
        lines += [f"  from: {_run_text(step.before)}", f"  to:   {_run_text(step.after)}"]
    lines.append(f"  commits: {step.commit_range}")
    reason = analysis.reason(step)
    failing = analysis.failing.get(key)
    still_failing = failing is not None and failing.step == step
    if reason is not None:
        lines.append(f"  acknowledged: {reason}")
    elif step.kind == STEP and step.direction == SLOWER and (in_newest or still_failing):
        where = f"in the newest {newest} runs" if in_newest else f"still failing in the newest run ({failing.runs} runs)"
        lines.append(f"  OPEN: {where}; {_accept_hint(key.case, step.after.run_id)}")
        lines.append(f"  find the commit: {command_line(key.case, step.before.commit, step.after.commit, key.profile)}")
    return lines


def _why_no_step(runs_after: int) -> str:
    """Why a case failing since some run is no step: too few runs since, or (with enough) a change the detector
    does not call one: under the detectable change, or a failure of its energy or a phase, not of its time."""
    runs = f"{runs_after} run{'s' if runs_after != 1 else ''}"
    if runs_after < MIN_RUNS_AT_LEVEL:
        return f"not yet a step: {runs} at the new level, {MIN_RUNS_AT_LEVEL} needed"
    return (f"no step in its {runs} since: its time moved less than the detectable change, or it failed on its "
            "energy or a phase")


def describe_failing(failing: Failing, one: Series) -> list[str]:
    """The lines of a case failing in its newest runs that no step holds yet."""
    key = failing.key
    runs_after = len(one.points) - one.points.index(failing.first)
    lines = [f"slower (the nightly's verdict) since run {failing.first.run_id}, {failing.runs} failed "
             f"run{'s' if failing.runs != 1 else ''}: {key.case}",
             f"  GPU {key.gpu}, timer {key.timer}, profile {key.profile}; " + _why_no_step(runs_after)]
    if failing.before is not None:
        lines.append(f"  last run before: {_run_text(failing.before)}")
    lines.append(f"  first failed run: {_run_text(failing.first)}")
    window = failing.window or {}
    commits = window.get("commits") or []
    lines.append(f"  commits: {failing.commit_range}"
                 + (f" ({len(commits)} commit{'' if len(commits) == 1 else 's'})" if commits else "")
                 + (f"; {window['link']}" if window.get("link") else ""))
    lines += [f"    {sha[:12]} {subject}" for sha, subject in commits[:12]]
    lines.append(f"  OPEN: failing in the newest run; {_accept_hint(key.case, failing.first.run_id)}")
    base, _, head = failing.commit_range.partition("..")
    if "?" not in (base, head):
        lines.append(f"  find the commit: {command_line(key.case, base, head, key.profile)}")
    return lines


def too_short_text(analysis: Analysis) -> str | None:
    """What the history lacks for a step, where some series are too short for one."""
    short = analysis.too_short()
    if not short:
        return None
    counts = sorted({len(one) for one in short})
    runs = f"{counts[0]} run{'' if counts[0] == 1 else 's'} each" if len(counts) == 1 else f"{counts[0]}-{counts[-1]} runs"
    return (f"too short to judge a step: {len(short)} of {len(analysis.series)} series have fewer than "
            f"{2 * MIN_RUNS_AT_LEVEL} runs ({runs}); a step needs {MIN_RUNS_AT_LEVEL} runs on each side")


def accuracy_changes(args: argparse.Namespace, store: HistoryStore) -> tuple[int, int]:
    """Print the accuracy steps (src/kernelwatch/history/accuracy.py), newest first: (steps shown, open ones)."""
    series = accuracy_series(store.accuracy_history(None, any_profile=True))
    found = []
    for key, points in series.items():
        if args.gpu is not None and key.gpu != args.gpu and points[-1].gpu_model != args.gpu:
            continue
        for step in accuracy_steps(points, key):
            if args.since is None or datetime.fromisoformat(step.after.started_at) >= args.since:
                found.append((step, points))
    found.sort(key=lambda pair: (pair[0].after.started_at or "", pair[0].key.case), reverse=True)
    for step, points in found:
        print("\n".join(describe_step(step, points, args.newest)))
    return len(found), sum(is_open(step, points, args.newest) for step, points in found)


def run(args: argparse.Namespace, store: HistoryStore) -> int:
    analysis = analysed(args, store)
    if analysis is None:
        return 2
    accuracy_shown, accuracy_open = accuracy_changes(args, store)
    if accuracy_shown:
        print(f"{accuracy_shown} accuracy changes; {accuracy_open} open less accurate steps")
    if not analysis.series:
        if not accuracy_shown:
            print(f"no run in {store.safe_url}" + (f" on {args.gpu}" if args.gpu else ""))
        return 1 if accuracy_open else 0
    recent: set[Step] = set()
    shown: list[Step] = []
    for one in analysis.series:
        steps = analysis.steps[one.key]
        recent.update(steps_in_newest(steps, one, args.newest))
        shown.extend(s for s in steps if args.since is None or s.after.started_at >= args.since)
    held = {failing.step for failing in analysis.failing.values() if failing.step is not None}
    open_steps = [s for s in shown if s.kind == STEP and s.direction == SLOWER and (s in recent or s in held)
                  and analysis.reason(s) is None]
    for step in newest_first(shown):
        print("\n".join(describe(step, analysis, in_newest=step in recent, newest=args.newest)))
    unheld = [f for f in analysis.failing.values() if f.step is None
              and (args.since is None or f.first.started_at >= args.since)]
    for failing in sorted(unheld, key=lambda f: (f.first.started_at, f.key.case), reverse=True):
        print("\n".join(describe_failing(failing, next(s for s in analysis.series if s.key == failing.key))))
    short = too_short_text(analysis)
    if short:
        print(short)
    cases = len({one.key.case for one in analysis.series})
    print(f"{len(shown)} changes in {len(analysis.series)} series ({cases} cases)"
          f"{f' since {args.since:%Y-%m-%d %H:%M}' if args.since else ''}; "
          f"{len(open_steps)} open slower steps in the newest {args.newest} runs"
          + (f"; {len(unheld)} cases failing, not yet a step" if unheld else ""))
    return 1 if open_steps or unheld or accuracy_open else 0
