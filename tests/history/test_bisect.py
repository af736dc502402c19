"""src/kernelwatch/history/bisect.py and the `bisect` command: a bisection that never names a commit it did not judge.

A synthetic git repository of 9 commits (a good one, then 8): from the 5th on the case is 3%
slower. Each probe stands in for `pytest --kernelwatch-compare-ref` with a script that writes the A/B
report's row from the commit's speed.txt and exits as the plugin does; a commit whose
speed.txt says "broken" cannot be judged (it exits 1 without a slower verdict, as a build
failure does).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch.history import bisect as bisect_module
from kernelwatch.history import bisect_checks, cmd_bisect
from kernelwatch.history.bisect import (
    BAD,
    CANNOT_JUDGE,
    GOOD,
    SKIP,
    BisectError,
    BisectResult,
    NotSlower,
    Probe,
    Selector,
    bisect,
    bisect_commits,
    case_row,
    command_line,
    first_parent_commits,
    judge,
    probe_tree,
    probes_needed,
    result_lines,
    worktree_prober,
)
from kernelwatch.history.cli import main

NODE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-blocktile_2d]"
SLOW_FROM = 5  # commits 1..8 after the good one; from the 5th on the case is 3% slower
FAKE_AB = """\
import sys
from pathlib import Path
speed = Path("speed.txt").read_text().strip()
Path("selected.txt").write_text(" ".join(sys.argv[2:]))
if speed == "broken":
    print("error: the kernel does not build")
    sys.exit(1)
