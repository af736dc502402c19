"""Which commit slowed a case: bisection over GOOD..BAD, each probe a same-run A/B against GOOD.

    python -m kernelwatch.history bisect CASE GOOD..BAD [--profile P]
    python -m kernelwatch.history bisect -k EXPRESSION --good REF --bad REF

CASE is a pytest node id, as every report and `changes` print it
(``suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-blocktile_2d]``): it
is given to pytest as a path; ``-k`` selects by expression instead, among the tests the
repository's own pytest configuration collects (its testpaths: no path is given). Each
probe checks a commit out into a temporary git worktree and runs there, in the folder
that `--repo` (default: here) is of the git checkout (pytest's rootdir, which node ids
are relative to; the top of the repository or a folder in it), the project's same-run
A/B against GOOD (src/kernelwatch/ab/against_ref.py: the candidate's kernels
interleaved with GOOD's on one GPU; it needs the project's kernel library,
src/kernelwatch/ab/library.py):

    python -m pytest [CASE | -k EXPRESSION] -m perf --kernelwatch-compare-ref GOOD --kernelwatch-profile P --kernelwatch-report R.md

A probe is bad when it exits 1 with a **slower** verdict in its report, good when
it exits 0 with the case's row in it, and cannot be judged otherwise (it does not
build, a test fails, no case is selected, no GPU; pytest refuses the run, exit 4, and the
probe says pytest's one line why). The bisection never names a commit it did not judge:

1. GOOD and BAD are resolved; a ref that names no commit is named. (The command checks the
   repository, the refs and the case first, before it builds anything: bisect_checks.py.)
2. BAD is timed against GOOD first. Where BAD is not slower, it says so and names
   no commit (exit 1); where BAD cannot be judged, nothing can (exit 1).
3. The first-parent commits of GOOD..BAD are binary-searched. A commit that
   cannot be judged is skipped, as `git bisect skip` does, and its neighbour
   probed instead; where skips leave several candidates, the answer is that range.

The profile: ``--profile``, else the first of quick, nightly and full whose cases
include CASE in BAD's tree (the nightly's 1000³ sizes are not in quick).

The same with git's own bisection, in the checkout itself: this module uses only
the standard library, so a copy outside the tree judges every commit:

    cp src/kernelwatch/history/bisect.py /tmp/ab_probe.py
    git bisect start --first-parent BAD GOOD
    git bisect run python /tmp/ab_probe.py --probe CASE --good GOOD --profile nightly
    git bisect reset

(`--probe` judges the checked-out tree: exit 0 good, 1 bad, 125 cannot judge, which
`git bisect run` skips.)
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

GOOD = "good"
BAD = "bad"
SKIP = "skip"
# git bisect run: exit 125 means "this commit cannot be tested"
CANNOT_JUDGE = 125
NO_TESTS_COLLECTED = 5  # pytest's exit status when the selection holds no test
USAGE_ERROR = 4  # pytest's exit status when it refuses the run (an option, an ini key): said in a line "ERROR: ..."
PROFILES = ("quick", "nightly", "full")  # tried in this order for a profile that holds the case
PROBE_TIMEOUT_S = 1800
CASE_ROW = re.compile(r"^\| `([^`]+)` \|(.*)\|\s*$", re.MULTILINE)


class BisectError(RuntimeError):
    """The bisection has no result: a ref is unknown, BAD cannot be judged, or the range is empty."""


class NotSlower(BisectError):
    """BAD is not slower than GOOD: there is no commit to look for."""


@dataclass(frozen=True)
class Selector:
    """What selects the case: a node id (given to pytest as a path) or a -k expression over what the project's pytest
    configuration collects (its testpaths)."""

    node_id: str | None = None
    expression: str | None = None

    def pytest_args(self) -> list[str]:
        return [self.node_id] if self.node_id else ["-k", self.expression]

    def shell(self) -> str:
        return shlex.quote(self.node_id) if self.node_id else f"-k {shlex.quote(self.expression)}"

    @classmethod
    def of(cls, text: str) -> Selector:
        """A node id where `text` names a test file (``::`` or ``.py``), else a -k expression."""
        return cls(node_id=text) if "::" in text or text.endswith(".py") else cls(expression=text)


@dataclass(frozen=True)
class Probe:
    commit: str
    verdict: str  # GOOD, BAD or SKIP
    detail: str = ""


@dataclass
class BisectResult:
    first_bad: str
    last_good: str
    candidates: list[str]
    probes: list[Probe] = field(default_factory=list)
    maybe: list[str] = field(default_factory=list)  # skipped commits that may be the first bad one, oldest first
    checked: Probe | None = None  # BAD, judged against GOOD before the search

    @property
    def commit_range(self) -> str:
        return f"{self.last_good}..{self.first_bad}"

    @property
    def skipped(self) -> list[Probe]:
        return [probe for probe in self.probes if probe.verdict == SKIP]


def command_line(case: str, good: str, bad: str, profile: str | None = None) -> str:
    """The bisect command for `case` over GOOD..BAD, ready to paste."""
    return (f"python -m kernelwatch.history bisect {Selector.of(case).shell()} {good[:12]}..{bad[:12]}"
            + (f" --profile {profile}" if profile and profile in PROFILES else ""))


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def resolve(repo, ref: str) -> str:
    """The commit `ref` names; BisectError naming the ref where it names none."""
    if not isinstance(ref, str) or not ref.strip() or ref.startswith("-"):
        raise BisectError(f"not a git ref: {ref!r}")
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BisectError(f"{ref!r} names no commit in {repo} (see `git log --oneline`)")
    return done.stdout.strip()


def first_parent_commits(repo, good: str, bad: str) -> list[str]:
    """The first-parent commits of GOOD..BAD, oldest first (BAD last)."""
    listing = _git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    return listing.split() if listing else []


def bisect_commits(candidates: Sequence[str], good: str, probe: Callable[[str], Probe]) -> BisectResult:
    """The first bad commit of `candidates` (oldest first; the last is bad, `good` before the first is good).

    `probe(commit)` judges one commit. The search keeps "everything up to lo is good, hi is
    bad", probing the untried commit nearest the middle: ceil(log2(len(candidates))) probes
    without skips. A skipped commit stays a candidate: where only skipped commits lie between
    lo and hi, they and hi are the answer (`maybe`).
    """
    if not candidates:
        raise BisectError(f"no commits between {good} and the bad ref")
    commits = [good, *candidates]
    lo, hi = 0, len(commits) - 1
    result = BisectResult(first_bad=commits[hi], last_good=good, candidates=list(candidates))
    skipped: set[int] = set()
    while untried := [i for i in range(lo + 1, hi) if i not in skipped]:
        middle = (lo + hi) / 2
        pick = min(untried, key=lambda i: (abs(i - middle), i))
        judged = probe(commits[pick])
        result.probes.append(judged)
        if judged.verdict == BAD:
            hi = pick
        elif judged.verdict == GOOD:
            lo = pick
        else:
            skipped.add(pick)
    result.first_bad, result.last_good = commits[hi], commits[lo]
    result.maybe = [commits[i] for i in range(lo + 1, hi)]
    return result


def probes_needed(candidates: int) -> int:
    return (candidates - 1).bit_length() if candidates > 1 else 0


def ab_command(selector: Selector, good: str, profile: str, report: Path, python: str = sys.executable) -> list[str]:
    """The same-run A/B of the case against GOOD (the plugin's --kernelwatch-compare-ref)."""
    return [python, "-m", "pytest", *selector.pytest_args(), "-m", "perf", "--kernelwatch-compare-ref", good,
            "--kernelwatch-profile", profile, "--kernelwatch-report", str(report), "-p", "no:cacheprovider", "-q"]


def case_row(report_text: str | None) -> tuple[str, str] | None:
    """(verdict, ratio) of the first case row of an A/B report, or None where it has none."""
    found = CASE_ROW.search(report_text or "")
    if found is None:
        return None
    cells = [cell.strip() for cell in found.group(2).split("|")]
    ratio = next((cell for cell in cells if cell.endswith(("×", "x")) and cell[:1].isdigit()), "")
    return cells[-1].strip("*"), ratio


def judge(returncode: int, report_text: str | None) -> str:
    """GOOD, BAD, or SKIP where the A/B cannot tell (see the module docstring).

    Good needs a report with a case row: without a GPU the timed cases skip,
    pytest exits 0 and no A/B report is written, which says nothing.
    """
    row = case_row(report_text)
    if row is None:
        return SKIP
    if returncode == 0:
        return GOOD
    if returncode == 1 and row[0] == "slower":
        return BAD
    return SKIP


def probe_tree(tree: Path, selector: Selector, good: str, profile: str,
               command: Callable[..., list[str]] = ab_command) -> Probe:
    """Judge the tree at `tree` (a checkout of the candidate) by its A/B against `good`."""
    with tempfile.TemporaryDirectory(prefix="bisect-report-") as scratch:
        report = Path(scratch) / "report.md"
        try:
            done = subprocess.run(command(selector, good, profile, report), cwd=tree, capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT_S)
            returncode, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            returncode, output = CANNOT_JUDGE, f"timed out after {PROBE_TIMEOUT_S} s"
        text = report.read_text() if report.exists() else None
    verdict = judge(returncode, text)
    commit = _git(tree, "rev-parse", "HEAD")
    row = case_row(text)
    if verdict != SKIP:
        return Probe(commit, verdict, f"exit {returncode}, {row[0]} {row[1]}".rstrip())
    refusal = [line for line in (output or "").splitlines() if line.startswith("ERROR: ")]
    if returncode == USAGE_ERROR and refusal:
        return Probe(commit, SKIP, f"exit {returncode}: cannot judge it: pytest refused the A/B: "
                                   f"{refusal[0].removeprefix('ERROR: ')}"[:400])
    tail = " / ".join((output or "").strip().splitlines()[-3:])
    return Probe(commit, SKIP, f"exit {returncode}: cannot judge it ({'no case row in the report' if row is None else row[0]}"
                               f"; {tail})"[:400])


def worktree_prober(repo, selector: Selector, good: str, profile: str,
                    command: Callable[..., list[str]] = ab_command) -> Callable[[str], Probe]:
    """probe(commit): check `commit` out into a temporary worktree, judge it there (in the folder `repo` is of its
    checkout: pytest's rootdir), remove the worktree."""
    folder = _git(repo, "rev-parse", "--show-prefix")  # "" at the top of the repository, else "python/" and the like

    def probe(commit: str) -> Probe:
        with tempfile.TemporaryDirectory(prefix="bisect-") as scratch:
            tree = Path(scratch) / "tree"
            _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), commit)
            try:
                if not (tree / folder).is_dir():
                    return Probe(_git(tree, "rev-parse", "HEAD"), SKIP, f"cannot judge it: the commit has no folder {folder}")
                return probe_tree(tree / folder, selector, good, profile, command)
            finally:
                _git(repo, "worktree", "remove", "--force", str(tree))
    return probe


