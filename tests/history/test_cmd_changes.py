"""`changes`, `acknowledge` and `site` on a store with a 3% step in one case, on each backend; `bisect` without a GPU."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time

import numpy as np
import pytest

from kernelwatch.history import cmd_changes
from kernelwatch.history.analysis import Analysis, Detectable
from kernelwatch.history.cli import main
from kernelwatch.history.series import Series
from kernelwatch.history.site import case_page_name, write_site
from kernelwatch.history.steps import CREEP, FASTER, MIN_RUNS_AT_LEVEL, Step
from kernelwatch.storage.history import open_store
from maintainers.support.h200_histories import gpu_timed_profiles, relative_medians
from maintainers.support.synthetic_history import GPU_A, GPU_B, STEP, STEP_AT, STEPPED_CASE, case_name, make_document
from maintainers.support.synthetic_history import STEPPED_HISTORY_CASES as CASES
from maintainers.support.synthetic_history import STEPPED_HISTORY_RUNS as RUNS
from maintainers.support.synthetic_history import record_stepped_history as record_history
from tests.history.made_series import KEY, a_point, a_series, a_step
from tests.history.rich_history import rich_store_url
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def changes(url: str, *args: str) -> int:
    return main(["changes", "--history", url, *args])


def test_changes_names_the_stepped_case_its_runs_and_commit_range_and_fails(history_url, capsys):
    ids = record_history(history_url)
    assert changes(history_url) == 1
    out = capsys.readouterr().out
    assert case_name(STEPPED_CASE) in out
    assert all(case_name(other) not in out for other in range(CASES) if other != STEPPED_CASE)
    ratio, low, high = map(float, re.search(r"slower step x([\d.]+) \(95% ([\d.]+)-([\d.]+), p ", out).groups())
    assert low <= ratio <= high and abs(ratio - STEP) < 0.005
    assert f"last run before: run {ids[STEP_AT - 1]}, 2026-12-01 20:00 UTC, commit {STEP_AT - 1:040x}" in out
    assert f"first run after: run {ids[STEP_AT]}, 2026-12-01 21:00 UTC, commit {STEP_AT:040x}" in out
    # the range holds the commit of the first slow run, and no other
    assert f"commits: {STEP_AT - 1:040x}..{STEP_AT:040x}" in out
    assert "detectable change 1.5% (1.5% floor, one GPU)" in out
    assert f"OPEN: in the newest 3 runs; if intended: python -m kernelwatch.history acknowledge " \
           f"'{case_name(STEPPED_CASE)}' {ids[STEP_AT]} --reason TEXT" in out
    assert out.splitlines()[-1] == (f"1 changes in {CASES} series ({CASES} cases); "
                                    f"1 open slower steps in the newest 3 runs")


@pytest.mark.parametrize("args, env", [([], {"KERNELWATCH_THRESHOLD": "5%"}), (["--threshold", "0.05"], {}),
                                       (["--threshold", "0.05"], {"KERNELWATCH_THRESHOLD": "1%"})],
                         ids=["variable", "option", "option-over-variable"])
def test_the_threshold_a_live_run_takes_is_the_one_changes_takes(history_url, capsys, monkeypatch, args, env):
    # the 3% step is open at the 1.5% floor, and below a 5% one: what the nightly under KERNELWATCH_THRESHOLD=5%
    # judges against the same history
    record_history(history_url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert changes(history_url, *args) == 0
    out = capsys.readouterr().out
    assert "OPEN" not in out and out.splitlines()[-1].endswith("; 0 open slower steps in the newest 3 runs")


@pytest.mark.parametrize("command", ["changes", "site"])
def test_a_threshold_that_is_no_fraction_is_exit_2_naming_the_variable(history_url, capsys, monkeypatch, tmp_path,
                                                                        command):
    record_history(history_url)
    monkeypatch.setenv("KERNELWATCH_THRESHOLD", "abc")
    assert main([command, *([str(tmp_path / "site")] if command == "site" else []), "--history", history_url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: $KERNELWATCH_THRESHOLD='abc' is not a number") and len(err.splitlines()) == 1


def test_an_acknowledged_step_passes_and_says_why(history_url, capsys):
    ids = record_history(history_url)
    assert main(["acknowledge", case_name(STEPPED_CASE), str(ids[STEP_AT]), "--reason", "larger tiles: intended",
                 "--history", history_url]) == 0
    assert capsys.readouterr().out.strip() == (f"acknowledged the change of {case_name(STEPPED_CASE)} at run "
                                               f"{ids[STEP_AT]}: larger tiles: intended; from that run on, its "
                                               f"reference is the new level")
    assert changes(history_url) == 0
    out = capsys.readouterr().out
    assert "acknowledged: larger tiles: intended" in out and "OPEN" not in out
    assert out.splitlines()[-1].endswith("; 0 open slower steps in the newest 3 runs")


def test_with_the_h200s_run_to_run_noise_changes_names_only_the_stepped_case(history_url, capsys):
    # case k has the noise of the k-th GPU-timed H200 case (maintainers/support/h200_histories.py); case 4 is 3%
    # slower in the newest 3 of 30 runs. Over seeds 0-19 the step was found in 19 (the miss: a 0.5% noise
    # case whose own spread set its limit at 2.6%), and 1 of 220 clean series showed a creep (not a step)
    runs, cases, stepped, step_at = 30, 12, 4, 27
    rng = np.random.default_rng(0)
    relative = [relative_medians(noise, runs, rng, **({"step_at": step_at, "step": STEP - 1} if k == stepped else {}))
                for k, noise in enumerate(gpu_timed_profiles()[:cases])]
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i, cases=cases, case_slower={k: float(relative[k][i]) for k in
                                                                          range(cases)}), outcome="passed",
                                profile="quick") for i in range(runs)]
    assert changes(history_url) == 1
    out = capsys.readouterr().out
    assert re.findall(r"^(?:slower|faster) step .*: (\S+)$", out, re.MULTILINE) == [case_name(stepped)]
    assert f"first run after: run {ids[step_at]}," in out and f"commits: {step_at - 1:040x}..{step_at:040x}" in out


def test_a_step_before_the_newest_runs_is_printed_and_passes(history_url, capsys):
    record_history(history_url)
    assert changes(history_url, "--newest", "2") == 0  # the step's first run after is the 3rd newest
    out = capsys.readouterr().out
    assert case_name(STEPPED_CASE) in out and "OPEN" not in out


def test_gpu_since_and_by_narrow_what_is_read(history_url, capsys):
    record_history(history_url)
    assert changes(history_url, "--gpu", "NVIDIA H200") == 1
    assert changes(history_url, "--gpu", GPU_A, "--by", "gpu_model") == 1
    capsys.readouterr()
    assert changes(history_url, "--gpu", GPU_B) == 0
    assert capsys.readouterr().out.startswith(f"no run in {history_url.split('://')[0]}")
    assert changes(history_url, "--since", "2026-12-01T21:30") == 0  # the step's first slow run is at 21:00
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"0 changes in {CASES} series")
    assert changes(history_url, "--since", "2026-12-01") == 1


def test_a_faster_step_passes(history_url, capsys):
    with open_store(history_url) as store:
        for index in range(RUNS):
            store.record_run(make_document(index, cases=CASES, case_slower={STEPPED_CASE: 0.96} if index >= STEP_AT
                                           else None), outcome="passed", profile="quick")
    assert changes(history_url) == 0
    assert "faster step x0.96" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "words"), [
    (["acknowledge", case_name(0), "99", "--reason", "x"], "error: there is no run 99 in the history store"),
    (["acknowledge", "suites/none.py::t[x]", "1", "--reason", "x"], "error: run 1 holds no case"),
    (["acknowledge", case_name(0).replace("case000", "case00"), "1", "--reason", "x"], "error: run 1 holds no case"),
    (["acknowledge", case_name(0), "1", "--reason", "  "], "error: an acknowledgement needs a reason"),
])
def test_acknowledging_what_is_not_there_is_one_sentence_and_exit_1(history_url, capsys, argv, words):
    record_history(history_url, runs=2)
    assert main([*argv, "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(words) and len(err.strip().splitlines()) == 1
    if "no run 99" in words:
        assert err.strip().endswith("; it holds 2 runs, ids 1-2")  # what does exist
    elif "holds no case" in words and "case00]" in argv[1]:
        assert f"it holds {CASES} cases, the nearest: suites/test_perf_synthetic.py::test_kernel_time[case00" in err
    elif "holds no case" in words:
        assert f"it holds {CASES} cases, e.g. {case_name(0)}" in err


def test_site_writes_a_page_per_case_and_marks_the_step(history_url, tmp_path, capsys):
    ids = record_history(history_url)
    out = tmp_path / "site"
    assert main(["site", str(out), "--history", history_url]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    assert len(list((out / "cases").glob("*.html"))) == CASES
    page = (out / "cases" / case_page_name(case_name(STEPPED_CASE))).read_text()
    assert re.findall(r'<line class="step slower" data-before-run="(\d+)" data-after-run="(\d+)"', page) == [
        (str(ids[STEP_AT - 1]), str(ids[STEP_AT]))]
    rows = re.findall(r'<tr class="case-row"[^>]*data-kernel="([^"]+)"', (out / "index.html").read_text())
    assert rows[0] == case_name(STEPPED_CASE) and len(rows) == CASES
    main(["acknowledge", case_name(STEPPED_CASE), str(ids[STEP_AT]), "--reason", "intended", "--history", history_url])
    assert main(["site", str(out), "--history", history_url]) == 0
    assert "acknowledged: intended" in (out / "cases" / case_page_name(case_name(STEPPED_CASE))).read_text()


@pytest.mark.slow
def test_changes_and_site_over_60_runs_of_90_cases(tmp_path, capsys):
    # 200 x 90 is maintainers/checks/time_changes.py --store (its figures:
    # notes/2026-12-02.md#2026-12-02-tenth-session-the-life-of-a-regression-issue-28, the report); here 60 x 90 on SQLite
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    record_history(url, runs=60, cases=90, step_at=50, stepped=range(0, 90, 10))
    started = time.perf_counter()
    assert changes(url) == 0  # the steps lie 10 runs back
    took = time.perf_counter() - started
    out = capsys.readouterr().out
    assert took < 10, f"changes took {took:.1f} s"
    steps = {int(m) for m in re.findall(r"^slower step .*test_kernel_time\[case(\d+)\]$", out, re.MULTILINE)}
    assert steps <= set(range(0, 90, 10)) and len(steps) >= 8  # case 0 (10 µs) is under its 3% absolute floor
    started = time.perf_counter()
    assert main(["site", str(tmp_path / "site"), "--history", url]) == 0
    assert time.perf_counter() - started < 30
    assert len(list((tmp_path / "site" / "cases").glob("*.html"))) == 90


CPU_SUITE_CONFTEST = "# kernelwatch, installed, loads itself: its options and markers\n"
CPU_SUITE_TEST = """\
import pytest


