"""src/kernelwatch/verdict/acceptance.py, src/kernelwatch/ab/commits.py and src/kernelwatch/plugin/regression.py: a slowdown that was meant.

The trailer's two forms (cases=PATTERN, or the cases whose machine code changed), the window of
commits a slower case is shown with (read from a real git repository), and what the plugin makes
of a slower verdict with and without an acceptance in its window.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from kernelwatch.ab.commits import Commit, CommitWindow, head_of, window
from kernelwatch.plugin.regression import (
    bisect_command,
    failure_words,
    follow_slower,
    follow_slower_phases,
)
from kernelwatch.report.session_report import is_failing_record, is_followed_record, window_lines
from kernelwatch.verdict.acceptance import Acceptance, accepted, first_accepting, parse_acceptance
from kernelwatch.verdict.labels import ACCEPTED, FASTER, SAME, SLOWER, THROTTLED, UNCHANGED, ReferenceRun, Verdict
from kernelwatch.verdict.phases import phase_fields
from kernelwatch.verdict.record import CaseRecord
from tests.support.git_repos import git
from tests.support.suite_states import state_with

CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"


@pytest.fixture
def repo(tmp_path):
    """main: base, "tiles" (Accept-Slowdown in its body), a merge of a branch whose commit carries another."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("0")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    (root / "a.txt").write_text("1")
    git(root, "commit", "-q", "-am", "tiles\n\nAccept-Slowdown: 8-deep k tiles, 3% at 4096³")
    git(root, "checkout", "-q", "-b", "topic")
    (root / "b.txt").write_text("b")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "on a branch\n\nAccept-Slowdown: cases=*blocktile* the branch's own")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    return root, base, git(root, "rev-parse", "HEAD")


# the trailer


def test_a_reason_alone_accepts_the_cases_whose_machine_code_changed():
    one = parse_acceptance("  8-deep k tiles,   3% at 4096³ ", "the trailer of abc")
    assert one == Acceptance("8-deep k tiles, 3% at 4096³", (), "the trailer of abc")
    assert one.accepts(CASE, code_changed=True) and not one.accepts(CASE, code_changed=False)


@pytest.mark.parametrize("patterns, accepted_case", [
    ("warptile_128x256", True),  # a substring of the node id
    ("*warptile_*x256*", True),  # a glob of the whole id
    ("test_matmul_time[4096x4096x4096-warptile_128x256]", True),  # brackets taken literally as a substring
    ("blocktile,*128x256]", True),  # any of several
    ("blocktile", False),
])
def test_cases_names_the_cases_it_accepts_whatever_their_code(patterns, accepted_case):
    one = parse_acceptance(f"cases={patterns} meant")
    assert one.reason == "meant" and one.patterns == tuple(patterns.split(","))
    assert one.accepts(CASE, code_changed=False) is accepted_case
    assert one.accepts(CASE, code_changed=True) is accepted_case  # a pattern is the whole rule


@pytest.mark.parametrize("value, words", [("cases= why", "names no case pattern"),
                                          ("cases=*tile*", "gives no reason after them")])
def test_a_trailer_that_names_cases_badly_is_refused_with_its_text(value, words):
    with pytest.raises(ValueError, match=words):
        parse_acceptance(value)


def test_a_blank_value_is_no_acceptance_and_the_first_that_accepts_wins():
    assert parse_acceptance("  ") is None
    narrow, broad = Acceptance("narrow", ("blocktile",)), Acceptance("broad")
    assert first_accepting([narrow, broad], CASE, code_changed=True) is broad
    assert first_accepting([narrow, broad], CASE, code_changed=False) is None


def test_an_accepted_verdict_passes_and_says_by_what_and_only_slower_is_changed():
    slower = Verdict(CASE, SLOWER, 1e-3, 1.03e-3, 1.03, 0.015, "3.0% slower")
    done = accepted(slower, Acceptance("meant", ("warptile",), "the trailer of 0123456789ab"))
    assert done.label == ACCEPTED and not done.fails
    assert done.reason == "3.0% slower; accepted: meant (cases warptile), by the trailer of 0123456789ab"
    same = Verdict(CASE, SAME, 1e-3, 1e-3, 1.0, 0.015, "")
    assert accepted(same, Acceptance("meant")) is same