ratio = float(speed)
verdict = "**slower**" if ratio > 1.02 else "same"
Path(sys.argv[1]).write_text(f"| `{NODE}` | 100 us | {100 * ratio:.0f} us | {ratio:.3f}× | - | 1.5% | {verdict} |\\n")
sys.exit(1 if ratio > 1.02 else 0)
""".replace("{NODE}", NODE)


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def make_repo(root: Path, speeds: list[str], folder: str = "") -> list[str]:
    """A repository whose commits give the speeds, the fake A/B and its files in `folder` of it (its top: "")."""
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / folder).mkdir(exist_ok=True)
    (root / folder / "fake_ab.py").write_text(FAKE_AB)
    commits = []
    for i, speed in enumerate(speeds):
        (root / folder / "speed.txt").write_text(speed)
        (root / folder / "log.txt").write_text(f"change {i}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"change {i}")
        commits.append(_git(root, "rev-parse", "HEAD"))
    return commits


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    return root, make_repo(root, ["1.03" if i >= SLOW_FROM else "1.00" for i in range(9)])


def fake_command(selector, good, profile, report, python=sys.executable):
    return [python, "fake_ab.py", str(report), *selector.pytest_args(), "--kernelwatch-profile", profile]


@pytest.fixture
def fake_ab(monkeypatch):
    """The command line's probes run FAKE_AB in each worktree instead of the GPU's A/B."""
    real = bisect_module.worktree_prober

    def prober(repo, selector, good, profile, command=fake_command):
        return real(repo, selector, good, profile, command)

    monkeypatch.setattr(bisect_module, "worktree_prober", prober)
    # the fake repositories hold no pytest project: their collection (the check before any probe) selects anything
    monkeypatch.setattr(bisect_checks, "collect_command", lambda selector, profile: [sys.executable, "-c", "pass"])


def speed_probe(root, seen=None):
    def probe(commit):
        if seen is not None:
            seen.append(commit)
        speed = _git(root, "show", f"{commit}:speed.txt")
        if speed == "broken":
            return Probe(commit, SKIP, "exit 1: cannot judge it")
        return Probe(commit, BAD if float(speed) > 1.02 else GOOD, "exit 0")
    return lambda profile: probe


def test_first_parent_commits_are_the_range_oldest_first(repo):
    root, commits = repo
    assert first_parent_commits(root, commits[0], commits[-1]) == commits[1:]


def test_bad_is_judged_first_then_the_search_finds_the_bad_commit_in_log2_probes(repo):
    root, commits = repo
    seen = []
    result = bisect(root, Selector(NODE), commits[0], commits[-1], "quick", prober=speed_probe(root, seen))
    assert seen[0] == commits[-1]  # BAD, timed against GOOD before anything is searched
    assert result.first_bad == commits[SLOW_FROM] and result.last_good == commits[SLOW_FROM - 1]
    assert result.maybe == [] and len(seen) == 1 + probes_needed(len(commits) - 2)
    assert result.commit_range == f"{commits[SLOW_FROM - 1]}..{commits[SLOW_FROM]}"


@pytest.mark.parametrize("slow_from", range(1, 9))
def test_every_position_of_the_bad_commit_is_found_in_3_probes(slow_from):
    candidates = [f"c{i}" for i in range(1, 9)]
    result = bisect_commits(candidates, "c0", lambda c: Probe(c, BAD if int(c[1:]) >= slow_from else GOOD))
    assert result.first_bad == f"c{slow_from}" and len(result.probes) <= 3
    assert "c8" not in {p.commit for p in result.probes}  # the last candidate is BAD: judged before, never again


def test_an_unchanged_case_is_not_slower_and_no_commit_is_named(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.00"] * 4)
    with pytest.raises(NotSlower, match=r"is not slower than .*no commit to look for") as raised:
        bisect(root, Selector(NODE), "HEAD~3", "HEAD", "quick", prober=speed_probe(root))
    # each ref as given, then the commit it named, abbreviated as every line of the command abbreviates one
    assert str(raised.value) == (f"HEAD ({commits[-1][:12]}) is not slower than HEAD~3 ({commits[0][:12]}) for "
                                 f"'{NODE}' (exit 0): no commit to look for")


def test_a_skipped_commit_is_passed_over_and_the_answer_is_the_range_it_leaves(tmp_path):
    root = tmp_path / "repo"
    # good, 1.00, broken, 1.03, 1.03: the first bad is the broken one or the one after it
    commits = make_repo(root, ["1.00", "1.00", "broken", "1.03", "1.03"])
    result = bisect(root, Selector(NODE), commits[0], commits[-1], "quick", prober=speed_probe(root))
    assert result.last_good == commits[1] and result.first_bad == commits[3] and result.maybe == [commits[2]]
    assert [p.commit for p in result.skipped] == [commits[2]]
    lines = result_lines(result, lambda sha: f"change {commits.index(sha)}")
    text = "\n".join(lines)
    assert "the first bad commit is one of 2" in text and commits[2][:12] in text and "first bad commit:" not in text
    assert f"{commits[2][:12]} skip (exit 1: cannot judge it)" in lines  # each probe by its abbreviated commit
    assert lines[-1] == (f"the first bad commit is one of 2 (skipped ones could not be judged): "
                         f"{commits[2][:12]} change 2, {commits[3][:12]} change 3 (last good {commits[1][:12]})")


def replayed_prober(root, commits):
    """A prober that reads each commit's verdict back from the lines `--probe` printed ("SHA12 VERDICT (DETAIL)")."""
    log = "\n".join(f"{sha[:12]} {probe.verdict} ({probe.detail})"
                    for sha in commits for probe in [speed_probe(root)(None)(sha)])
    verdicts = {sha12: (verdict, detail) for sha12, verdict, detail in (line.split(" ", 2) for line in log.splitlines())}
    return lambda profile: lambda commit: Probe(commit, *verdicts[commit[:12]])


@pytest.mark.parametrize("speeds, first_bad, maybe", [
    (["1.03" if i >= SLOW_FROM else "1.00" for i in range(9)], SLOW_FROM, []),
    (["1.00", "1.00", "broken", "1.03", "1.03"], 3, [2]),
])
def test_verdicts_read_back_from_text_are_the_same_verdicts(tmp_path, speeds, first_bad, maybe):
    # a verdict is its word, whichever string object holds it: one parsed from a log counts as the constant does
    root = tmp_path / "repo"
    commits = make_repo(root, speeds)
    result = bisect(root, Selector(NODE), commits[0], commits[-1], "quick", prober=replayed_prober(root, commits))
    assert result.first_bad == commits[first_bad] and result.last_good == commits[first_bad - 1 - len(maybe)]
    assert result.maybe == [commits[i] for i in maybe] and [p.commit for p in result.skipped] == result.maybe