def bisect(repo, selector: Selector, good: str, bad: str, profile: str | None = None,
           prober: Callable[[str], Callable[[str], Probe]] | None = None) -> BisectResult:
    """Bisect GOOD..BAD of `repo` for the commit that slowed the case (module docstring).

    `prober(profile)` gives the probe of one commit (default: a worktree's A/B); with no
    `profile`, the first of PROFILES whose probe of BAD selects the case is used.
    Raises NotSlower where BAD is not slower than GOOD, BisectError where nothing can be said.
    """
    good_sha, bad_sha = resolve(repo, good), resolve(repo, bad)
    candidates = first_parent_commits(repo, good_sha, bad_sha)
    if not candidates:
        raise BisectError(f"no commits between {good} and {bad}: is {bad} after {good}?")
    prober = prober or (lambda chosen: worktree_prober(repo, selector, good_sha, chosen))
    checked = None
    for chosen in [profile] if profile else PROFILES:
        probe = prober(chosen)
        checked = probe(bad_sha)
        if not checked.detail.startswith(f"exit {NO_TESTS_COLLECTED}:"):
            break
    if checked.verdict == GOOD:
        raise NotSlower(f"{bad} ({bad_sha[:12]}) is not slower than {good} ({good_sha[:12]}) for "
                        f"{selector.shell()} ({checked.detail}): no commit to look for")
    if checked.verdict != BAD:
        raise BisectError(f"{bad} ({bad_sha[:12]}) cannot be judged against {good}: {checked.detail}")
    result = bisect_commits(candidates, good_sha, probe)  # BAD, the last candidate, is judged: never probed again
    result.checked = checked
    return result


