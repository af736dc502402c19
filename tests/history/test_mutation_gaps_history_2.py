"""What mutation testing of harness/history/ (site, bisect, the commands) found no test pinning.

The dashboard's chart is checked against its contract, not against its own arithmetic: time runs
left to right from MARGIN to WIDTH - MARGIN, the value range (8% padded) bottom to top from
HEIGHT - MARGIN to MARGIN, and every mark lies inside the drawing.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest
from backends import history_url_fixture  # noqa: F401 (pytest fixtures)
from synthetic import make_document, write_document

from harness.history import cmd_changes
from harness.history.analysis import Analysis, Detectable
from harness.history.cli import main
from harness.history.series import Point, Series, SeriesKey
from harness.history.site import case_page_name, sparkline, write_site
from harness.history.steps import CREEP, FASTER, SLOWER, STEP, Step
from harness.storage.history import open_store

START = datetime(2026, 11, 1, tzinfo=UTC)
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-warptile]"
KEY = SeriesKey(gpu="GPU-aaaa", case=CASE, timer="cupti", profile="quick")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def point(day: int, median: float, commit: str = COMMIT) -> Point:
    return Point(run_id=f"run-{day}", started_at=START + timedelta(days=day), commit=commit, branch="main",
                 median_s=median, low_s=median * 0.9, high_s=median * 1.1, sample_count=50, gpu_uuid="GPU-aaaa")


def series(*medians: float, key: SeriesKey = KEY) -> Series:
    return Series(key, tuple(point(day, m, commit=f"{day:08d}{COMMIT[8:]}") for day, m in enumerate(medians)))


def step(one: Series, before: int, after: int, kind: str = STEP, direction: str = SLOWER) -> Step:
    return Step(key=one.key, kind=kind, direction=direction, index=after, before=one.points[before],
                after=one.points[after], ratio=1.05, ratio_low=1.03, ratio_high=1.07, p_value=1e-4,
                runs_before=after, runs_after=len(one) - after)


def plot(tmp_path, one: Series, steps=()) -> ET.Element:
    write_site(tmp_path, [one], {one.key: list(steps)})
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    return ET.fromstring(re.search(r'<svg class="case-plot".*?</svg>', page, re.S).group(0))


def test_the_sparkline_spans_its_box_from_the_first_run_to_the_last():
    assert 'points="0.0,26.0 80.0,14.0 160.0,2.0"' in sparkline(series(1e-3, 2e-3, 3e-3))
    assert 'points="0.0,26.0 160.0,26.0"' in sparkline(series(2e-3, 2e-3))  # flat: on the floor line


@pytest.mark.parametrize("medians, steps_at, ratio", [
    ((4.0, 4.0, 1.0, 1.0, 2.0), None, "0.800"),  # against the median of every earlier run
    ((4.0, 4.0, 1.0, 1.0, 2.0), 2, "2.000"),  # against the runs since the latest step only
])
def test_the_latest_median_is_compared_with_the_earlier_runs_since_the_latest_step(tmp_path, medians, steps_at,
                                                                                     ratio):
    one = series(*(m * 1e-3 for m in medians))
    steps = [] if steps_at is None else [step(one, steps_at - 1, steps_at, direction=FASTER)]
    index = write_site(tmp_path, [one], {one.key: steps}).read_text()
    assert f"<td>{ratio}</td>" in index


def test_a_case_page_is_named_after_the_test_readably_and_uniquely():
    name = case_page_name("suites/test_perf_matmul.py::test_time[a/b c-d_e]")
    assert re.fullmatch(r"test_time_a_b_c-d_e_-[0-9a-f]{10}\.html", name)
    assert len(case_page_name("suites/x.py::" + "t" * 100).rsplit("-", 1)[0]) == 60


def test_two_gpus_of_one_case_are_listed_in_gpu_order(tmp_path):
    later = series(1e-3, 1e-3, key=dataclasses.replace(KEY, gpu="GPU-bbbb"))
    earlier = series(1e-3, 1e-3, key=dataclasses.replace(KEY, gpu="GPU-aaaa"))
    index = write_site(tmp_path, [later, earlier], {}).read_text()
    assert re.findall(r'data-gpu="(GPU-[ab]+)" data-uuids', index) == ["GPU-aaaa", "GPU-bbbb"]


# runs, export, changes


def import_one_run(history_url: str, tmp_path) -> dict:
    """Run 1 of tests/history/synthetic.py written to tmp_path/runs and imported by the command line."""
    doc = make_document(1)
    write_document(tmp_path / "runs", 1, doc)
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0
    return doc


def runs_table_row(history_url: str, capsys) -> str:
    """The first run's row of `runs` (what was printed before is dropped)."""
    capsys.readouterr()
    assert main(["runs", "--history", history_url]) == 0
    return capsys.readouterr().out.splitlines()[1]


