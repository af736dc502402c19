"""Which commit slowed a case: bisection over a commit range, each step a same-run A/B.

    python -m harness.history.bisect CASE --good REF --bad REF [--profile quick]

CASE is a pytest node id or a -k expression. The first-parent commits of
GOOD..BAD are listed (oldest first; BAD is taken as bad, GOOD as good) and
binary-searched: each probe checks the candidate commit out into a temporary
git worktree, runs there

    python -m pytest suites -m perf -k CASE --compare-ref GOOD --profile quick --benchmark-report R.md

(the suite's same-run A/B, harness/ab_compare.py: the candidate's kernels
interleaved with GOOD's on one GPU), and removes the worktree. Exit status 0
with the case's row in the report is good; exit status 1 with a **slower**
verdict in the report is bad; anything else (a failed correctness test, a
usage error, no case selected, no GPU, so no report) cannot be judged, and the
bisection stops with that error. N candidates take
ceil(log2(N)) probes.

The same with git's own bisection, in the checkout itself: this module uses
only the standard library, so a copy outside the tree judges every commit,
even those older than this file:

    cp harness/history/bisect.py /tmp/ab_probe.py
    git bisect start --first-parent BAD GOOD
    git bisect run python /tmp/ab_probe.py --probe CASE --good GOOD
    git bisect reset

(`--probe` judges the checked-out tree: exit 0 good, 1 bad, 125 cannot judge,
which `git bisect run` skips.)
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

GOOD = "good"
BAD = "bad"
# git bisect run: exit 125 means "this commit cannot be tested"
CANNOT_JUDGE = 125
SLOWER_CELL = re.compile(r"\|\s*\*\*slower\*\*\s*\|")
CASE_ROW = re.compile(r"^\| `[^`]+` \|", re.MULTILINE)


class BisectError(RuntimeError):
    """A probe could not judge its commit, or the range is empty."""


@dataclass(frozen=True)
class Probe:
    commit: str
    verdict: str  # GOOD or BAD
    detail: str = ""


@dataclass
class BisectResult:
    first_bad: str
    last_good: str
    candidates: list[str]
    probes: list[Probe] = field(default_factory=list)

    @property
    def commit_range(self) -> str:
        return f"{self.last_good}..{self.first_bad}"


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def first_parent_commits(repo, good: str, bad: str) -> list[str]:
    """The first-parent commits of GOOD..BAD, oldest first (BAD last)."""
    listing = _git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    return listing.split() if listing else []


def bisect_commits(candidates: Sequence[str], good: str, probe: Callable[[str], Probe]) -> BisectResult:
    """The first bad commit of `candidates` (oldest first; the last is bad, `good` before the first is good).

    `probe(commit)` judges one commit. The search keeps "everything up to lo is
    good, hi is bad": ceil(log2(len(candidates))) probes.
    """
    if not candidates:
        raise BisectError(f"no commits between {good} and the bad ref")
    commits = [good, *candidates]
    lo, hi = 0, len(commits) - 1
    result = BisectResult(first_bad=commits[hi], last_good=good, candidates=list(candidates))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        judged = probe(commits[mid])
        result.probes.append(judged)
        if judged.verdict == BAD:
            hi = mid
        else:
            lo = mid
    result.first_bad, result.last_good = commits[hi], commits[lo]
    return result


def probes_needed(candidates: int) -> int:
    return math.ceil(math.log2(candidates)) if candidates > 1 else 0


def ab_command(case: str, good: str, profile: str, report: Path, python: str = sys.executable) -> list[str]:
    """The same-run A/B of one case against GOOD (harness/plugin.py's --compare-ref)."""
    return [python, "-m", "pytest", "suites", "-m", "perf", "-k", case, "--compare-ref", good, "--profile", profile,
            "--benchmark-report", str(report), "-p", "no:cacheprovider", "-q"]


def judge(returncode: int, report_text: str | None) -> str | None:
    """GOOD, BAD, or None where the A/B cannot tell (see the module docstring).

    Good needs a report with a case row: without a GPU the timed cases skip,
    pytest exits 0 and no A/B report is written, which says nothing.
    """
    if report_text is None or not CASE_ROW.search(report_text):
        return None
    if returncode == 0:
        return GOOD
    if returncode == 1 and report_text is not None and SLOWER_CELL.search(report_text):
        return BAD
    return None


def probe_tree(tree: Path, case: str, good: str, profile: str = "quick",
               command: Callable[..., list[str]] = ab_command) -> Probe:
    """Judge the tree at `tree` (a checkout of the candidate) by its A/B against `good`."""
    with tempfile.TemporaryDirectory(prefix="bisect-report-") as scratch:
        report = Path(scratch) / "report.md"
        done = subprocess.run(command(case, good, profile, report), cwd=tree, capture_output=True, text=True)
        text = report.read_text() if report.exists() else None
    verdict = judge(done.returncode, text)
    commit = _git(tree, "rev-parse", "HEAD")
    if verdict is None:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise BisectError(f"{commit[:12]}: the A/B exited {done.returncode} and its report holds no verdict that "
                          f"judges it (a failed test, no case selected, or no GPU); cannot judge it:\n{tail}")
    return Probe(commit, verdict, f"exit {done.returncode}")


def worktree_prober(repo, case: str, good: str, profile: str = "quick",
                    command: Callable[..., list[str]] = ab_command) -> Callable[[str], Probe]:
    """probe(commit): check `commit` out into a temporary worktree, judge it there, remove the worktree."""
    def probe(commit: str) -> Probe:
        with tempfile.TemporaryDirectory(prefix="bisect-") as scratch:
            tree = Path(scratch) / "tree"
            _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), commit)
            try:
                return probe_tree(tree, case, good, profile, command)
            finally:
                _git(repo, "worktree", "remove", "--force", str(tree))
    return probe