def test_a_not_slower_verdict_read_back_from_text_is_not_slower(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.00"] * 3)
    with pytest.raises(NotSlower):
        bisect(root, Selector(NODE), commits[0], commits[-1], "quick", prober=replayed_prober(root, commits))


def test_a_skipped_commit_beside_a_judged_one_still_gives_one_commit(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.00", "broken", "1.00", "1.03", "1.03"])
    result = bisect(root, Selector(NODE), commits[0], commits[-1], "quick", prober=speed_probe(root))
    assert result.first_bad == commits[3] and result.maybe == []


def test_bad_that_cannot_be_judged_is_an_error_naming_no_commit(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.00", "1.03", "broken"])
    with pytest.raises(BisectError, match="cannot be judged against") as raised:
        bisect(root, Selector(NODE), "HEAD~2", "HEAD", "quick", prober=speed_probe(root))
    assert str(raised.value) == f"HEAD ({commits[-1][:12]}) cannot be judged against HEAD~2: exit 1: cannot judge it"


def test_an_unknown_ref_is_named(repo):
    root, commits = repo
    with pytest.raises(BisectError, match=r"'no-such-ref' names no commit"):
        bisect(root, Selector(NODE), "no-such-ref", commits[-1], "quick", prober=speed_probe(root))
    with pytest.raises(BisectError, match=r"not a git ref: '--all'"):
        bisect(root, Selector(NODE), commits[0], "--all", "quick", prober=speed_probe(root))
    for nothing in ("", "  ", None):  # no ref at all is said to be one, not looked up (nor an AttributeError)
        with pytest.raises(BisectError, match=rf"^not a git ref: {nothing!r}$"):
            bisect(root, Selector(NODE), nothing, commits[-1], "quick", prober=speed_probe(root))


def test_an_empty_range_is_an_error(repo):
    root, commits = repo
    with pytest.raises(BisectError, match="no commits between"):
        bisect(root, Selector(NODE), commits[-1], commits[-1], "quick", prober=speed_probe(root))


def test_without_a_profile_the_first_that_selects_the_case_is_used(repo):
    root, commits = repo
    tried = []

    def prober(profile):
        def probe(commit):
            tried.append(profile)
            if profile == "quick":
                return Probe(commit, SKIP, "exit 5: cannot judge it (no case row in the report)")
            return speed_probe(root)(profile)(commit)
        return probe

    result = bisect(root, Selector(NODE), commits[0], commits[-1], prober=prober)
    assert tried[:2] == ["quick", "nightly"] and set(tried[2:]) == {"nightly"}
    assert result.first_bad == commits[SLOW_FROM]


def test_worktree_probes_run_the_ab_in_a_checkout_and_remove_it(repo):
    root, commits = repo
    result = bisect(root, Selector(NODE), commits[0], commits[-1], "quick",
                    prober=lambda profile: worktree_prober(root, Selector(NODE), commits[0], profile, fake_command))
    assert result.first_bad == commits[SLOW_FROM]
    assert result.checked.verdict == BAD and "slower 1.030×" in result.checked.detail
    assert len(_git(root, "worktree", "list").splitlines()) == 1


# the command line


@pytest.mark.parametrize("argv, selected", [
    ([NODE, "{good}..{bad}"], NODE),
    ([NODE, "--good", "{good}", "--bad", "{bad}"], NODE),
    # an expression alone, no path: pytest selects among what the project's configuration collects (testpaths)
    (["-k", "blocktile_2d and 4096", "{good}..{bad}"], "-k blocktile_2d and 4096"),
    (["-k", "blocktile_2d", "--good", "{good}", "--bad", "{bad}"], "-k blocktile_2d"),
    (["test_matmul_time and 4096", "{good}..{bad}"], "-k test_matmul_time and 4096"),
])
def test_a_node_id_a_k_expression_and_either_range_form_all_find_the_commit(repo, fake_ab, capsys, argv, selected):
    root, commits = repo
    args = [a.format(good=commits[0][:10], bad=commits[-1][:10]) for a in argv]
    assert main(["bisect", *args, "--repo", str(root), "--profile", "nightly"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith(f"first bad commit: {commits[SLOW_FROM]} change {SLOW_FROM} (last good ")
    assert out.splitlines()[0].startswith(f"{commits[-1][:12]} bad against the good ref")
    # the node id went to pytest as a path, an expression to -k
    assert (root / "selected.txt").exists() is False  # each probe ran in a worktree of its own, since removed
    probe = probe_tree(root, Selector.of(args[0] if args[0] != "-k" else args[1]), commits[0], "nightly",
                       fake_command)
    assert probe.verdict in (GOOD, BAD)
    assert (root / "selected.txt").read_text() == f"{selected} --kernelwatch-profile nightly"


def test_the_command_says_not_slower_and_exits_1_naming_no_commit(tmp_path, fake_ab, capsys):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.00", "1.00", "1.00"])
    assert main(["bisect", NODE, f"{commits[0]}..{commits[-1]}", "--repo", str(root), "--profile", "quick"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("not slower: ") and "no commit to look for" in captured.out
    assert "first bad commit" not in captured.out + captured.err


@pytest.mark.parametrize("argv, words", [
    (["{node}"], "give the range"),
    (["{node}", "HEAD"], "is not GOOD..BAD"),
    (["{node}", "HEAD...HEAD~1"], "is not GOOD..BAD"),
    (["{node}", "..HEAD"], "is not GOOD..BAD"),  # a range without its good ref
    (["{node}", "HEAD~1.."], "is not GOOD..BAD"),  # nor without its bad one
    (["{node}", "HEAD~1..HEAD", "--good", "HEAD~2"], "give the range once"),
    (["-k", "x", "{node}", "HEAD~1..HEAD"], "with -k, give at most the range"),
    ([], "name the case"),
])
def test_arguments_that_do_not_say_a_case_and_a_range_are_usage_errors(capsys, argv, words):
    with pytest.raises(SystemExit) as exited:
        main(["bisect", *[a.format(node=NODE) for a in argv]])
    assert exited.value.code == 2 and words in capsys.readouterr().err


def test_the_command_names_a_bad_ref_in_one_sentence(repo, capsys):
    root, commits = repo
    assert main(["bisect", NODE, f"{commits[0]}..nope", "--repo", str(root)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: bisect stopped, no result: 'nope' names no commit in ") and "usage" not in err


def test_a_threshold_that_is_no_fraction_stops_the_command_before_anything_is_built(repo, capsys, monkeypatch):
    # each probe's pytest reads KERNELWATCH_THRESHOLD, as every run does: a bad one would refuse every probe
    root, commits = repo
    monkeypatch.setattr(bisect_module, "worktree_prober", lambda *args: pytest.fail("a worktree was built"))
    monkeypatch.setenv("KERNELWATCH_THRESHOLD", "abc")
    assert main(["bisect", NODE, f"{commits[0]}..{commits[-1]}", "--repo", str(root), "--profile", "quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: $KERNELWATCH_THRESHOLD='abc' is not a number") and len(err.splitlines()) == 1


@pytest.fixture
def no_worktree(monkeypatch):
    """A bisection that builds a worktree fails the test: what it checks must be said before."""
    monkeypatch.setattr(bisect_module, "worktree_prober", lambda *args: pytest.fail("a worktree was built"))


@pytest.mark.parametrize("where, range_, words", [
    ("not-a-repo", "HEAD~1..HEAD", "--repo {repo} is not in a git repository (fatal: not a git repository"),
    ("missing", "HEAD~1..HEAD", "--repo {repo} is no folder"),
    ("repo", "nope..{bad}", "'nope' names no commit in {repo}"),
    ("repo", "{good}..nope", "'nope' names no commit in {repo}"),
])
def test_a_folder_that_is_no_checkout_or_an_unknown_ref_is_said_in_one_line_before_anything_is_built(
        repo, tmp_path, capsys, no_worktree, where, range_, words):
    root, commits = repo
    (tmp_path / "not-a-repo").mkdir()
    folder = root if where == "repo" else tmp_path / where
    argv = ["bisect", NODE, range_.format(good=commits[0], bad=commits[-1]), "--repo", str(folder)]
    assert main([*argv, "--profile", "quick"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: bisect stopped, no result: {words.format(repo=folder)}"), err
    assert len(err.splitlines()) == 1 and "CUDA" not in err


TIMED = """import pytest


@pytest.mark.perf
@pytest.mark.parametrize("size", [1, 2])
def test_time(size):
    pass


def test_not_timed():
    pass
"""


@pytest.fixture
def project(tmp_path):
    """A git repository of a pytest project with two timed cases (this run's kernelwatch plugin loads there too)."""
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "test_speed.py").write_text(TIMED)
    for i in range(3):
        (root / "log.txt").write_text(f"change {i}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"change {i}")
    return root


@pytest.mark.slow  # pytest --collect-only in a subprocess per case: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("argv, words", [
    (["-k", "no_such_case"], "-k no_such_case selects no timed case (-m perf) in {repo} under the quick profile"),
    (["test_speed.py::test_time[3]"], "'test_speed.py::test_time[3]' selects no timed case in {repo}: pytest "
                                      "--collect-only exit 4: ERROR: not found: "),
    (["test_speed.py::test_not_timed"], "test_speed.py::test_not_timed selects no timed case (-m perf) in {repo}"),
    (["missing.py"], "missing.py selects no timed case in {repo}: pytest --collect-only exit 4: ERROR: file or "
                     "directory not found: missing.py"),
])
def test_a_case_the_checkouts_pytest_does_not_collect_is_said_in_one_line_before_anything_is_built(
        project, capsys, no_worktree, argv, words):
    assert main(["bisect", *argv, "HEAD~2..HEAD", "--repo", str(project), "--profile", "quick"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: bisect stopped, no result: {words.format(repo=project)}"), err
    assert len(err.splitlines()) == 1 and "CUDA" not in err


@pytest.mark.slow  # pytest --collect-only in a subprocess: CI's second pass
def test_a_case_the_checkout_collects_goes_on_to_the_probes(project, monkeypatch, capsys):
    probed = []

    def prober(repo, selector, good, profile):
        return lambda commit: probed.append((selector, profile)) or Probe(commit, GOOD, "exit 0, same 1.000×")

    monkeypatch.setattr(bisect_module, "worktree_prober", prober)
    assert main(["bisect", "-k", "test_time and 2", "HEAD~2..HEAD", "--repo", str(project)]) == 1  # BAD not slower
    assert probed == [(Selector(expression="test_time and 2"), "quick")]
    assert capsys.readouterr().out.startswith("not slower: ")


@pytest.fixture
def unchecked(monkeypatch):
    """The command's checks before building (bisect_checks.py) pass: for a test of what it does with bisect()'s
    answer, bisect() replaced."""
    monkeypatch.setattr(cmd_bisect, "check_before_building", lambda *args: None)


def test_the_bisect_command_opens_no_store(monkeypatch, tmp_path, unchecked):
    result = BisectResult(first_bad="b" * 40, last_good="a" * 40, candidates=["b" * 40])
    monkeypatch.setattr(cmd_bisect, "bisect", lambda *args: result)
    unusable = tmp_path / "not-a-folder"
    unusable.write_text("")
    assert main(["bisect", NODE, "HEAD~1..HEAD", "--history", str(unusable / "h.sqlite")]) == 0
    assert cmd_bisect.USES_STORE is False


@pytest.mark.parametrize("argv", [[NODE, "HEAD~3..HEAD"], [NODE, "--good", "HEAD~3", "--bad", "HEAD"]],
                         ids=["GOOD..BAD", "--good and --bad"])
def test_the_command_bisects_the_case_it_names_between_the_refs_it_names(monkeypatch, tmp_path, argv, unchecked):
    """The first argument is the case and the second the range, never the range taken for a -k expression."""
    asked = []
    result = BisectResult(first_bad="b" * 40, last_good="a" * 40, candidates=["b" * 40])
    monkeypatch.setattr(cmd_bisect, "bisect", lambda *args: asked.append(args) or result)
    assert main(["bisect", *argv, "--repo", str(tmp_path), "--profile", "quick"]) == 0
    assert asked == [(str(tmp_path), Selector(node_id=NODE), "HEAD~3", "HEAD", "quick")]


def test_the_pasted_command_line_is_the_one_the_command_takes():
    line = command_line(NODE, "a" * 40, "b" * 40, "nightly")
    assert line == f"python -m kernelwatch.history bisect '{NODE}' {'a' * 12}..{'b' * 12} --profile nightly"
    assert command_line("blocktile and 4096", "a" * 40, "b" * 40) == \
        f"python -m kernelwatch.history bisect -k 'blocktile and 4096' {'a' * 12}..{'b' * 12}"
    # a profile the command does not take (a stored run's "smoke", say) is left to the command to choose
    assert command_line(NODE, "a" * 40, "b" * 40, "smoke") == \
        f"python -m kernelwatch.history bisect '{NODE}' {'a' * 12}..{'b' * 12}"


# judging one probe


def test_judge_reads_exit_status_and_report():
    slower = f"| `{NODE}` | 1 us | 1.03 us | 1.030× | 1.02-1.04 | 1.5% | - | cupti | **slower** |"
    assert judge(0, f"| `{NODE}` | 1 us | 1 us | 1.000× | 0.99-1.01 | 1.5% | - | cupti | same |") == GOOD
    assert judge(0, f"| `{NODE}` | - | - | - | - | - | - | - | unchanged |") == GOOD
    assert judge(0, None) == SKIP  # no GPU: the timed cases skipped, no A/B report
    assert judge(1, slower) == BAD
    assert judge(1, f"| `{NODE}` | 1 us | 1 us | 1.000× | - | 1.5% | - | cupti | same |") == SKIP  # a failed test
    for unjudged in ("unchanged", "throttled", "other timer"):  # a failed test beside a case that was not timed
        assert judge(1, f"| `{NODE}` | - | - | - | - | - | - | - | {unjudged} |") == SKIP
    assert judge(2, slower) == SKIP  # interrupted, or a usage error
    for signal in (-9, -15):
        assert judge(signal, slower) == SKIP
    assert case_row(slower) == ("slower", "1.030×")


def test_a_probe_that_cannot_judge_names_its_commit_and_the_end_of_the_ab(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["broken"])
    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", fake_command)
    assert probe == Probe(commits[0], SKIP, probe.detail)
    assert probe.detail.startswith("exit 1: cannot judge it (no case row in the report")
    assert "the kernel does not build" in probe.detail


def test_a_probe_whose_case_failed_names_the_verdict_its_row_gave(tmp_path):
    # exit 1 with a row that is not "slower": a test failed beside the case, so the commit cannot be judged,
    # and the detail says which verdict the case's row gave
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.0"])
    row = f"| `{NODE}` | 1 us | 1 us | 1.000× | - | 1.5% | - | cupti | same |"

    def failing_ab(selector, good, profile, report, python=sys.executable):
        return [python, "-c", f"import pathlib, sys; pathlib.Path({str(report)!r}).write_text({row!r}); "
                              "print('collected 2 items'); print('FAILED suites/test_x.py::test_y'); "
                              "print('assert 1 == 2', file=sys.stderr); print('1 failed'); sys.exit(1)"]

    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", failing_ab)
    # the last three lines of what the A/B printed, not more
    assert probe == Probe(commits[0], SKIP,
                          "exit 1: cannot judge it (same; FAILED suites/test_x.py::test_y / 1 failed / assert 1 == 2)")


def test_a_probe_that_pytest_refuses_names_pytests_one_line_why_and_bad_refused_ends_the_bisection(tmp_path):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.0", "1.0"])
    why = "--kernelwatch-compare-ref needs the project's kernel library: name its package in the ini key kernelwatch_kernels"

    def refused_ab(selector, good, profile, report, python=sys.executable):
        return [python, "-c", f"import sys; print({'ERROR: ' + why!r}, file=sys.stderr); print('', file=sys.stderr); "
                              "sys.exit(4)"]

    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", refused_ab)
    assert probe == Probe(commits[-1], SKIP, f"exit 4: cannot judge it: pytest refused the A/B: {why}")

    def errored_ab(selector, good, profile, report, python=sys.executable):  # an error line, but not a refusal
        return [python, "-c", f"import sys; print({'ERROR: ' + why!r}, file=sys.stderr); sys.exit(1)"]

    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", errored_ab)
    assert probe.detail.startswith("exit 1: cannot judge it (no case row in the report") and "refused" not in probe.detail
    with pytest.raises(BisectError) as raised:
        bisect(root, Selector(NODE), "HEAD~1", "HEAD", "quick",
               prober=lambda profile: worktree_prober(root, Selector(NODE), commits[0], profile, refused_ab))
    assert str(raised.value) == (f"HEAD ({commits[-1][:12]}) cannot be judged against HEAD~1: exit 4: cannot judge it: "
                                 f"pytest refused the A/B: {why}")


def test_probes_run_in_the_folder_of_the_checkout_the_bisection_was_started_in(tmp_path):
    """A project whose pytest rootdir is a folder of its git repository: each probe runs in that folder of its
    worktree, where the project's configuration, its testpaths and its node ids are."""
    root, project = tmp_path / "repo", tmp_path / "repo" / "python"
    commits = make_repo(root, ["1.00", "1.00", "1.03"], folder="python")
    result = bisect(project, Selector(NODE), commits[0], commits[-1], "quick",
                    prober=lambda profile: worktree_prober(project, Selector(NODE), commits[0], profile, fake_command))
    assert result.first_bad == commits[-1] and result.probes[0].verdict == GOOD
    # a commit without the folder cannot be judged, and says why
    _git(root, "checkout", "-q", "-b", "moved")
    _git(root, "rm", "-q", "-r", "python")
    _git(root, "commit", "-q", "-m", "the project moves away")
    moved = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "main")
    assert worktree_prober(project, Selector(NODE), commits[0], "quick", fake_command)(moved) == Probe(
        moved, SKIP, "cannot judge it: the commit has no folder python/")


def test_a_probe_that_printed_much_keeps_a_short_detail(tmp_path):
    root = tmp_path / "repo"
    make_repo(root, ["1.0"])

    def chatty_ab(selector, good, profile, report, python=sys.executable):
        return [python, "-c", "import sys; print('x' * 1000); sys.exit(1)"]

    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", chatty_ab)
    assert probe.detail.startswith("exit 1: cannot judge it (no case row in the report; xxx") and len(probe.detail) <= 400


def test_a_probe_that_runs_past_the_limit_cannot_be_judged(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    commits = make_repo(root, ["1.0"])
    monkeypatch.setattr(bisect_module, "PROBE_TIMEOUT_S", 0.05)

    def hanging_ab(selector, good, profile, report, python=sys.executable):
        return [python, "-c", "import time; time.sleep(60)"]

    probe = probe_tree(root, Selector(NODE), "HEAD", "quick", hanging_ab)
    assert probe == Probe(commits[0], SKIP, "exit 125: cannot judge it (no case row in the report; timed out after "
                                            "0.05 s)")


def test_the_probe_mode_exits_as_git_bisect_run_reads_it(monkeypatch, capsys):
    sha = "0123456789abcdef" * 2 + "01234567"
    for verdict, status in ((BAD, 1), (GOOD, 0), (SKIP, CANNOT_JUDGE)):
        monkeypatch.setattr(bisect_module, "probe_tree", lambda *args, v=verdict: Probe(sha, v, "exit 0"))
        assert bisect_module.main([NODE, "--good", "HEAD~1", "--probe"]) == status
        assert capsys.readouterr().err == f"0123456789ab {verdict} (exit 0)\n"  # what git bisect run's log shows
    assert CANNOT_JUDGE == 125  # git-bisect(1): "exit code 125 ... cannot be tested"


@pytest.mark.parametrize("argv", [[NODE, "--probe"], [NODE, "--good", "HEAD~1"]])
def test_the_probe_mode_needs_the_good_ref_and_says_probe(monkeypatch, capsys, argv):
    # without --good there is nothing to time against; without --probe it is not `git bisect run` calling
    monkeypatch.setattr(bisect_module, "probe_tree", lambda *args: Probe("c" * 40, GOOD))
    with pytest.raises(SystemExit) as exited:
        bisect_module.main(argv)
    assert exited.value.code == 2 and "required" in capsys.readouterr().err


def test_a_copy_of_the_module_imported_under_another_name_runs_nothing(monkeypatch):
    # `cp src/kernelwatch/history/bisect.py /tmp/AB_probe.py`: importing the copy (any name, capitals too) only defines it
    import importlib.util

    spec = importlib.util.spec_from_file_location("AB_probe", bisect_module.__file__)
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "AB_probe", copy)
    spec.loader.exec_module(copy)
    assert copy.judge(0, None) == SKIP


def test_bisect_runs_as_a_module_of_its_own_for_git_bisect_run():
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "kernelwatch.history.bisect", "--help"], capture_output=True, text=True,
                          cwd=root)
    assert done.returncode == 0 and "--probe" in done.stdout


@pytest.mark.parametrize("candidates, probes", [(0, 0), (1, 0), (2, 1), (3, 2), (8, 3), (9, 4)])
def test_the_probes_a_bisection_needs(candidates, probes):
    assert probes_needed(candidates) == probes


@pytest.mark.parametrize("value, name", [(Probe("abc", GOOD), "verdict"), (Selector(NODE), "node_id")])
def test_a_probe_cannot_be_changed_after_it_judged_nor_the_selector_it_judged(value, name):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, name, BAD)
    assert {value: 1}[dataclasses.replace(value)] == 1  # a value: equal ones are one key


def test_a_git_command_that_fails_is_named_with_the_last_line_it_printed(monkeypatch, capsys, unchecked):
    # git's last stderr line is the one that says why (the first is often a hint or a warning)
    def failing(*args):
        raise subprocess.CalledProcessError(128, ["git", "rev-list", "--first-parent", "a..b", "extra"],
                                            stderr="hint: something first\nhint: and then\nfatal: bad revision 'a..b'\n")
    monkeypatch.setattr(cmd_bisect, "bisect", failing)
    assert main(["bisect", NODE, "HEAD~1..HEAD"]) == 1
    assert capsys.readouterr().err == "error: git rev-list --first-parent a..b failed: fatal: bad revision 'a..b'\n"
    def silent(*args):
        raise subprocess.CalledProcessError(3, ["git", "log"], stderr="")
    monkeypatch.setattr(cmd_bisect, "bisect", silent)
    assert main(["bisect", NODE, "HEAD~1..HEAD"]) == 1
    assert capsys.readouterr().err == "error: git log failed: exit 3\n"


def test_a_git_command_that_fails_is_an_error_not_an_empty_answer(tmp_path):
    import subprocess

    from kernelwatch.history.bisect import _git

    with pytest.raises(subprocess.CalledProcessError):
        _git(tmp_path, "rev-parse", "--verify", "HEAD")  # no repository here


def test_the_result_counts_the_check_of_bad_among_the_probes():
    probes = [Probe("c" * 40, GOOD, "same"), Probe("d" * 40, BAD, "slower"), Probe("e" * 40, GOOD, "same")]
    result = BisectResult(first_bad="d" * 40, last_good="c" * 40, candidates=["c" * 40, "d" * 40, "e" * 40, "f" * 40],
                          probes=probes, checked=Probe("f" * 40, BAD, "slower"))
    assert result_lines(result)[-1].endswith("(last good cccccccccccc; 4 candidates, 4 probes)")  # 3 and the check
    assert result_lines(dataclasses.replace(result, checked=None))[-1].endswith("4 candidates, 3 probes)")


@pytest.mark.parametrize("output, said", [
    ("ImportError while loading conftest\n  File conftest.py, line 3\nModuleNotFoundError: No module named 'x'",
     "ModuleNotFoundError: No module named 'x'"),  # no ERROR line: the last line, where Python names its error
    ("collecting ...\nERROR: not found: t.py::x\nsummary", "ERROR: not found: t.py::x"),  # pytest's own ERROR line
    ("only line", "only line"),
    ("", "nothing said"),
])
def test_a_collection_that_fails_is_named_by_its_error_line_or_else_its_last(monkeypatch, tmp_path, output, said):
    monkeypatch.setattr(bisect_checks.subprocess, "run",
                        lambda *args, **kwargs: subprocess.CompletedProcess(args, 2, output, ""))
    selector = bisect_module.Selector(expression="test_time")
    with pytest.raises(bisect_module.BisectError) as raised:
        bisect_checks.check_selection(tmp_path, selector, ["quick"])
    assert str(raised.value) == (f"{selector.shell()} selects no timed case in {tmp_path}: pytest --collect-only "
                                 f"exit 2: {said}")[:400]