@pytest.mark.perf
def test_kernel_time():
    pytest.skip("no CUDA GPU")  # as the suite's timed cases do on a CPU machine: no A/B report
"""


@pytest.mark.slow  # a bisect run of pytest per probe: `tox -e unit` leaves it out, CI's slow pass runs it
def test_bisect_without_a_gpu_cannot_judge_and_names_no_commit(tmp_path, capsys):
    repo = tmp_path / "repo"
    (repo / "suites").mkdir(parents=True)
    (repo / "conftest.py").write_text(CPU_SUITE_CONFTEST)
    # a project with a kernel library, which the A/B needs; its testpaths are what -k selects among
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = suites\nkernelwatch_kernels = mylib\n")
    (repo / "mylib").mkdir()
    (repo / "mylib" / "__init__.py").write_text("")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for i in range(3):
        (repo / "suites" / "test_perf.py").write_text(CPU_SUITE_TEST + f"# change {i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"change {i}"], check=True)
    assert main(["bisect", "test_kernel_time", "--good", "HEAD~2", "--bad", "HEAD", "--repo", str(repo)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("error: bisect stopped, no result: ")
    assert "cannot judge it" in captured.err.splitlines()[0]
    assert "--kernelwatch-compare-ref asks for what only a GPU can give" in captured.err.splitlines()[0]
    assert "first bad commit" not in captured.out + captured.err
    worktrees = subprocess.run([*git, "worktree", "list"], check=True, capture_output=True, text=True).stdout
    assert len(worktrees.splitlines()) == 1  # the probe's worktree is gone


def test_a_history_too_short_for_a_step_says_how_many_runs_it_has_and_needs(history_url, capsys):
    record_history(history_url, runs=2)
    assert changes(history_url) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == (f"too short to judge a step: {CASES} of {CASES} series have fewer than 6 runs (2 runs each); "
                         f"a step needs 3 runs on each side")
    assert lines[-1].startswith(f"0 changes in {CASES} series")


def test_a_case_failing_in_its_newest_run_is_open_before_it_is_a_step_with_its_window_and_bisect_line(history_url,
                                                                                                       capsys):
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i, cases=CASES), outcome="passed", profile="quick") for i in range(6)]
        doc = make_document(6, cases=CASES, case_slower={STEPPED_CASE: STEP})
        extra = doc["benchmarks"][STEPPED_CASE]["extra_info"]
        extra.update(verdict="slower", window={"base": "5" * 40, "head": "6" * 40,
                                               "commits": [["6" * 40, "slower tiles"]], "acceptances": []})
        ids.append(store.record_run(doc, outcome="failed", profile="quick", other_failures=0))
    assert changes(history_url) == 1
    out = capsys.readouterr().out
    case = case_name(STEPPED_CASE)
    assert f"slower (the nightly's verdict) since run {ids[6]}, 1 failed run: {case}" in out
    assert "not yet a step: 1 run at the new level, 3 needed" in out
    assert f"  commits: {'5' * 40}..{'6' * 40} (1 commit)" in out and f"    {'6' * 12} slower tiles" in out
    assert f"OPEN: failing in the newest run; if intended: python -m kernelwatch.history acknowledge '{case}' {ids[6]}" in out
    assert f"find the commit: python -m kernelwatch.history bisect '{case}' {'5' * 12}..{'6' * 12} --profile quick" in out
    assert out.splitlines()[-1].endswith("; 1 cases failing, not yet a step")
    # acknowledged at that run, it is a new level: nothing is open
    assert main(["acknowledge", case, str(ids[6]), "--reason", "meant", "--history", history_url]) == 0
    assert changes(history_url) == 0


def test_cases_failing_for_runs_are_counted_in_plural_newest_first_and_list_at_most_12_commits(history_url, capsys):
    stepped, other = STEPPED_CASE, STEPPED_CASE - 1
    long_window = [[f"{n + 1:x}" * 40, f"change {n}"] for n in range(13)]
    with open_store(history_url) as store:
        ids = [store.record_run(make_document(i, cases=CASES), outcome="passed", profile="quick") for i in range(6)]
        for i in (6, 7):  # the nightly failed `stepped` at runs 6 and 7, `other` at run 7 only; with medians
            failing = [stepped] if i == 6 else [stepped, other]  # unchanged, so that no step holds them
            doc = make_document(i, cases=CASES)
            for k in failing:
                commits = long_window if k == stepped else long_window[:2]
                doc["benchmarks"][k]["extra_info"].update(verdict="slower", window={
                    "base": "a" * 40, "head": "b" * 40, "commits": commits, "acceptances": []})
            ids.append(store.record_run(doc, outcome="failed", profile="quick", other_failures=0))
    assert changes(history_url) == 1
    out = capsys.readouterr().out
    # newest first: `other` began failing at run 7, `stepped` at run 6
    assert re.findall(r"^slower \(the nightly's verdict\) since run (\S+), (.*): (\S+)$", out, re.MULTILINE) == [
        (str(ids[7]), "1 failed run", case_name(other)), (str(ids[6]), "2 failed runs", case_name(stepped))]
    assert re.findall(r"not yet a step: (.*) at the new level", out) == ["1 run", "2 runs"]
    assert f"  last run before: run {ids[5]}, 2026-12-01 05:00 UTC, commit {5:040x}" in out
    assert f"  last run before: run {ids[6]}, 2026-12-01 06:00 UTC, commit {6:040x}" in out
    assert re.findall(r"  commits: a+\.\.b+ \((.*)\)$", out, re.MULTILINE) == ["2 commits", "13 commits"]
    # a long window lists its first 12 commits only
    assert re.findall(r"^    (\w{12}) change (\d+)$", out, re.MULTILINE) == [
        *[(f"{n + 1:x}" * 12, str(n)) for n in range(2)], *[(f"{n + 1:x}" * 12, str(n)) for n in range(12)]]
    assert out.splitlines()[-1].endswith("; 2 cases failing, not yet a step")


def test_since_keeps_a_failing_case_whose_first_failed_run_is_at_or_after_that_moment(history_url, capsys):
    with open_store(history_url) as store:
        for i in range(6):
            store.record_run(make_document(i, cases=CASES), outcome="passed", profile="quick")
        doc = make_document(6, cases=CASES, case_slower={STEPPED_CASE: STEP})
        doc["benchmarks"][STEPPED_CASE]["extra_info"]["verdict"] = "slower"
        store.record_run(doc, outcome="failed", profile="quick", other_failures=0)
    failing = "slower (the nightly's verdict) since run"
    for since in ("2026-12-01T05:30", "2026-12-01T06:00"):  # run 6 started at 06:00 (synthetic.START + 6 hours)
        changes(history_url, "--since", since)
        assert failing in capsys.readouterr().out
    changes(history_url, "--since", "2026-12-01T06:01")
    assert failing not in capsys.readouterr().out


def fake_analysis(monkeypatch, one: Series, steps: list[Step], detectable: float = 0.015) -> None:
    analysis = Analysis(series=[one], detectable={one.key: Detectable(detectable, "same GPU")}, steps={one.key: steps},
                        acknowledged={})
    monkeypatch.setattr(cmd_changes, "analyse", lambda store, by, gpu, floors: analysis)


def changes_of(*argv: str) -> int:
    return cmd_changes.run(main_parser_args("changes", *argv), store=type("Store", (), {"safe_url": "memory", "accuracy_history": lambda self, *a, **k: {}})())


def main_parser_args(*argv: str):
    from kernelwatch.history.cli import parser

    return parser().parse_args(list(argv))


def test_a_slower_creep_in_the_newest_runs_is_shown_but_fails_nothing(monkeypatch, capsys):
    one = a_series(1e-3, 1.1e-3, 1.2e-3, 1.3e-3)
    fake_analysis(monkeypatch, one, [a_step(one, 1, 3, kind=CREEP)])
    assert changes_of() == 0  # only a step is an open slower step; a creep is shown for a person to judge
    assert "0 open slower steps" in capsys.readouterr().out
    fake_analysis(monkeypatch, one, [a_step(one, 2, 3)])
    assert changes_of() == 1


def test_since_includes_a_step_whose_first_run_after_is_at_that_moment(monkeypatch, capsys):
    one = a_series(1e-3, 1e-3, 2e-3)
    fake_analysis(monkeypatch, one, [a_step(one, 1, 2)])
    at = one.points[2].started_at.strftime("%Y-%m-%dT%H:%M")
    assert changes_of("--since", at) == 1
    assert capsys.readouterr().out.count("slower step x1.050") == 1


def test_one_newest_run_is_a_valid_window(capsys):
    assert cmd_changes.positive_int("1") == 1
    with pytest.raises(SystemExit):
        main(["changes", "--newest", "0"])


def test_a_step_names_its_detectable_change_in_percent(monkeypatch, capsys):
    one = a_series(1e-3, 1e-3, 2e-3)
    fake_analysis(monkeypatch, one, [a_step(one, 1, 2)], detectable=0.5)
    changes_of()
    assert "detectable change 50.0% (same GPU)" in capsys.readouterr().out


def test_a_faster_step_is_not_an_open_slower_step_anywhere(tmp_path, monkeypatch, capsys):
    one = a_series(2e-3, 2e-3, 1e-3)
    faster = a_step(one, 1, 2, direction=FASTER)
    index = write_site(tmp_path, [one], {one.key: [faster]}).read_text()
    assert re.findall(r'<td class="([^"]*)">([^<]*)</td></tr>', index) == [("", "")]
    fake_analysis(monkeypatch, one, [faster])
    assert changes_of() == 0
    assert "OPEN" not in capsys.readouterr().out


def test_a_creep_is_described_from_and_to_and_never_as_open(monkeypatch, capsys):
    one = a_series(1e-3, 1.1e-3, 1.2e-3, 1.3e-3)
    fake_analysis(monkeypatch, one, [a_step(one, 1, 3, kind=CREEP)])
    changes_of()
    out = capsys.readouterr().out
    assert "  from: run r1" in out and "  to:   run r3" in out
    assert "last run before" not in out and "OPEN" not in out


def test_too_short_names_the_range_of_run_counts_of_the_short_series():
    series = [a_series(*[1e-3] * 2), a_series(*[1e-3] * 4), a_series(*[1e-3] * 3)]
    text = cmd_changes.too_short_text(Analysis(series, {}, {}, {}))
    assert "3 of 3 series have fewer than" in text and "(2-4 runs)" in text
    assert "(3 runs each)" in cmd_changes.too_short_text(Analysis([a_series(*[1e-3] * 3)], {}, {}, {}))
    assert "(1 run each)" in cmd_changes.too_short_text(Analysis([a_series(1e-3)], {}, {}, {}))


def test_a_series_is_too_short_below_min_runs_on_each_side_of_a_step_and_long_enough_at_that_and_above():
    five, six, seven = (a_series(*[1e-3] * (2 * MIN_RUNS_AT_LEVEL + more)) for more in (-1, 0, 1))
    assert Analysis([five, six, seven], {}, {}, {}).too_short() == [five]
    assert cmd_changes.too_short_text(Analysis([six], {}, {}, {})) is None


def test_each_step_lists_the_states_of_the_runs_at_its_level_up_to_the_next_step(monkeypatch, capsys):
    # runs 3-6 are the level of the step at run 3 (the creep at run 5 does not end it), runs 7-8 that of the next
    states = {3: {"outcome": "failed"}, 4: {"outcome": "failed"}, 5: {"accepted_reason": "meant"}}
    one = Series(KEY, tuple(a_point(i, 1e-3, **states.get(i, {})) for i in range(9)))
    fake_analysis(monkeypatch, one, [a_step(one, 2, 3), a_step(one, 4, 5, kind=CREEP), a_step(one, 6, 7)])
    changes_of()
    assert re.findall(r"^  runs after: (.*)$", capsys.readouterr().out, re.MULTILINE) == [
        "r7-r8 passed", "r3-r4 failed, r5 accepted, r6 passed"]  # newest first


def test_whether_a_step_is_in_the_newest_runs_must_be_named_not_given_in_place():
    # describe's two flags are keyword-only: a bare True and a number could be read the other way round
    with pytest.raises(TypeError, match="positional"):
        cmd_changes.describe(None, None, True, 10)


# -- a rich history, whole outputs against reviewed snapshots (tests/history/__snapshots__/test_cmd_changes.ambr) --
@pytest.fixture(scope="module")
def rich_url(tmp_path_factory):
    return rich_store_url(tmp_path_factory)  # tests/history/rich_history.py, recorded once: the tests only read it


def changes_text(url: str, *args: str, capsys) -> str:
    """`changes`'s exit status, its whole output and any error, the store's temporary path named <tmp>."""
    status = changes(url, *args)
    captured = capsys.readouterr()
    folder = url.removeprefix("sqlite:///").rsplit("/", 1)[0]
    text = f"exit {status}\n{captured.out}" + (f"stderr:\n{captured.err}" if captured.err else "")
    return text.replace(folder, "<tmp>")


@pytest.mark.parametrize("args", [
    (),  # every change: open steps, failing cases, acknowledged and accepted steps, a creep, accuracy steps
    ("--newest", "10"),  # older steps in the window: the faster one is no open step, the quietly slower one is
    ("--newest", "1"),  # the step of `open` lies before the newest run, yet still fails: open
    ("--since", "2026-12-09"),  # the changes whose first run after is on Dec 9 or later
    ("--gpu", "GPU-bbbbbbbb-0000-0000-0000-000000000002"),  # too short for any step: says so, and passes
    ("--gpu", "NVIDIA H200"),  # a model: both GPUs' runs, the accuracy checks of that model too
    ("--by", "gpu_model"),  # one series per model: `open` and `throttled` of the two GPUs mixed, at the 5% floor
    ("--threshold", "0.05"),  # a live run's threshold: each GPU-timed series' floor
], ids=["default", "newest-10", "newest-1", "since", "short-gpu", "gpu-model", "by-model", "threshold"])
def test_the_whole_output_of_changes_on_a_rich_history_is_the_reviewed_snapshot(rich_url, capsys, snapshot, args):
    assert changes_text(rich_url, *args, capsys=capsys) == snapshot


def test_changes_on_an_empty_store_and_a_gpu_without_runs_says_so_and_passes(tmp_path, capsys, snapshot):
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    with open_store(url):
        pass
    assert [changes_text(url, capsys=capsys), changes_text(url, "--gpu", "GPU-cccc", capsys=capsys)] == snapshot


def test_changes_on_a_store_of_one_run_says_it_is_too_short(tmp_path, capsys, snapshot):
    url = f"sqlite:///{tmp_path / 'history.sqlite'}"
    record_history(url, runs=1, cases=2)
    assert changes_text(url, capsys=capsys) == snapshot


def test_a_slower_step_whose_kind_and_direction_were_read_back_as_text_is_described_and_open(monkeypatch, capsys,
                                                                                               snapshot):
    # equal to the constants, not the same objects: as a Step made from JSON or a database's text would hold them
    one = a_series(1e-3, 1e-3, 1e-3, 2e-3)
    step = dataclasses.replace(a_step(one, 2, 3), kind="".join(["st", "ep"]), direction="".join(["slow", "er"]))
    fake_analysis(monkeypatch, one, [step])
    assert changes_of() == 1
    assert capsys.readouterr().out == snapshot


def test_a_case_failing_in_as_many_runs_as_a_step_needs_says_why_it_is_no_step(history_url, capsys):
    """Failed runs at a time that did not move (a failure of its energy, say) as many as a step needs: once read
    'not yet a step: 3 runs at the new level, 3 needed'."""
    with open_store(history_url) as store:
        for i in range(6 + MIN_RUNS_AT_LEVEL):
            doc = make_document(i, cases=CASES)
            if i >= 6:
                doc["benchmarks"][STEPPED_CASE]["extra_info"]["verdict"] = "slower"
            store.record_run(doc, outcome="failed" if i >= 6 else "passed", profile="quick",
                             other_failures=0 if i >= 6 else None)
    assert changes(history_url) == 1
    out = capsys.readouterr().out
    assert (f"; no step in its {MIN_RUNS_AT_LEVEL} runs since: its time moved less than the detectable change, or it "
            "failed on its energy or a phase") in out
    assert "needed" not in out
