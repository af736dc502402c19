"""What mutation testing of harness/history/ (site, bisect, the commands) found no test pinning.

The dashboard's chart is checked against its contract, not against its own arithmetic: time runs
left to right from MARGIN to WIDTH - MARGIN, the value range (8% padded) bottom to top from
HEIGHT - MARGIN to MARGIN, and every mark lies inside the drawing.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest
from backends import history_url_fixture  # noqa: F401 (pytest fixtures)
from synthetic import make_document, write_document

from harness.history import bisect as bisect_module
from harness.history import cmd_bisect, cmd_changes
from harness.history.analysis import Analysis, Detectable
from harness.history.cli import main
from harness.history.series import Point, Series, SeriesKey
from harness.history.site import HEIGHT, MARGIN, WIDTH, case_page_name, sparkline, write_site
from harness.history.steps import CREEP, FASTER, SLOWER, STEP, Step
from harness.units import format_duration

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


def expected_y(value: float, lows: list[float], highs: list[float]) -> float:
    low, high = min(lows), max(highs)
    pad = (high - low) * 0.08
    low, high = low - pad, high + pad
    return (HEIGHT - MARGIN) - (value - low) / (high - low) * (HEIGHT - 2 * MARGIN)


def test_points_run_left_to_right_in_time_and_bottom_to_top_in_value(tmp_path):
    one = series(1e-3, 2e-3, 3e-3)
    svg = plot(tmp_path, one)
    assert (svg.get("width"), svg.get("height"), svg.get("viewBox")) == ("900", "320", "0 0 900 320")
    circles = svg.findall(".//circle")
    assert [float(c.get("cx")) for c in circles] == [MARGIN, WIDTH / 2, WIDTH - MARGIN]
    lows, highs = [p.low_s for p in one.points], [p.high_s for p in one.points]
    for circle, p in zip(circles, one.points, strict=True):
        assert float(circle.get("cy")) == pytest.approx(expected_y(p.median_s, lows, highs), abs=0.06)
    band = [tuple(map(float, xy.split(","))) for xy in svg.find(".//polygon").get("points").split()]
    assert band[0][1] == pytest.approx(expected_y(one.points[0].high_s, lows, highs), abs=0.06)
    assert band[-1][1] == pytest.approx(expected_y(one.points[0].low_s, lows, highs), abs=0.06)
    assert [x for x, _ in band] == [MARGIN, WIDTH / 2, WIDTH - MARGIN, WIDTH - MARGIN, WIDTH / 2, MARGIN]


def test_the_axes_frame_the_plot_and_the_value_labels_sit_left_of_it(tmp_path):
    one = series(1e-3, 2e-3, 3e-3)
    svg = plot(tmp_path, one)
    axes = [tuple(float(line.get(a)) for a in ("x1", "y1", "x2", "y2")) for line in svg.findall("line")[:2]]
    assert axes == [(MARGIN, HEIGHT - MARGIN, WIDTH - MARGIN, HEIGHT - MARGIN), (MARGIN, MARGIN, MARGIN, HEIGHT - MARGIN)]
    lows, highs = [p.low_s for p in one.points], [p.high_s for p in one.points]
    low, high = min(lows), max(highs)
    pad = (high - low) * 0.08
    labels = [t for t in svg.findall("text") if t.get("text-anchor") == "end"]
    assert [float(t.get("x")) for t in labels] == [MARGIN - 4] * 3
    for label, fraction in zip(labels, (0.1, 0.5, 0.9), strict=True):
        value = low - pad + (high - low + 2 * pad) * fraction
        assert label.text == format_duration(value)
        assert float(label.get("y")) == pytest.approx(expected_y(value, lows, highs) + 4, abs=0.06)
    dates = [t for t in svg.findall("text") if t.get("text-anchor") == "middle"]
    assert [(float(t.get("x")), float(t.get("y")), t.text) for t in dates] == [
        (MARGIN, HEIGHT - MARGIN + 16, "2026-11-01"), (WIDTH - MARGIN, HEIGHT - MARGIN + 16, "2026-11-03")]


def test_a_step_is_a_full_height_line_midway_between_its_runs_labelled_with_its_commits(tmp_path):
    one = series(1e-3, 1e-3, 2e-3)
    svg = plot(tmp_path, one, [step(one, 0, 1)])
    line = svg.find(".//line[@class='step slower']")
    middle = (MARGIN + WIDTH / 2) / 2
    assert [float(line.get(a)) for a in ("x1", "y1", "x2", "y2")] == [middle, MARGIN, middle, HEIGHT - MARGIN]
    label = [t for t in svg.findall("text") if t.text and ".." in t.text][0]
    assert (float(label.get("x")), float(label.get("y")), label.text) == (middle + 3, MARGIN - 6,
                                                                         "00000000..00000001")


def test_a_creep_is_a_full_height_stretch_from_its_first_run_to_its_last(tmp_path):
    one = series(1e-3, 1.5e-3, 2e-3)
    svg = plot(tmp_path, one, [step(one, 0, 2, kind=CREEP)])
    rect = svg.find(".//rect")
    assert [float(rect.get(a)) for a in ("x", "y", "width", "height")] == [MARGIN, MARGIN, WIDTH - 2 * MARGIN,
                                                                            HEIGHT - 2 * MARGIN]


def test_a_points_tooltip_names_its_commit_by_twelve_characters(tmp_path):
    svg = plot(tmp_path, series(1e-3, 2e-3))
    tip = svg.find(".//circle/title").text
    assert " commit 0000000089ab " in tip and "0000000089abc" not in tip


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


# bisect


def test_cannot_judge_is_the_exit_status_git_bisect_run_skips_a_commit_on():
    assert bisect_module.CANNOT_JUDGE == 125  # git-bisect(1): "exit code 125 ... cannot be tested"


def test_a_probe_cannot_be_changed_after_it_judged():
    with pytest.raises(dataclasses.FrozenInstanceError):
        bisect_module.Probe("abc", bisect_module.GOOD).verdict = bisect_module.BAD


@pytest.mark.parametrize("candidates, probes", [(0, 0), (1, 0), (2, 1), (3, 2), (8, 3), (9, 4)])
def test_the_probes_a_bisection_needs(candidates, probes):
    assert bisect_module.probes_needed(candidates) == probes


def test_an_ab_that_failed_otherwise_than_by_a_slower_case_cannot_judge():
    report = "| case |\n| `k` | **slower** |\n"
    assert bisect_module.judge(1, report) == bisect_module.BAD
    assert bisect_module.judge(2, report) is None  # pytest's exit 2: interrupted or a usage error


def test_the_result_lines_name_commits_by_twelve_characters():
    result = bisect_module.BisectResult(first_bad="b" * 40, last_good="a" * 40, candidates=["b" * 40],
                                        probes=[bisect_module.Probe("c" * 40, bisect_module.BAD, "exit 1")])
    assert bisect_module.result_lines(result) == [
        f"{'c' * 12} bad (exit 1)", f"first bad commit: {'b' * 40} (last good {'a' * 12}; 1 candidates, 1 probes)"]


@pytest.mark.parametrize("verdict, status", [(bisect_module.BAD, 1), (bisect_module.GOOD, 0)])
def test_the_probe_mode_exits_as_git_bisect_run_reads_it(monkeypatch, verdict, status):
    monkeypatch.setattr(bisect_module, "probe_tree", lambda *args: bisect_module.Probe("c" * 40, verdict))
    assert bisect_module.main(["case", "--good", "HEAD~1", "--probe"]) == status


def test_the_probe_mode_that_cannot_judge_exits_125(monkeypatch, capsys):
    def cannot(*args):
        raise bisect_module.BisectError("no GPU")

    monkeypatch.setattr(bisect_module, "probe_tree", cannot)
    assert bisect_module.main(["case", "--good", "HEAD~1", "--probe"]) == 125
    assert "no GPU" in capsys.readouterr().err


def test_a_bisection_with_a_bad_ref_runs_and_exits_0(monkeypatch, capsys):
    result = bisect_module.BisectResult(first_bad="b" * 40, last_good="a" * 40, candidates=["b" * 40])
    monkeypatch.setattr(bisect_module, "bisect", lambda *args: result)
    assert bisect_module.main(["case", "--good", "HEAD~1", "--bad", "HEAD"]) == 0
    assert capsys.readouterr().out.startswith(f"first bad commit: {'b' * 40}")
    with pytest.raises(SystemExit) as exited:
        bisect_module.main(["case", "--good", "HEAD~1"])
    assert exited.value.code == 2


def test_the_bisect_command_opens_no_store(monkeypatch, tmp_path, capsys):
    result = bisect_module.BisectResult(first_bad="b" * 40, last_good="a" * 40, candidates=["b" * 40])
    monkeypatch.setattr(cmd_bisect, "bisect", lambda *args: result)
    unusable = tmp_path / "not-a-folder"
    unusable.write_text("")
    # a store under a file cannot be opened: bisect must not try
    assert main(["bisect", "case", "--good", "HEAD~1", "--bad", "HEAD", "--history", str(unusable / "h.sqlite")]) == 0
    assert cmd_bisect.USES_STORE is False


def test_a_failed_git_command_is_named_with_the_last_line_it_wrote(monkeypatch, capsys):
    def failing(*args):
        raise subprocess.CalledProcessError(128, ["git", "-C", ".", "rev-parse", "nope"],
                                            stderr="warning: one\nwarning: two\nfatal: ambiguous argument 'nope'\n")

    monkeypatch.setattr(cmd_bisect, "bisect", failing)
    assert main(["bisect", "case", "--good", "nope", "--bad", "HEAD"]) == 1
    assert capsys.readouterr().err.strip() == "error: git -C . rev-parse failed: fatal: ambiguous argument 'nope'"


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


def test_a_case_whose_runs_each_had_one_sample_is_still_drawn_inside_the_plot(tmp_path):
    flat = Series(KEY, tuple(Point(run_id=f"run-{d}", started_at=START + timedelta(days=d), commit=COMMIT,
                                   branch=None, median_s=1e-3, low_s=1e-3, high_s=1e-3, sample_count=1,
                                   gpu_uuid=None) for d in range(3)))
    svg = plot(tmp_path, flat)
    # no spread at all: 1% of the value either side, the points on the middle line
    assert {float(c.get("cy")) for c in svg.findall(".//circle")} == {HEIGHT / 2}
    labels = [t.text for t in svg.findall("text") if t.get("text-anchor") == "end"]
    assert labels == [format_duration(1e-3 * (1 + 0.01 * (2 * f - 1))) for f in (0.1, 0.5, 0.9)]


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


def test_bisect_runs_as_a_module_of_its_own_for_git_bisect_run(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "harness.history.bisect", "--help"], capture_output=True, text=True,
                          cwd=root)
    assert done.returncode == 0
    assert "".join(bisect_module.__doc__.splitlines()[0].split()) in "".join(done.stdout.split())  # wrapped


def test_a_bisection_needs_a_good_ref(capsys):
    for argv in (["case", "--bad", "HEAD"], ["case", "--bad", "HEAD", "--probe"]):
        with pytest.raises(SystemExit) as exited:
            bisect_module.main(argv)
        assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        main(["bisect", "case", "--bad", "HEAD"])
    assert exited.value.code == 2


def test_an_unknown_ref_stops_the_bisection_with_gits_error(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(subprocess.CalledProcessError):
        bisect_module.bisect(tmp_path, "case", "no-such-ref", "HEAD", probe=lambda commit: None)


def test_a_probe_that_cannot_judge_shows_the_last_five_lines_of_the_ab(tmp_path):
    one_commit_repo(tmp_path)
    printer = [sys.executable, "-c", "print('\\n'.join(f'line {i}' for i in range(1, 8))); raise SystemExit(3)"]
    with pytest.raises(bisect_module.BisectError) as raised:
        bisect_module.probe_tree(tmp_path, "case", "HEAD", command=lambda *args: printer)
    tail = str(raised.value).splitlines()[-5:]
    assert tail == [f"line {i}" for i in range(3, 8)] and "line 2" not in str(raised.value)


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


def test_a_case_of_one_run_gets_a_page_with_its_point_at_the_left_edge(tmp_path):
    svg = plot(tmp_path, series(1e-3))
    assert [float(c.get("cx")) for c in svg.findall(".//circle")] == [MARGIN]


def test_the_chart_keeps_its_layout(tmp_path):
    # a layout a reader's eye (and the screenshots in docs/) knows: 900 x 320, 56 px of margin, a
    # creep at least 1 px wide however short
    from harness.history import site

    assert (site.WIDTH, site.HEIGHT, site.MARGIN, site.EARLIER_RUNS) == (900, 320, 56, 30)
    one = Series(KEY, (point(0, 1e-3), dataclasses.replace(point(0, 1.2e-3), run_id="run-0b"),
                       point(1, 1.2e-3)))
    svg = plot(tmp_path, one, [step(one, 0, 1, kind=CREEP)])  # the creep's two runs at one moment
    assert float(svg.find(".//rect").get("width")) == 1.0


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


@pytest.mark.parametrize("returncode", [-9, -15])
def test_an_ab_killed_by_a_signal_judges_nothing(returncode):
    report = "| case |\n| `k` | **slower** |\n"
    assert bisect_module.judge(returncode, report) is None
    assert bisect_module.judge(returncode, "| case |\n| `k` | same |\n") is None


def test_a_probe_that_cannot_judge_names_its_commit_by_twelve_characters(tmp_path):
    commit = one_commit_repo(tmp_path)
    with pytest.raises(bisect_module.BisectError) as raised:
        bisect_module.probe_tree(tmp_path, "case", "HEAD", command=lambda *args: [sys.executable, "-c", "pass"])
    assert str(raised.value).startswith(f"{commit[:12]}: the A/B exited 0")


@pytest.mark.parametrize("error", [bisect_module.BisectError("no commits between a and b"),
                                   subprocess.CalledProcessError(128, ["git"])])
def test_a_bisection_that_stops_is_exit_3_with_one_sentence(monkeypatch, capsys, error):
    def stops(*args):
        raise error

    monkeypatch.setattr(bisect_module, "bisect", stops)
    assert bisect_module.main(["case", "--good", "HEAD~1", "--bad", "HEAD"]) == 3
    assert capsys.readouterr().err.startswith("bisect: ")


def test_the_thirtieth_earlier_run_is_the_last_one_counted(tmp_path):
    # the 30 runs before the latest: fifteen at 1 ms, fifteen at 2 ms (median 1.5 ms); a 31st, at 9 ms,
    # would move the median to 2 ms
    one = series(*([9.0] * 40 + [1.0] * 15 + [2.0] * 15 + [3.0]))
    assert "<td>2.000</td>" in write_site(tmp_path, [one], {one.key: []}).read_text()


def test_a_points_tooltip_ends_with_its_gpus_uuid(tmp_path):
    svg = plot(tmp_path, series(1e-3, 2e-3))
    assert svg.find(".//circle/title").text.endswith(", GPU-aaaa")
