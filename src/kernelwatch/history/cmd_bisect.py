"""`bisect CASE GOOD..BAD`: the commit that slowed CASE, each probe a same-run A/B (src/kernelwatch/history/bisect.py).

CASE is a node id (a positional path for pytest) or, with -k, an expression over
the tests the project's pytest configuration collects (its testpaths);
the range is GOOD..BAD as one argument, or --good and --bad. The repository, the
refs and the case are checked before anything is built (bisect_checks.py). BAD is
judged first: where it is not slower than GOOD, no commit is named. Each probe is a
pytest run, and reads $KERNELWATCH_THRESHOLD as every run does (one that is no
fraction stops the command first, exit 2). The store is not
read: --history is accepted, as by every command, and unused.
Exit status: 0 a commit (or a range, where skipped commits leave several) was
found; 1 no result (BAD not slower, BAD or the range cannot be judged, a ref
names no commit); 2 bad arguments (or $KERNELWATCH_THRESHOLD).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from kernelwatch.verdict.threshold import threshold_from

from .bisect import PROFILES, BisectError, NotSlower, Selector, bisect, result_lines
from .bisect_checks import check_before_building

NAME = "bisect"
HELP = "find the commit of GOOD..BAD that slowed CASE, judging each probe by a same-run A/B on this GPU"
USES_STORE = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", nargs="?", metavar="CASE",
                        help="the case's pytest node id, as reports print it (suites/test_perf_matmul.py::...)")
    parser.add_argument("range", nargs="?", metavar="GOOD..BAD", help="the range: a ref where it was fast, "
                                                                     "then one where it was slow")
    parser.add_argument("-k", dest="expression", metavar="EXPRESSION",
                        help="select the case by a pytest -k expression instead of a node id")
    parser.add_argument("--good", metavar="REF", help="a ref where the case was fast (instead of GOOD..BAD)")
    parser.add_argument("--bad", metavar="REF", help="a ref where it was slow (instead of GOOD..BAD)")
    parser.add_argument("--profile", choices=PROFILES,
                        help="the sampling profile of each A/B (default: the first of quick, nightly, full that "
                             "has the case)")
    parser.add_argument("--repo", default=".", help="the project's folder in its git checkout, where pytest runs it "
                                                    "(its rootdir: node ids are relative to it; default: here)")


def _selector_and_range(args: argparse.Namespace, parser_error) -> tuple[Selector, str, str]:
    positionals = [value for value in (args.case, args.range) if value is not None]
    if args.expression is not None:
        if len(positionals) > 1:
            parser_error("with -k, give at most the range GOOD..BAD as an argument")
        selector, rest = Selector(expression=args.expression), positionals
    else:
        if not positionals:
            parser_error("name the case: a node id, or -k EXPRESSION")
        selector, rest = Selector.of(positionals[0]), positionals[1:]
    if rest:
        if args.good or args.bad:
            parser_error("give the range once: GOOD..BAD or --good and --bad")
        good, dots, bad = rest[0].partition("..")
        if not dots or not good or not bad or bad.startswith("."):
            parser_error(f"the range {rest[0]!r} is not GOOD..BAD (two refs and two dots)")
        return selector, good, bad
    if not (args.good and args.bad):
        parser_error("give the range: GOOD..BAD, or --good REF and --bad REF")
    return selector, args.good, args.bad


def run(args: argparse.Namespace, store=None) -> int:
    selector, good, bad = _selector_and_range(args, args.parser_error)
    try:
        threshold_from(None, "")  # each probe's pytest reads it, as every run does: a bad one would refuse them all
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        check_before_building(args.repo, selector, good, bad, args.profile)
        result = bisect(args.repo, selector, good, bad, args.profile)
    except NotSlower as why:
        print(f"not slower: {why}")
        return 1
    except BisectError as error:
        first, *rest = str(error).splitlines()
        print(f"error: bisect stopped, no result: {first}", *(f"  {line}" for line in rest), sep="\n",
              file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        words = (error.stderr or "").strip().splitlines()
        print(f"error: {' '.join(error.cmd[:4])} failed: {words[-1] if words else f'exit {error.returncode}'}",
              file=sys.stderr)
        return 1

    def subject(sha: str) -> str:
        done = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%s", sha], capture_output=True, text=True)
        return done.stdout.strip()

    print("\n".join(result_lines(result, subject)))
    return 0