# the window


def test_the_window_lists_first_parent_commits_oldest_first_and_every_trailer_of_the_range(repo):
    root, base, head = repo
    found = window(root, base, head, env={})
    assert [c.subject for c in found.commits] == ["tiles", "merge topic"]  # first parent: not the branch's commit
    assert [value for _, value in found.acceptances] == ["8-deep k tiles, 3% at 4096³",
                                                         "cases=*blocktile* the branch's own"]
    assert found.unknown == "" and found.link is None
    assert CommitWindow.from_dict(found.as_dict()) == found
    assert found.lines()[0] == (f"commits {base[:12]}..{head[:12]}: 2 commits (first parent, oldest first)")


def test_on_github_the_window_links_its_compare_page(repo):
    root, base, head = repo
    found = window(root, base, head, env={"GITHUB_SERVER_URL": "https://github.com/", "GITHUB_REPOSITORY": "o/r"})
    assert found.link == f"https://github.com/o/r/compare/{base}...{head}"
    assert found.lines()[0].endswith(f"; https://github.com/o/r/compare/{base}...{head}")
    for half in ({"GITHUB_SERVER_URL": "https://github.com/"}, {"GITHUB_REPOSITORY": "o/r"}):
        assert window(root, base, head, env=half).link is None  # one of the two: no link, not a broken one


def test_a_reference_commit_that_is_not_in_the_checkout_is_said_not_guessed(repo):
    root, _, head = repo
    found = window(root, "f" * 40, head, env={})
    assert found.commits == () and "shallow clone" in found.unknown and "fetch-depth: 0" in found.unknown
    assert found.lines() == [f"commits {'f' * 12}..{head[:12]}: not listed ({found.unknown})"]
    assert window(root, None, head, env={}).unknown == "the reference runs name no commit"


def test_a_long_window_shows_its_ends_and_counts_the_rest():
    commits = tuple(SimpleNamespace(sha=f"{i:040x}", subject=f"c{i}") for i in range(30))
    lines = CommitWindow("a" * 40, "b" * 40, commits).lines(limit=6)
    assert [line.split()[-1] for line in lines[1:]] == ["c0", "c1", "c2", "more", "c27", "c28", "c29"]
    assert lines[4] == "  ... 24 more"


def test_head_of_tells_a_dirty_tree_and_a_folder_outside_git(repo, tmp_path):
    root, _, head = repo
    assert head_of(root) == (head, False)
    (root / "a.txt").write_text("changed")
    assert head_of(root) == (head, True)
    (tmp_path / "plain").mkdir()
    assert head_of(tmp_path / "plain") == (None, False)


def test_a_window_of_one_commit_or_none_says_so_in_words():
    one = CommitWindow("a" * 40, "b" * 40, (Commit("c" * 40, "tiles"),))
    assert one.lines() == [f"commits {'a' * 12}..{'b' * 12}: 1 commit (first parent, oldest first)",
                           f"  {'c' * 12} tiles"]
    assert CommitWindow("a" * 40, "a" * 40).lines() == [f"commits {'a' * 12}..{'a' * 12}: 0 commits (first parent, "
                                                  f"oldest first)"]


def test_a_window_of_up_to_twelve_commits_is_listed_whole_by_default_and_a_longer_one_is_cut():
    def listed(count: int) -> list[str]:
        return CommitWindow("a" * 40, "b" * 40, tuple(Commit(f"{i:040x}", f"c{i}") for i in range(count))).lines()

    assert [line.split()[-1] for line in listed(12)[1:]] == [f"c{i}" for i in range(12)]
    assert [line.split()[-1] for line in listed(13)[1:]] == [*(f"c{i}" for i in range(6)), "more",
                                                             *(f"c{i}" for i in range(7, 13))]