def one_commit_repo(path) -> str:
    """`path` made a git repository of one empty commit; returns the commit."""
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_an_empty_store_says_so_and_says_matches_only_under_a_filter(history_url, capsys):
    open_store(history_url).close()
    assert main(["runs", "--history", history_url]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("no stored run in ") and not out.endswith(" matches")
    assert main(["runs", "--gpu", "GPU-x", "--history", history_url]) == 0
    assert capsys.readouterr().out.strip().endswith(" matches")


def test_export_writes_json_indented_by_two(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    capsys.readouterr()
    assert main(["export", "1", "--history", history_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "{" and lines[1].startswith('  "') and not lines[1].startswith('   ')


def test_export_to_a_file_it_cannot_write_is_one_sentence_and_exit_1(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["export", "1", "-o", str(blocker / "run.json"), "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write run 1 to ") and "Traceback" not in err


@pytest.mark.parametrize("text", ["three", "2.5", ""])
def test_a_run_count_that_is_not_a_whole_number_is_a_usage_error(text, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["changes", "--newest", text])
    assert exited.value.code == 2
    assert "not a whole number of runs" in capsys.readouterr().err


def fake_analysis(monkeypatch, one: Series, steps: list[Step], detectable: float = 0.015) -> None:
    analysis = Analysis(series=[one], detectable={one.key: Detectable(detectable, "same GPU")}, steps={one.key: steps},
                        acknowledged={})
    monkeypatch.setattr(cmd_changes, "analyse", lambda store, by, gpu: analysis)


def changes(*argv: str) -> int:
    return cmd_changes.run(main_parser_args("changes", *argv), store=type("Store", (), {"safe_url": "memory"})())


def main_parser_args(*argv: str):
    from harness.history.cli import parser

    return parser().parse_args(list(argv))


def test_a_slower_creep_in_the_newest_runs_is_shown_but_fails_nothing(monkeypatch, capsys):
    one = series(1e-3, 1.1e-3, 1.2e-3, 1.3e-3)
    fake_analysis(monkeypatch, one, [step(one, 1, 3, kind=CREEP)])
    assert changes() == 0  # only a step is an open slower step; a creep is shown for a person to judge
    assert "0 open slower steps" in capsys.readouterr().out
    fake_analysis(monkeypatch, one, [step(one, 2, 3)])
    assert changes() == 1


def test_since_includes_a_step_whose_first_run_after_is_at_that_moment(monkeypatch, capsys):
    one = series(1e-3, 1e-3, 2e-3)
    fake_analysis(monkeypatch, one, [step(one, 1, 2)])
    at = one.points[2].started_at.strftime("%Y-%m-%dT%H:%M")
    assert changes("--since", at) == 1
    assert capsys.readouterr().out.count("slower step x1.050") == 1


# the second sample (NOTES.md, eighth session)


def test_a_case_of_one_run_has_a_sparkline_of_one_point():
    assert 'points="0.0,26.0"' in sparkline(series(1e-3))


def test_the_latest_median_is_compared_with_at_most_the_thirty_runs_before_it(tmp_path):
    one = series(*([9.0] * 40 + [1.0] * 30 + [2.0]))  # the forty slow runs are older than the thirty
    assert "<td>2.000</td>" in write_site(tmp_path, [one], {one.key: []}).read_text()


def test_one_case_on_one_gpu_under_two_profiles_gets_two_rows(tmp_path):
    quick = series(1e-3, 1e-3)
    full = series(1e-3, 1e-3, key=dataclasses.replace(KEY, profile="full"))
    index = write_site(tmp_path, [quick, full], {}).read_text()
    assert index.count('class="case-row"') == 2


def test_a_case_id_without_a_module_still_names_its_page():
    assert re.fullmatch(r"test_alone-[0-9a-f]{10}\.html", case_page_name("test_alone"))


def test_export_to_a_file_returns_0_and_a_write_error_names_the_systems_words(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    assert main(["export", "1", "-o", str(tmp_path / "run.json"), "--history", history_url]) == 0
    assert (tmp_path / "run.json").read_text().startswith("{\n")
    blocker = tmp_path / "file"
    blocker.write_text("")
    capsys.readouterr()
    assert main(["export", "1", "-o", str(blocker / "run.json"), "--history", history_url]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write run 1 to ") and "[Errno" not in err  # the words alone


def test_changes_on_an_empty_store_names_the_gpu_only_when_asked_for_one(history_url, capsys):
    open_store(history_url).close()
    assert main(["changes", "--history", history_url]) == 0
    assert " on " not in capsys.readouterr().out
    assert main(["changes", "--gpu", "GPU-x", "--history", history_url]) == 0
    assert capsys.readouterr().out.strip().endswith(" on GPU-x")


def test_the_runs_table_names_a_commit_by_ten_characters(history_url, tmp_path, capsys):
    doc = import_one_run(history_url, tmp_path)
    row = runs_table_row(history_url, capsys)
    commit = doc["commit_info"]["id"]
    assert f" {commit[:10]} " in row and commit[:11] not in row


# the third sample (NOTES.md, eighth session)


def test_text_from_the_store_is_escaped_in_attributes_too(tmp_path):
    odd = series(1e-3, 2e-3, key=dataclasses.replace(KEY, case='suites/x.py::test_q["a" & <b>]'))
    write_site(tmp_path, [odd], {})
    index = (tmp_path / "index.html").read_text()
    assert 'data-kernel="suites/x.py::test_q[&quot;a&quot; &amp; &lt;b&gt;]"' in index


def test_an_open_slower_step_marks_its_row_and_a_quiet_row_is_not_marked(tmp_path):
    stepped = series(1e-3, 1e-3, 2e-3)
    quiet = series(1e-3, 1e-3, key=dataclasses.replace(KEY, case=KEY.case.replace("warptile", "naive")))
    index = write_site(tmp_path, [stepped, quiet], {stepped.key: [step(stepped, 1, 2)]}).read_text()
    cells = re.findall(r'<td class="([^"]*)">([^<]*)</td></tr>', index)
    assert [cls for cls, _ in cells] == ["slower", ""]


def test_one_newest_run_is_a_valid_window(capsys):
    assert cmd_changes.positive_int("1") == 1
    with pytest.raises(SystemExit):
        main(["changes", "--newest", "0"])


def test_a_step_names_its_detectable_change_in_percent(monkeypatch, capsys):
    one = series(1e-3, 1e-3, 2e-3)
    fake_analysis(monkeypatch, one, [step(one, 1, 2)], detectable=0.5)
    changes()
    assert "detectable change 50.0% (same GPU)" in capsys.readouterr().out


def test_importing_nothing_is_exit_1(history_url, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["import", str(tmp_path / "empty"), "--history", history_url]) == 1
    assert capsys.readouterr().err.startswith("error: no stored run in ")


@pytest.mark.parametrize("field", [("machine_info", "node"), ("commit_info", "branch")])  # host, branch
def test_the_runs_table_names_the_host_and_the_branch(history_url, tmp_path, capsys, field):
    doc = import_one_run(history_url, tmp_path)
    row = runs_table_row(history_url, capsys)
    value = doc[field[0]][field[1]]
    assert value and f" {value} " in row


# the fourth sample (NOTES.md, eighth session): faster steps and creeps in every view


def test_a_faster_step_is_not_an_open_slower_step_anywhere(tmp_path, monkeypatch, capsys):
    one = series(2e-3, 2e-3, 1e-3)
    faster = step(one, 1, 2, direction=FASTER)
    index = write_site(tmp_path, [one], {one.key: [faster]}).read_text()
    assert re.findall(r'<td class="([^"]*)">([^<]*)</td></tr>', index) == [("", "")]
    fake_analysis(monkeypatch, one, [faster])
    assert changes() == 0
    assert "OPEN" not in capsys.readouterr().out


def test_a_creep_is_described_from_and_to_and_never_as_open(monkeypatch, capsys):
    one = series(1e-3, 1.1e-3, 1.2e-3, 1.3e-3)
    fake_analysis(monkeypatch, one, [step(one, 1, 3, kind=CREEP)])
    changes()
    out = capsys.readouterr().out
    assert "  from: run run-1" in out and "  to:   run run-3" in out
    assert "last run before" not in out and "OPEN" not in out


def test_a_creep_does_not_move_the_runs_the_latest_median_is_compared_with(tmp_path):
    one = series(4.0, 4.0, 1.0, 1.0, 2.0)
    ratio = re.findall(r"<td>(\d\.\d{3})</td>", write_site(tmp_path, [one], {one.key: [
        step(one, 1, 2, kind=CREEP)]}).read_text())
    assert ratio == ["0.800"]  # against all earlier runs, as without the creep


def test_export_replaces_a_file_it_wrote_before(history_url, tmp_path):
    import_one_run(history_url, tmp_path)
    target = tmp_path / "run.json"
    target.write_text("old")
    assert main(["export", "1", "-o", str(target), "--history", history_url]) == 0
    assert target.read_text().startswith("{\n")


def test_a_site_that_cannot_be_written_is_one_sentence_and_exit_1(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    capsys.readouterr()
    assert main(["site", str(blocker / "site"), "--history", history_url]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: cannot write the site into {blocker / 'site'}: ") and "[Errno" not in err


def test_importing_a_run_again_counts_it_once_as_skipped(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    capsys.readouterr()
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0  # the same file again
    assert capsys.readouterr().out.splitlines()[-1].startswith("0 imported, 1 skipped (already recorded), 0 failed")


# the rest of the history modules' mutants, run in full


def test_the_thirtieth_earlier_run_is_the_last_one_counted(tmp_path):
    # the 30 runs before the latest: fifteen at 1 ms, fifteen at 2 ms (median 1.5 ms); a 31st, at 9 ms,
    # would move the median to 2 ms
    one = series(*([9.0] * 40 + [1.0] * 15 + [2.0] * 15 + [3.0]))
    assert "<td>2.000</td>" in write_site(tmp_path, [one], {one.key: []}).read_text()

