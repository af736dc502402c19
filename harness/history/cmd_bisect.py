"""`bisect CASE --good REF --bad REF`: the commit that slowed CASE, each probe a same-run A/B (harness/history/bisect.py).

Each probe times the candidate against GOOD on this machine's GPU.  Where a
probe cannot judge (no GPU: the timed cases skip and no A/B report is written;
a failed test; no case selected) the bisection stops with an error and exit
status 1, naming no commit.  The store is not read: --history is accepted, as
by every command, and unused.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from .bisect import BisectError, bisect, result_lines

NAME = "bisect"
HELP = "find the commit of GOOD..BAD that slowed CASE, judging each probe by a same-run A/B on this GPU"
USES_STORE = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE", help="a pytest node id or -k expression selecting the case")
    parser.add_argument("--good", required=True, metavar="REF", help="a ref where the case was fast")
    parser.add_argument("--bad", required=True, metavar="REF", help="a ref where it was slow")
    parser.add_argument("--profile", default="quick", help="the sampling profile of each A/B (default quick)")
    parser.add_argument("--repo", default=".", help="the git checkout (default: here)")


def run(args: argparse.Namespace, store=None) -> int:
    try:
        result = bisect(args.repo, args.case, args.good, args.bad, args.profile)
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
    print("\n".join(result_lines(result)))
    return 0