def bisect(repo, case: str, good: str, bad: str, profile: str = "quick",
           probe: Callable[[str], Probe] | None = None) -> BisectResult:
    """Bisect GOOD..BAD of `repo` for the commit that slowed `case`."""
    good_sha, bad_sha = _git(repo, "rev-parse", good), _git(repo, "rev-parse", bad)
    probe = probe or worktree_prober(repo, case, good_sha, profile)
    return bisect_commits(first_parent_commits(repo, good_sha, bad_sha), good_sha, probe)


def result_lines(result: BisectResult) -> list[str]:
    """Each probe's verdict, then the first bad commit."""
    return [*(f"{probe.commit[:12]} {probe.verdict} ({probe.detail})" for probe in result.probes),
            f"first bad commit: {result.first_bad} (last good {result.last_good[:12]}; "
            f"{len(result.candidates)} candidates, {len(result.probes)} probes)"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.history bisect", description=__doc__.splitlines()[0])
    parser.add_argument("case", help="a pytest node id or -k expression selecting the case")
    parser.add_argument("--good", required=True, help="a ref where the case was fast")
    parser.add_argument("--bad", help="a ref where it was slow (not with --probe)")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--repo", default=".", help="the git checkout (default: here)")
    parser.add_argument("--probe", action="store_true",
                        help="judge the checked-out tree only: exit 0 good, 1 bad, 125 cannot judge (git bisect run)")
    args = parser.parse_args(argv)
    if args.probe:
        try:
            return 1 if probe_tree(Path(args.repo), args.case, args.good, args.profile).verdict == BAD else 0
        except BisectError as error:
            print(error, file=sys.stderr)
            return CANNOT_JUDGE
    if not args.bad:
        parser.error("--bad REF is needed (or --probe)")
    try:
        result = bisect(args.repo, args.case, args.good, args.bad, args.profile)
    except (BisectError, subprocess.CalledProcessError) as error:
        print(f"bisect: {error}", file=sys.stderr)
        return 3
    print("\n".join(result_lines(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
