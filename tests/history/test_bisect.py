"""Bisection by A/B on a synthetic git repository: 8 commits after a good one, the 5th makes the case slower."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.history.bisect import (
    BAD,
    GOOD,
    BisectError,
    Probe,
    bisect,
    bisect_commits,
    first_parent_commits,
    judge,
    probes_needed,
    worktree_prober,
)

SLOW_FROM = 5  # commits 1..8 after the good one; from the 5th on the case is 3% slower
# stands in for `pytest --compare-ref`: writes the A/B report's row and exits as the plugin does
FAKE_AB = """\
import sys
from pathlib import Path
ratio = float(Path("speed.txt").read_text())
verdict = "**slower**" if ratio > 1.02 else "same"
Path(sys.argv[1]).write_text(f"| `case` | 100 us | {100 * ratio:.0f} us | {ratio:.3f}x | - | 1.5% | {verdict} |\\n")
sys.exit(1 if ratio > 1.02 else 0)
"""


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "fake_ab.py").write_text(FAKE_AB)
    commits = []
    for i in range(9):
        (root / "speed.txt").write_text("1.03" if i >= SLOW_FROM else "1.00")
        (root / "log.txt").write_text(f"change {i}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"change {i}")
        commits.append(_git(root, "rev-parse", "HEAD"))
    return root, commits


def _fake_command(case, good, profile, report, python=sys.executable):
    return [python, "fake_ab.py", str(report)]


def test_first_parent_commits_are_the_range_oldest_first(repo):
    root, commits = repo
    assert first_parent_commits(root, commits[0], commits[-1]) == commits[1:]


def test_bisect_finds_the_bad_commit_in_log2_8_probes_with_a_predicate(repo):
    root, commits = repo
    seen = []

    def probe(commit):
        seen.append(commit)
        slow = float(_git(root, "show", f"{commit}:speed.txt")) > 1.02
        return Probe(commit, BAD if slow else GOOD)

    result = bisect(root, "case", commits[0], commits[-1], probe=probe)
    assert result.first_bad == commits[SLOW_FROM] and result.last_good == commits[SLOW_FROM - 1]
    assert len(seen) == probes_needed(8) == 3
    assert result.commit_range == f"{commits[SLOW_FROM - 1]}..{commits[SLOW_FROM]}"


@pytest.mark.parametrize("slow_from", range(1, 9))
def test_every_position_of_the_bad_commit_is_found_in_3_probes(slow_from):
    candidates = [f"c{i}" for i in range(1, 9)]
    result = bisect_commits(candidates, "c0", lambda c: Probe(c, BAD if int(c[1:]) >= slow_from else GOOD))
    assert result.first_bad == f"c{slow_from}" and len(result.probes) == 3


def test_worktree_probes_run_the_ab_in_a_checkout_and_remove_it(repo):
    root, commits = repo
    probe = worktree_prober(root, "case", commits[0], command=_fake_command)
    result = bisect(root, "case", commits[0], commits[-1], probe=probe)
    assert result.first_bad == commits[SLOW_FROM]
    assert [p.verdict for p in result.probes] == [GOOD, BAD, BAD]  # c4, c6, c5
    assert len(_git(root, "worktree", "list").splitlines()) == 1


def test_a_probe_that_fails_without_a_slower_verdict_stops_the_bisection(repo):
    root, commits = repo

    def failing(case, good, profile, report, python=sys.executable):
        return [python, "-c", "import sys; sys.exit(1)"]

    with pytest.raises(BisectError, match="cannot judge"):
        bisect(root, "case", commits[0], commits[-1], probe=worktree_prober(root, "case", commits[0], command=failing))
    assert len(_git(root, "worktree", "list").splitlines()) == 1


def test_judge_reads_exit_status_and_report():
    slower = "| `suites/x.py::t[a]` | 1 us | 1.03 us | 1.030× | 1.02-1.04 | 1.5% | **slower** |"
    assert judge(0, "| `suites/x.py::t[a]` | 1 us | 1 us | 1.000× | 0.99-1.01 | 1.5% | same |") == GOOD
    assert judge(0, "| `suites/x.py::t[a]` | - | - | - | - | - | unchanged (same SASS) |") == GOOD
    assert judge(0, None) is None  # no GPU: the timed cases skipped, no A/B report
    assert judge(1, slower) == BAD
    assert judge(1, "| `x` | 1 us | 1 us | 1.000× | 0.99-1.01 | 1.5% | same |") is None  # a failed test
    assert judge(4, None) is None  # usage error
    assert judge(5, None) is None  # no test selected


def test_an_empty_range_is_an_error(repo):
    root, commits = repo
    with pytest.raises(BisectError, match="no commits"):
        bisect(root, "case", commits[-1], commits[-1], probe=lambda c: Probe(c, GOOD))