def test_a_window_that_was_not_listed_reads_back_from_its_dict_with_its_reason():
    unlisted = CommitWindow("f" * 40, "b" * 40, unknown="unknown git ref: a shallow clone?", head_dirty=True)
    assert CommitWindow.from_dict(unlisted.as_dict()) == unlisted
    assert CommitWindow.from_dict(unlisted.as_dict()).lines() == [f"commits {'f' * 12}..{'b' * 12}: not listed "
                                                            f"(unknown git ref: a shallow clone?)"]


def test_a_window_and_its_commits_are_values_equal_ones_hash_alike_and_they_cannot_be_changed():
    one, same = (CommitWindow("a" * 40, "b" * 40, (Commit("c" * 40, "tiles"),)) for _ in range(2))
    assert one == same and len({one, same}) == 1 and len({one.commits[0], same.commits[0]}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.unknown = "edited"  # state.code.windows shares one window among the cases of its reference commit
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.commits[0].subject = "edited"


def test_window_takes_the_checkout_and_the_range_by_name(repo):
    root, base, head = repo
    found = window(repo=root, base=base, head=head, env={})
    assert found == window(root, base, head, env={}) and len(found.commits) == 2


def test_a_commit_subject_is_listed_whole_whatever_its_characters(repo):
    root, base, _ = repo
    git(root, "commit", "-q", "--allow-empty", "-m", "tiles\x1fcopies")
    found = window(root, base, git(root, "rev-parse", "HEAD"), env={})
    assert [c.subject for c in found.commits] == ["tiles", "merge topic", "tiles\x1fcopies"]


def test_a_subject_holding_gits_old_separators_is_one_commit_and_a_trailer_value_one_acceptance(repo):
    # the window's fields were once split on \x1e, \x1f and \x1d, which a subject or a trailer may hold
    root, base, _ = repo
    git(root, "commit", "-q", "--allow-empty", "-m", "tiles\x1ecopies\x1dmore")
    git(root, "commit", "-q", "--allow-empty", "-m", "k\n\nAccept-Slowdown: a\x1db\nAccept-Slowdown: folded\n  over two")
    found = window(root, base, git(root, "rev-parse", "HEAD"), env={})
    assert [c.subject for c in found.commits] == ["tiles", "merge topic", "tiles\x1ecopies\x1dmore", "k"]
    assert [value for _, value in found.acceptances][-2:] == ["a\x1db", "folded over two"]


@pytest.mark.parametrize("limit, first, last", [(5, 2, 3), (4, 2, 2), (1, 0, 1), (0, 0, 0)])
def test_a_window_longer_than_the_limit_shows_limit_commits_and_counts_the_others(limit, first, last):
    commits = tuple(Commit(f"{i:040x}", f"c{i}") for i in range(30))
    listed = [line.split()[-1] for line in CommitWindow("a" * 40, "b" * 40, commits).lines(limit)[1:]]
    assert listed == [*(f"c{i}" for i in range(first)), "more", *(f"c{i}" for i in range(30 - last, 30))]
    assert f"... {30 - limit} more" in "\n".join(CommitWindow("a" * 40, "b" * 40, commits).lines(limit))
    with pytest.raises(ValueError, match="limit must be 0 or more, got -1"):
        CommitWindow("a" * 40, "b" * 40, commits).lines(-1)


def git_on_path(tmp_path, monkeypatch, body: str) -> None:
    """A `git` first on PATH that runs the shell `body` and then the real git."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").write_text(f"#!/bin/sh\n{body}\nexec {shutil.which('git')} \"$@\"\n")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_a_git_log_that_fails_leaves_the_window_unlisted_with_gits_last_words(repo, tmp_path, monkeypatch):
    root, base, head = repo
    git_on_path(tmp_path, monkeypatch, 'if [ "$3" = log ]; then printf "hint: a hint\\nfatal: bad object\\n" >&2; '
                                       "exit 128; fi")
    found = window(root, base, head, env={})
    assert (found.base, found.head, found.commits) == (base, head, ())
    assert found.unknown.endswith(": fatal: bad object") and "hint" not in found.unknown


def test_head_of_a_checkout_whose_git_dies_of_a_signal_is_not_known(repo, tmp_path, monkeypatch):
    root, _, _ = repo
    git_on_path(tmp_path, monkeypatch, "kill -KILL $$")
    assert head_of(root) == (None, False)


def test_a_git_that_cannot_be_started_while_listing_leaves_the_window_unlisted(repo, monkeypatch):
    root, base, head = repo
    started = subprocess.run

    def run(args, *rest, **options):
        if "log" in args:
            raise FileNotFoundError(2, "No such file or directory", "git")
        return started(args, *rest, **options)

    monkeypatch.setattr(subprocess, "run", run)
    found = window(root, base, head, env={})
    assert (found.base, found.head, found.commits) == (base, head, ()) and "No such file" in found.unknown


# the plugin's follow-up of a slower verdict


def state_at(root):
    return state_with(repo=root, head=None, windows={}, problems=[])


def slower_verdict(base: str, sass: str | None = "sass-old") -> Verdict:
    return Verdict(CASE, SLOWER, 1e-3, 1.03e-3, 1.03, 0.015, "3.0% slower", p_value=1e-9,
                   reference="history of GPU-a", reference_runs=1,
                   references=(ReferenceRun("history run 6", "2026-12-02T10:00:00", base, sass),))


def test_a_trailer_in_the_window_accepts_a_case_whose_machine_code_changed_and_is_kept_in_its_record(repo):
    root, base, head = repo
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-new")
    record, verdict = follow_slower(state_at(root), record, slower_verdict(base))
    assert verdict.label == ACCEPTED and record.verdict == ACCEPTED
    assert record.accepted_reason.startswith("8-deep k tiles, 3% at 4096³, by the Accept-Slowdown trailer of ")
    assert re.fullmatch(r"8-deep k tiles, 3% at 4096³, by the Accept-Slowdown trailer of [0-9a-f]{12}",
                        record.accepted_reason)
    assert CommitWindow.from_dict(record.window).head == head and record.references[0]["name"] == "history run 6"


def test_without_a_change_of_machine_code_only_a_pattern_accepts_and_the_failure_says_why(repo):
    root, base, _ = repo
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-old")
    record, verdict = follow_slower(state_at(root), record, slower_verdict(base))
    assert verdict.label == SLOWER and record.accepted_reason is None
    words = failure_words(record)
    assert "(2 commits, 2 Accept-Slowdown trailers in it, none naming this case)" in words
    assert "Accept-Slowdown: REASON" in words and "acknowledge" in words


def test_a_malformed_trailer_is_a_problem_of_the_run_named_once(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "commit", "-q", "--allow-empty", "-m", "oops\n\nAccept-Slowdown: cases=*tile*")
    state = state_at(root)
    for _ in range(2):
        record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-new")
        _, verdict = follow_slower(state, record, slower_verdict(base))
        assert verdict.label == SLOWER
    assert len(state.findings.problems) == 1 and "gives no reason after them" in state.findings.problems[0]


def test_a_verdict_that_is_not_slower_or_names_no_stored_run_is_left_alone(repo):
    root, base, _ = repo
    record = CaseRecord(case=CASE, median_s=1e-3, samples=[1e-3])
    same = Verdict(CASE, SAME, 1e-3, 1e-3, 1.0, 0.015, "")
    assert follow_slower(state_at(root), record, same) == (record, same)
    for label in (SAME, "faster", "accepted", "throttled"):  # with references: labels sort on both sides of slower
        judged = Verdict(CASE, label, 1e-3, 1e-3, 1.0, 0.015, "",
                         references=(ReferenceRun("history run 6", "2026-12-02T10:00:00", base, "sass-old"),))
        assert follow_slower(state_at(root), record, judged) == (record, judged)
    ref = Verdict(CASE, SLOWER, 1e-3, 1.1e-3, 1.1, 0.015, "", reference="origin/main")
    assert follow_slower(state_at(root), record, ref) == (record, ref)


def bisect_of(record: CaseRecord) -> str | None:
    """The bisect command the plugin hands the report for a followed case of the nightly."""
    return bisect_command(record.case, CommitWindow.from_dict(record.window), "nightly")


def test_the_report_block_names_the_reference_runs_the_commits_the_bisect_line_and_how_to_accept(repo):
    root, base, head = repo
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-old")
    record, _ = follow_slower(state_at(root), record, slower_verdict(base))
    lines = window_lines(record, bisect_of(record), 17, markdown=True)
    assert lines[0] == f"### `{CASE}`: slower x1.030"
    assert lines[1] == f"- against history run 6 (newest: 2026-12-02 10:00 UTC, commit {base[:12]})"
    assert lines[2].startswith(f"- commits {base[:12]}..{head[:12]}: 2 commits")
    assert lines[3].strip().endswith("tiles") and lines[4].strip().endswith("merge topic")
    assert lines[5] == (f"- bisect: `python -m kernelwatch.history bisect '{CASE}' {base[:12]}..{head[:12]} "
                        f"--profile nightly`")
    assert f"`python -m kernelwatch.history acknowledge '{CASE}' 17 --reason TEXT`" in lines[6]
    assert bisect_command(CASE, CommitWindow(None, head, unknown="no"), "nightly") is None
    # no commit in the window: nothing to bisect
    assert bisect_command(CASE, CommitWindow(head, head), "nightly") is None


def test_an_acceptance_is_a_value_equal_ones_hash_alike_and_it_cannot_be_changed():
    import dataclasses

    one, same = Acceptance("meant", ("warptile",), "a"), Acceptance("meant", ("warptile",), "a")
    assert one == same and len({one, same}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.reason = "other"


@pytest.mark.parametrize("label", ["throttled", "unchanged", "new", "faster", "other GPU"])
def test_a_verdict_of_any_label_but_slower_is_not_accepted(label):
    verdict = Verdict(CASE, label, 1e-3, 1.03e-3, 1.03, 0.015, "why")
    assert accepted(verdict, Acceptance("meant")) is verdict


def from_json(text: str) -> str:
    """`text` as a record read back from the store holds it: an equal string, not the same object."""
    import json

    return json.loads(json.dumps({"text": text}))["text"]


def test_a_slower_verdict_read_back_from_json_is_accepted():
    # a stored record's label: a new string, equal to the word the verdict wrote
    label = from_json(SLOWER)
    done = accepted(Verdict(CASE, label, 1e-3, 1.03e-3, 1.03, 0.015, "3.0% slower"), Acceptance("meant"))
    assert done.label == ACCEPTED and done.reason == "3.0% slower; accepted: meant"


# the same follow-up over windows listed beforehand (state.code.windows holds each reference commit's window)

BASE, OLDER_BASE, HEAD = "ba5e" * 10, "01de" * 10, "4ead" * 10


def state_listing(*found: CommitWindow) -> SimpleNamespace:
    return state_with(repo=None, head=(HEAD, False), windows={one.base: one for one in found}, problems=[])


def test_a_malformed_trailer_is_a_problem_named_by_its_short_commit_and_a_later_trailer_still_accepts():
    bad, good = "b1" * 20, "c2" * 20
    found = CommitWindow(BASE, HEAD, (Commit(bad, "oops"), Commit(good, "tiles")),
                         ((bad, "cases=*tile*"), (good, "meant")))
    state = state_listing(found)
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-new")
    record, verdict = follow_slower(state, record, slower_verdict(BASE))
    assert verdict.label == ACCEPTED and record.accepted_reason == f"meant, by the Accept-Slowdown trailer of {good[:12]}"
    assert state.findings.problems == [f"commit {bad[:12]}: Accept-Slowdown: 'cases=*tile*' names cases but gives no reason "
                              f"after them"]


@pytest.mark.parametrize("sass, reference_sass, code_changed", [
    ("sass-new", "sass-old", True),
    ("sass-old", "sass-new", True),  # changed code, whichever way its hashes sort
    (from_json("sass-old"), "sass-old", False),  # the reference's hash read back from the store: the same code
    (None, "sass-old", False),  # no machine code to compare: not known to have changed
])
def test_a_reason_alone_accepts_a_slower_case_only_when_its_machine_code_differs_from_the_references(
        sass, reference_sass, code_changed):
    found = CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),), (("c" * 40, "meant"),))
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass=sass)
    record, verdict = follow_slower(state_listing(found), record, slower_verdict(BASE, reference_sass))
    assert verdict.label == (ACCEPTED if code_changed else SLOWER)
    assert record.window == found.as_dict()


def test_a_slower_verdict_whose_label_was_read_back_from_json_is_followed_like_any():
    found = CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),), (("c" * 40, "meant"),))
    slower = dataclasses.replace(slower_verdict(BASE), label=from_json(SLOWER))
    record = CaseRecord(case=CASE, median_s=1.03e-3, samples=[1.03e-3], sass="sass-new")
    record, verdict = follow_slower(state_listing(found), record, slower)
    assert verdict.label == ACCEPTED and record.window == found.as_dict()


ROUTINE = "suites/test_perf_matmul.py::test_matmul_host_routine_time[tiled16-pinned]"


def phase_verdict(phase: str, label: str, reference: ReferenceRun | None) -> Verdict:
    return Verdict(f"{ROUTINE} {phase}", label, 1e-4, 1.1e-4, 1.1, 0.015, "10% slower",
                   references=(reference,) if reference else ())


def test_a_host_routine_without_a_slower_phase_against_stored_runs_gets_no_window():
    reference = ReferenceRun("history run 6", "2026-12-02T10:00:00", BASE)
    state = state_listing(CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),),
                                       (("c" * 40, "cases=*tiled16* meant"),)))
    record = CaseRecord(case=ROUTINE, median_s=5e-4, samples=[5e-4])
    verdicts = {"kernel": phase_verdict("kernel", SAME, reference), "copy": phase_verdict("copy", THROTTLED, reference),
                "host": phase_verdict("host", FASTER, reference), "wait": phase_verdict("wait", SLOWER, None)}
    assert follow_slower_phases(state, record, verdicts) == (record, verdicts)


def test_a_host_routines_slower_phases_follow_the_window_of_their_newest_reference_run():
    older = ReferenceRun("history run 5", "2026-12-01T10:00:00", OLDER_BASE)
    newer = ReferenceRun("history run 6", "2026-12-02T10:00:00", BASE)
    newest_window = CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),), (("c" * 40, "cases=*tiled16* meant"),))
    state = state_listing(CommitWindow(OLDER_BASE, HEAD, (Commit("d" * 40, "other"), Commit("c" * 40, "tiles"))),
                          newest_window)
    record = CaseRecord(case=ROUTINE, median_s=5e-4, samples=[5e-4])
    # phase verdicts as labelled by a stored record: equal strings, not the same objects
    verdicts = {"kernel": phase_verdict("kernel", from_json(SLOWER), older),
                "copy": phase_verdict("copy", from_json(SLOWER), newer), "host": phase_verdict("host", SAME, newer)}
    record, followed = follow_slower_phases(state, record, verdicts)
    assert record.window == newest_window.as_dict()
    assert record.accepted_reason == f"meant (cases *tiled16*), by the Accept-Slowdown trailer of {'c' * 12}"
    assert {phase: verdict.label for phase, verdict in followed.items()} == {
        "kernel": ACCEPTED, "copy": ACCEPTED, "host": SAME}


@pytest.mark.parametrize("commits, trailers, words", [
    (0, 0, "(0 commits, no Accept-Slowdown trailer in it)"),  # slower again at the reference's own commit
    (1, 1, "(1 commit, 1 Accept-Slowdown trailer in it, none naming this case)"),
    (3, 2, "(3 commits, 2 Accept-Slowdown trailers in it, none naming this case)"),
])
def test_the_failure_counts_the_windows_commits_and_trailers_in_words(commits, trailers, words):
    found = CommitWindow(BASE, HEAD, tuple(Commit(f"{i:040x}", f"c{i}") for i in range(commits)),
                   tuple((f"{i:040x}", "cases=*blocktile* meant") for i in range(trailers)))
    record = CaseRecord(case=CASE, median_s=1e-3, verdict=SLOWER, window=found.as_dict())
    assert failure_words(record).startswith(f"; window {BASE[:12]}..{HEAD[:12]} {words}: if the slowdown is meant")


def test_only_a_slower_case_or_a_failing_phase_fails_and_only_a_record_with_a_window_is_followed():
    found = CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),)).as_dict()
    for label in (SAME, FASTER, ACCEPTED, THROTTLED, UNCHANGED, None):
        record = CaseRecord(case=CASE, median_s=1e-3, verdict=label, window=found)
        assert not is_failing_record(record)
        assert is_followed_record(record) is (label == ACCEPTED)
    for label in (SLOWER, from_json(SLOWER)):  # a record read back from the store fails alike
        assert is_failing_record(CaseRecord(case=CASE, median_s=1e-3, verdict=label))
    assert not is_followed_record(CaseRecord(case=CASE, median_s=1e-3, verdict=SLOWER))  # no window (an A/B's)
    failing = phase_fields("kernel", phase_verdict("kernel", SLOWER, None))
    assert is_failing_record(CaseRecord(case=ROUTINE, median_s=5e-4, verdict=SAME, phase_verdicts=[failing]))


def test_the_terminal_block_names_every_reference_run_and_the_newest_and_indents_the_commits():
    runs = [ReferenceRun("history run 5", "2026-12-01T09:00:00", OLDER_BASE),
            ReferenceRun("history run 6", "2026-12-02T10:30:00", BASE)]
    found = CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"), Commit("d" * 40, "merge topic")))
    record = CaseRecord(case=CASE, median_s=1.03e-3, verdict=SLOWER, ratio=1.03,
                        references=[run.as_dict() for run in runs], window=found.as_dict())
    lines = window_lines(record=record, bisect=bisect_of(record), run_id=None, markdown=False)
    assert lines[:5] == [f"{CASE}: slower x1.030",
                         f"  against history run 5, history run 6 (newest: 2026-12-02 10:30 UTC, commit {BASE[:12]})",
                         f"  commits {BASE[:12]}..{HEAD[:12]}: 2 commits (first parent, oldest first)",
                         f"    {'c' * 12} tiles", f"    {'d' * 12} merge topic"]
    assert lines[-1].endswith(f"python -m kernelwatch.history acknowledge '{CASE}' RUN --reason TEXT")
    markdown = window_lines(record, bisect_of(record), 17, markdown=True)
    assert markdown[2:5] == [f"- commits {BASE[:12]}..{HEAD[:12]}: 2 commits (first parent, oldest first)",
                             f"  {'c' * 12} tiles", f"  {'d' * 12} merge topic"]


def test_a_host_routines_block_lists_its_followed_phases_against_the_first_ones_reference_runs():
    first = ReferenceRun("history run 6", "2026-12-02T10:00:00", BASE)
    second = ReferenceRun("history run 4", "2026-11-30T10:00:00", OLDER_BASE)
    phases = [phase_fields("host", phase_verdict("host", SAME, second)),
              phase_fields("kernel", phase_verdict("kernel", SLOWER, first)),
              phase_fields("copy", phase_verdict("copy", ACCEPTED, second))]
    record = CaseRecord(case=ROUTINE, median_s=5e-4, verdict=SAME, phase_verdicts=phases,
                        window=CommitWindow(BASE, HEAD, (Commit("c" * 40, "tiles"),)).as_dict())
    lines = window_lines(record, bisect_of(record), 17, markdown=False)
    assert lines[:2] == [f"{ROUTINE}: kernel phase slower x1.100; copy phase accepted x1.100",
                         f"  against history run 6 (newest: 2026-12-02 10:00 UTC, commit {BASE[:12]})"]
