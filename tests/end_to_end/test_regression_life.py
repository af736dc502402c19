"""The life of a regression, end to end on the fake GPU, on SQLite and on PostgreSQL.

Twelve nightlies (`--benchmark-compare --kernelwatch-history`), each at a commit of its own in a git
repository: runs 1-6 clean, then from run 7 on the cases beta and gamma are 3% slower.
Between runs 7 and 8 a commit lands with `Accept-Slowdown: cases=*beta* ...`. So beta fails
at run 7, is accepted at run 8 and is judged against runs 8 on from run 9 (same); gamma,
which no trailer names, fails every night from run 7 to 12; alpha never changes, and the
runs that failed for beta and gamma serve as its references. Then `changes` names the step
at run 7 with its commits, open for gamma and accepted for beta, and the dashboard draws
gamma's runs 7-12 as failed. (The fake suite's cases carry no machine code, so only a trailer's
case pattern can accept them here; tests/verdict/test_acceptance.py covers the machine-code rule.)

Runs 1-6 are timed once (SQLite) and recorded into each backend's store through
`HistoryStore.record_run`, the call the plugin makes; runs 7-12 go through the plugin.
"""

from __future__ import annotations

import re
import shutil

import pytest

from kernelwatch.history.cli import main
from kernelwatch.history.site import case_page_name
from kernelwatch.storage.history import open_store
from tests.support.backends import fresh_postgres_database, sqlite_file
from tests.support.fake_suite import SUITE, output, run, suite_repository
from tests.support.git_repos import commit, git

CLEAN, SLOW_AT, RUNS = 6, 7, 12
CASE = "test_fake_suite.py::test_time[{}]"
SLOWED = ["--fake-gpu-slowdown=*beta*:1.03", "--fake-gpu-slowdown=*gamma*:1.03"]
TRAILER = "Accept-Slowdown: cases=*beta* beta's new tiles trade 3% for the edge case"


pytestmark = pytest.mark.slow  # eighteen runs of the plugin: run by CI's second pass (tox -e unit -- -m slow)


def nightly(folder, url: str, number: int, *extra: str):
    return run(folder, "--benchmark-compare", f"--kernelwatch-history={url}", f"--fake-gpu-seed={number}", *extra)


@pytest.fixture(scope="module")
def clean_history(tmp_path_factory):
    """A suite in a git repository with CLEAN nightlies made at commits of their own: (folder, their documents)."""
    folder = tmp_path_factory.mktemp("suite")
    suite_repository(folder, "test_fake_suite.py", SUITE)
    url = f"sqlite:///{folder / 'clean.sqlite'}"
    for number in range(1, CLEAN + 1):
        commit(folder, number)
        result = nightly(folder, url, number)
        assert result.returncode == 0, output(result)
    with open_store(url) as store:
        documents = [store.export_run(run_id) for run_id in range(1, CLEAN + 1)]
    (folder / "clean.sqlite").unlink()
    return folder, documents


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def life(request, clean_history, tmp_path_factory):
    """Runs 7-12 on a copy of the suite: (folder, store URL, {run: pytest result}, {run: commit})."""
    source, documents = clean_history
    tmp_path = tmp_path_factory.mktemp(request.param)
    folder = tmp_path / "suite"
    shutil.copytree(source, folder)
    with fresh_postgres_database() if request.param == "postgresql" else sqlite_file(tmp_path) as url:
        with open_store(url) as store:
            for doc in documents:
                store.record_run(doc, outcome="passed", profile="nightly", other_failures=0)
        results, commits = {}, {CLEAN: git(folder, "rev-parse", "HEAD")}
        for number in range(SLOW_AT, RUNS + 1):
            message = f"beta's new tiles\n\n{TRAILER}" if number == SLOW_AT + 1 else None
            commits[number] = commit(folder, number, message)
            results[number] = nightly(folder, url, number, *SLOWED)
            (folder / f"report-{number}.md").write_text((folder / "report.md").read_text())
        yield folder, url, results, commits


def stored(url: str, case: str) -> dict[int, dict]:
    """{run: the case's stored record} for every run."""
    with open_store(url) as store:
        return {run: store.case_record(CASE.format(case), run) for run in range(1, RUNS + 1)}