def result_lines(result: BisectResult, subject: Callable[[str], str] = lambda sha: "") -> list[str]:
    """The check of BAD, each probe's verdict, then the first bad commit (or the range skips left)."""
    lines = [f"{result.checked.commit[:12]} {result.checked.verdict} against the good ref ({result.checked.detail}): "
             f"BAD is slower"] if result.checked else []
    lines += [f"{probe.commit[:12]} {probe.verdict} ({probe.detail})" for probe in result.probes]
    if result.maybe:
        named = ", ".join(f"{sha[:12]} {subject(sha)}".strip() for sha in [*result.maybe, result.first_bad])
        lines.append(f"the first bad commit is one of {len(result.maybe) + 1} (skipped ones could not be judged): "
                     f"{named} (last good {result.last_good[:12]})")
    else:
        lines.append(f"first bad commit: {result.first_bad} {subject(result.first_bad)}".rstrip()
                     + f" (last good {result.last_good[:12]}; {len(result.candidates)} candidates, "
                       f"{len(result.probes) + (result.checked is not None)} probes)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """`--probe` for `git bisect run` (exit 0 good, 1 bad, 125 cannot judge); the rest is `kernelwatch.history bisect`."""
    parser = argparse.ArgumentParser(prog="python -m kernelwatch.history.bisect",
                                     description="judge the checked-out tree for `git bisect run`; everything else "
                                                 "is `python -m kernelwatch.history bisect`")
    parser.add_argument("case", help="a pytest node id or a -k expression selecting the case")
    parser.add_argument("--good", required=True, help="the ref to time the tree against")
    parser.add_argument("--profile", default="nightly", choices=PROFILES)
    parser.add_argument("--repo", default=".", help="the checked-out tree (default: here)")
    parser.add_argument("--probe", action="store_true", required=True, help="judge the checked-out tree only")
    args = parser.parse_args(argv)
    judged = probe_tree(Path(args.repo), Selector.of(args.case), args.good, args.profile)
    print(f"{judged.commit[:12]} {judged.verdict} ({judged.detail})", file=sys.stderr)
    return {GOOD: 0, BAD: 1}.get(judged.verdict, CANNOT_JUDGE)


if __name__ == "__main__":
    raise SystemExit(main())