def test_a_slowdown_fails_until_accepted_and_other_cases_keep_their_history_moving(life):
    folder, url, results, commits = life
    # every run from 7 on fails (gamma, never accepted); the runs are recorded, each case with its outcome
    assert [results[n].returncode for n in range(SLOW_AT, RUNS + 1)] == [1] * 6
    beta, gamma, alpha = stored(url, "beta"), stored(url, "gamma"), stored(url, "alpha")
    assert [beta[n]["verdict"] for n in range(SLOW_AT, RUNS + 1)] == ["slower", "accepted"] + ["same"] * 4
    assert [gamma[n]["verdict"] for n in range(SLOW_AT, RUNS + 1)] == ["slower"] * 6
    assert "beta's new tiles trade 3% for the edge case" in beta[8]["accepted_reason"]
    # from run 9 on, beta is judged against the runs from its accepted run 8 on, never those before
    assert [[ref["name"] for ref in beta[n]["references"]] for n in (9, 10, 12)] == [
        ["history run 8"], ["history run 8", "history run 9"], [f"history run {r}" for r in range(8, 12)]]
    # gamma is judged against the clean runs only; alpha's references include the runs that failed
    assert all(ref["name"] in {f"history run {r}" for r in range(2, 7)} for ref in gamma[12]["references"])
    assert [ref["name"] for ref in alpha[12]["references"]] == [f"history run {r}" for r in range(7, 12)]
    with open_store(url) as store:
        outcomes = {run.id: run.outcome for run in store.runs()}
    assert [outcomes[n] for n in range(1, RUNS + 1)] == ["passed"] * CLEAN + ["failed"] * 6


def test_the_failing_nightly_names_its_window_its_commits_and_the_bisect_line(life):
    folder, url, results, commits = life
    text = output(results[SLOW_AT])
    section = text[text.index("kernelwatch: slower cases"):]
    assert f"{CASE.format('gamma')}: slower x1.0" in section
    assert f"commits {commits[CLEAN][:12]}..{commits[SLOW_AT][:12]}: 1 commit (first parent, oldest first)" in section
    assert f"{commits[SLOW_AT][:12]} change {SLOW_AT}" in section
    assert (f"bisect: python -m kernelwatch.history bisect '{CASE.format('gamma')}' "
            f"{commits[CLEAN][:12]}..{commits[SLOW_AT][:12]} --profile nightly") in section
    assert f"acknowledge '{CASE.format('gamma')}' {SLOW_AT} --reason TEXT" in section
    assert "history run 6 (newest: " in section  # the reference runs, by id, date and commit
    report = (folder / f"report-{SLOW_AT}.md").read_text()
    assert "## Slower cases: their reference runs and the commits since" in report
    assert f"### `{CASE.format('gamma')}`: slower" in report
    # run 8: the trailer's window holds the slow commit and the trailer; beta accepted, gamma still open
    eight = output(results[SLOW_AT + 1])
    assert f"{CASE.format('beta')}: accepted" in eight and "accepted: beta's new tiles" in eight
    assert f"commits {commits[CLEAN][:12]}..{commits[SLOW_AT + 1][:12]}: 2 commits" in eight
    assert "1 Accept-Slowdown trailer in it, none naming this case" in eight  # gamma's failure says why


def test_changes_names_the_step_at_run_7_open_for_gamma_and_accepted_for_beta(life, capsys):
    folder, url, results, commits = life
    assert main(["changes", "--history", url, "--newest", "3"]) == 1
    out = capsys.readouterr().out
    blocks = {block.splitlines()[0].rsplit(": ", 1)[-1]: block for block in re.split(r"\n(?=\S)", out)}
    gamma, beta = blocks[CASE.format("gamma")], blocks[CASE.format("beta")]
    for block in (gamma, beta):
        assert block.startswith("slower step x1.0") and f"first run after: run {SLOW_AT}," in block
        assert f"commits: {commits[CLEAN]}..{commits[SLOW_AT]}" in block
    assert "runs after: 7-12 failed" in gamma and "OPEN: still failing in the newest run (6 runs)" in gamma
    assert "runs after: 7 failed, 8 accepted, 9-12 passed" in beta and "OPEN" not in beta
    assert "acknowledged: beta's new tiles trade 3% for the edge case" in beta and "(at run 8)" in beta
    assert CASE.format("alpha") not in blocks


def test_the_dashboard_draws_the_failed_and_accepted_runs(life, tmp_path, capsys):
    folder, url, results, commits = life
    site = tmp_path / "site"
    assert main(["site", str(site), "--history", url]) == 0
    states = {}
    for case in ("alpha", "beta", "gamma"):
        page = (site / "cases" / case_page_name(CASE.format(case))).read_text()
        states[case] = dict(re.findall(r'class="point [^"]*" data-run="(\d+)" data-state="([^"]+)"', page))
    assert [states["gamma"][str(n)] for n in range(1, RUNS + 1)] == ["passed"] * CLEAN + ["failed"] * 6
    assert [states["beta"][str(n)] for n in range(SLOW_AT, RUNS + 1)] == ["failed", "accepted"] + ["passed"] * 4
    assert set(states["alpha"].values()) == {"passed"}
    index = (site / "index.html").read_text()
    kernels = re.findall(r'<tr class="case-row"[^>]*data-kernel="([^"]+)" data-state="([^"]+)"', index)
    assert kernels[0] == (CASE.format("gamma"), "failing")  # failing cases first
