"""The dashboard's files, read as text (the browser test reads them as a person would)."""

from __future__ import annotations

import dataclasses
import re
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from kernelwatch.history.chart import ACCEPTED_COLOUR, FAILED_COLOUR, RUN_FAILED_COLOUR
from kernelwatch.history.cli import main
from kernelwatch.history.site import case_page_name, write_site
from kernelwatch.history.sparklines import SPARK_HEIGHT, SPARK_PAD, SPARK_WIDTH, energy_line, sparkline
from kernelwatch.history.steps import CREEP, FASTER, SLOWER, STEP, detect_all
from maintainers.support.h200_histories import case_profiles, gpu_timed_profiles, relative_medians, synthetic_series
from tests.history.made_series import KEY, a_series, a_step, with_points
from tests.history.rich_history import rich_store_url
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)


def _ratios(index: str) -> list[str]:
    """The index's "latest / reference" cells (their title says what the newest run was compared with)."""
    return re.findall(r'<td class="nowrap" title="run [^"]*">(\d+\.\d{3})</td>', index)


def _marks(svg: str) -> list[tuple[str, str, float]]:
    """(run, state, x) of each run marked on a sparkline or an energy line (x: the middle of its mark)."""
    found = []
    for element in ET.fromstring(svg).iter():
        if "mark" in (element.get("class") or "").split():
            xs = [float(x) for x in re.findall(r"([-\d.]+),[-\d.]+", element.get("d") or "")] or [
                float(element.get("cx"))]
            found.append((element.get("data-run"), element.get("data-state"), round((min(xs) + max(xs)) / 2, 1)))
    return found


def _vertices(svg: str) -> list[tuple[float, float]]:
    points = ET.fromstring(svg).find("polyline").get("points")
    return [tuple(map(float, pair.split(","))) for pair in points.split()]


def _two_cases():
    quiet, stepped = gpu_timed_profiles()[:2]
    series = [synthetic_series(quiet, relative_medians(quiet, 30, np.random.default_rng(1))),
              synthetic_series(stepped, relative_medians(stepped, 30, np.random.default_rng(2), step_at=15, step=0.04))]
    return series, detect_all(series, 0.015)


def test_site_names_no_outside_resource(tmp_path):
    series, steps = _two_cases()
    write_site(tmp_path, series, steps)
    for page in tmp_path.rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), page.name
        assert "@import" not in text and "@font-face" not in text


def test_open_slower_steps_come_first_and_an_acknowledged_one_is_not_open(tmp_path):
    series, steps = _two_cases()
    stepped = series[1]
    (step,) = steps[stepped.key]
    index = write_site(tmp_path, series, steps).read_text()
    rows = re.findall(r'<tr class="case-row"[^>]*data-kernel="([^"]+)"', index)
    assert rows == [stepped.key.case, series[0].key.case]
    assert "x1.0" in index.split('class="case-row"')[1]
    acknowledged = {(stepped.key.case, step.after.run_id): "intended: larger tiles"}
    index = write_site(tmp_path, series, steps, acknowledged=acknowledged).read_text()
    assert re.findall(r'<tr class="case-row"[^>]*data-kernel="([^"]+)"', index) == sorted(r.key.case for r in series)
    page = (tmp_path / "cases" / case_page_name(stepped.key.case)).read_text()
    assert "acknowledged: intended: larger tiles" in page


def test_latest_ratio_is_against_the_reference_when_given(tmp_path):
    series, steps = _two_cases()
    quiet = series[0]
    index = write_site(tmp_path, series, steps, references={quiet.key: quiet.points[-1].median_s / 2}).read_text()
    assert "2.000" in _ratios(index) and "over the reference given" not in index  # said as "the reference given"
    assert re.search(r'title="run run-0030: [^"]*, the reference given">2.000<', index)


@pytest.mark.slow
def test_site_of_200_runs_of_90_cases_takes_under_30_s(tmp_path):
    profiles = case_profiles()
    rng = np.random.default_rng(3)
    series = [synthetic_series(profiles[i % len(profiles)], relative_medians(profiles[i % len(profiles)], 200, rng),
                               gpu=f"GPU-{i // len(profiles)}") for i in range(90)]
    steps = detect_all(series, 0.015)
    started = time.perf_counter()
    write_site(tmp_path, series, steps)
    assert time.perf_counter() - started < 30
    assert len(list((tmp_path / "cases").glob("*.html"))) == len(profiles)


def test_the_sparkline_spans_its_box_from_the_first_run_to_the_last_around_its_reference():
    # no reference given: its median (2 ms); -50% and +50% are beyond the largest scale (10%): drawn at its edges
    line = sparkline(a_series(1e-3, 2e-3, 3e-3))
    assert 'points="4.0,28.0 80.0,16.0 156.0,4.0"' in line and 'data-scale="0.1"' in line
    assert "2 runs beyond the scale drawn at its edge" in line
    assert 'points="4.0,16.0 156.0,16.0"' in sparkline(a_series(2e-3, 2e-3))  # flat: on the reference line
    assert '<line class="reference" x1="4" x2="156" y1="16" y2="16"' in line  # the reference: dashed, mid-height


@pytest.mark.parametrize("largest, scale", [(0.0, 0.01), (0.01, 0.01), (0.012, 0.02), (0.03, 0.05), (0.07, 0.1),
                                            (0.5, 0.1)])
def test_a_sparklines_scale_is_the_smallest_of_1_2_5_and_10_percent_that_holds_it(largest, scale):
    # over its median (1 ms): its largest run `largest` above it
    assert f'data-scale="{scale:g}"' in sparkline(a_series(1e-3, 1e-3, 1e-3 * (1 + largest)))


def test_a_sparkline_is_drawn_on_the_scale_it_is_given_over_the_reference_it_is_given():
    from kernelwatch.history.reference import Reference

    line = sparkline(a_series(1e-3, 1.03e-3), Reference(1e-3, "runs 1-6"), 0.05)
    half = SPARK_HEIGHT / 2 - SPARK_PAD
    assert _vertices(line) == [(SPARK_PAD, SPARK_HEIGHT / 2), (SPARK_WIDTH - SPARK_PAD, round(16 - 0.6 * half, 1))]
    assert "(the dashed line: runs 1-6): ±5% from top to bottom" in line and "this one +0.0% to +3.0%" in line


@pytest.mark.parametrize("medians, steps_at, ratio", [
    ((4.0, 4.0, 1.0, 1.0, 2.0), None, "0.800"),  # against the median of every earlier run
    ((4.0, 4.0, 1.0, 1.0, 2.0), 2, "2.000"),  # against the runs since the latest step only
])
def test_the_latest_median_is_compared_with_the_earlier_runs_since_the_latest_step(tmp_path, medians, steps_at,
                                                                                     ratio):
    one = a_series(*(m * 1e-3 for m in medians))
    steps = [] if steps_at is None else [a_step(one, steps_at - 1, steps_at, direction=FASTER)]
    index = write_site(tmp_path, [one], {one.key: steps}).read_text()
    assert _ratios(index) == [ratio]


def test_a_case_page_is_named_after_the_test_readably_and_uniquely():
    name = case_page_name("suites/test_perf_matmul.py::test_time[a/b c-d_e]")
    assert re.fullmatch(r"test_time_a_b_c-d_e_-[0-9a-f]{10}\.html", name)
    assert len(case_page_name("suites/x.py::" + "t" * 100).rsplit("-", 1)[0]) == 60


def test_two_gpus_of_one_case_are_listed_in_gpu_order(tmp_path):
    later = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, gpu="GPU-bbbb"))
    earlier = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, gpu="GPU-aaaa"))
    index = write_site(tmp_path, [later, earlier], {}).read_text()
    assert re.findall(r'data-gpu="(GPU-[ab]+)" data-uuids', index) == ["GPU-aaaa", "GPU-bbbb"]


def test_a_case_of_one_run_has_a_sparkline_of_one_point():
    assert 'points="4.0,16.0"' in sparkline(a_series(1e-3))


def test_the_latest_median_is_compared_with_at_most_the_thirty_runs_before_it(tmp_path):
    one = a_series(*([9.0] * 40 + [1.0] * 30 + [2.0]))  # the forty slow runs are older than the thirty
    assert _ratios(write_site(tmp_path, [one], {one.key: []}).read_text()) == ["2.000"]


def test_one_case_on_one_gpu_under_two_profiles_gets_two_rows(tmp_path):
    quick = a_series(1e-3, 1e-3)
    full = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, profile="full"))
    index = write_site(tmp_path, [quick, full], {}).read_text()
    assert index.count('class="case-row"') == 2


def test_a_case_id_without_a_module_still_names_its_page():
    assert re.fullmatch(r"test_alone-[0-9a-f]{10}\.html", case_page_name("test_alone"))


def test_text_from_the_store_is_escaped_in_attributes_too(tmp_path):
    odd = a_series(1e-3, 2e-3, key=dataclasses.replace(KEY, case='suites/x.py::test_q["a" & <b>]'))
    write_site(tmp_path, [odd], {})
    index = (tmp_path / "index.html").read_text()
    assert 'data-kernel="suites/x.py::test_q[&quot;a&quot; &amp; &lt;b&gt;]"' in index


def test_an_open_slower_step_marks_its_row_and_a_quiet_row_is_not_marked(tmp_path):
    stepped = a_series(1e-3, 1e-3, 2e-3)
    quiet = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, case=KEY.case.replace("tiled32", "naive")))
    index = write_site(tmp_path, [stepped, quiet], {stepped.key: [a_step(stepped, 1, 2)]}).read_text()
    cells = re.findall(r'<td class="([^"]*)">([^<]*)</td></tr>', index)
    # the step's ratio, its first slow run and its commits, 8 characters each
    assert cells == [("slower", "x1.050 at r2 (00000001..00000002)"), ("", "")]


def test_a_creep_does_not_move_the_runs_the_latest_median_is_compared_with(tmp_path):
    one = a_series(4.0, 4.0, 1.0, 1.0, 2.0)
    ratio = _ratios(write_site(tmp_path, [one], {one.key: [a_step(one, 1, 2, kind=CREEP)]}).read_text())
    assert ratio == ["0.800"]  # against all earlier runs, as without the creep


def test_the_thirtieth_earlier_run_is_the_last_one_counted(tmp_path):
    # the 30 runs before the latest: fifteen at 1 ms, fifteen at 2 ms (median 1.5 ms); a 31st, at 9 ms,
    # would move the median to 2 ms
    one = a_series(*([9.0] * 40 + [1.0] * 15 + [2.0] * 15 + [3.0]))
    assert _ratios(write_site(tmp_path, [one], {one.key: []}).read_text()) == ["2.000"]


def test_the_energy_of_the_runs_that_measured_it_is_shown_on_the_index_and_the_case_page(tmp_path):
    one = a_series(1e-3, 1e-3, 1e-3)
    points = [dataclasses.replace(p, energy_j=j) for p, j in zip(one.points, (None, 1.70, 1.75), strict=True)]
    measured = dataclasses.replace(one, points=tuple(points))
    index = write_site(tmp_path, [measured], {measured.key: []}).read_text()
    assert '<td class="nowrap">1.75 J</td>' in index  # the newest measured
    page = (tmp_path / "cases" / case_page_name(measured.key.case)).read_text()
    assert "<h2>Energy per launch</h2>" in page and 'class="energy-line"' in page
    # the two measured runs only, 1.70 then 1.75, over their median: -1.4% and +1.4% on a scale of ±2%
    assert 'points="4.0,24.7 156.0,7.3"' in page and "±2% from top to bottom.</p>" in page
    assert "<th>energy per launch</th>" in page
    assert 'class="mark' not in page.split('class="energy-line"')[1].split("</svg>")[0]  # every run passed: no mark
    assert re.findall(r'<tr class="energy-row">.*?<td>(\d+)</td></tr>', page) == ["2"]  # runs that measured it
    assert re.findall(r'class="run-row[^"]*" data-run="(r\d)".*?<td>50</td><td>([^<]*)</td>', page) == [("r2", "1.75 J"), ("r1", "1.7 J"),
                                                                                 ("r0", "")]


@pytest.mark.parametrize("kind, direction, acknowledged, state", [
    (STEP, SLOWER, None, "open"),
    (STEP, SLOWER, "intended", "acknowledged: intended"),
    (STEP, FASTER, None, ""),  # a faster step needs no acknowledgement
    (CREEP, SLOWER, None, ""),  # a creep is shown, but only a step is open
])
def test_a_case_page_lists_each_step_with_its_commits_and_only_an_unacknowledged_slower_step_is_open(
        tmp_path, kind, direction, acknowledged, state):
    one = a_series(1e-3, 1e-3, 2e-3)
    step = a_step(one, 1, 2, kind=kind, direction=direction)
    write_site(tmp_path, [one], {one.key: [step]},
               acknowledged={(one.key.case, "r2"): acknowledged} if acknowledged else None)
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    (row,) = re.findall(r'<tr class="step-row">(.*?)</tr>', page)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[1] == kind and cells[-1] == state
    assert f'<code title="{step.commit_range}">0000000189ab..0000000289ab</code>' in cells[-2]  # 12 characters each


def test_the_runs_table_shows_each_runs_commit_branch_and_verdict_newest_first(tmp_path):
    one = a_series(1e-3, 2e-3)
    points = (dataclasses.replace(one.points[0], branch=None), dataclasses.replace(one.points[1], verdict="same"))
    write_site(tmp_path, [dataclasses.replace(one, points=points)], {})
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r'<tr class="run-row.*?</tr>', page)]
    # run, commit (12 characters), branch, verdict
    assert [(r[0], r[2], r[3], r[-2]) for r in rows] == [("r1", "<code>0000000189ab</code>", "main", "same"),
                                                         ("r0", "<code>0000000089ab</code>", "", "not judged")]


def test_a_case_without_energy_has_no_energy_section_nor_column(tmp_path):
    one = a_series(1e-3, 2e-3)
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    assert "Energy per launch" not in page and "<th>energy per launch</th>" not in page
    assert "energy per launch" not in index  # no run of any series measured it: no column (issue 45: width)


def test_a_failed_run_is_a_red_triangle_on_the_energy_line_too(tmp_path):
    one = a_series(1e-3, 1e-3)
    points = (dataclasses.replace(one.points[0], energy_j=1.0),
              dataclasses.replace(one.points[1], energy_j=1.1, outcome="failed", verdict="same"))
    line = energy_line(dataclasses.replace(one, points=points))
    assert _marks(line) == [("r1", "failed", _vertices(line)[1][0])] and f'fill="{FAILED_COLOUR}"' in line


def test_the_index_names_each_case_by_its_test_and_links_its_page_under_its_whole_node_id(tmp_path):
    series, steps = _two_cases()
    index = write_site(tmp_path, series, steps).read_text()
    for one in series:
        case = one.key.case
        name = case.rsplit("::", 1)[-1]
        # the name may break after "[" and "-" (<wbr>), never inside a word
        readable = index.replace("&#x27;", "'").replace("&quot;", '"').replace("<wbr>", "")
        assert "::" in case and f'title="{case}">{name}</a>' in readable
    assert ">test_add_time[<wbr>1024x1024-<wbr>matrix_add_2d]</a>" in index


def _one_run_in_each_state():
    """Four runs, oldest first: passed, accepted, failed, run failed (a correctness test failed in its run)."""
    one = a_series(1e-3, 2e-3, 3e-3, 4e-3)
    passed, accepted, failed, run_failed = one.points
    points = (passed, dataclasses.replace(accepted, outcome="failed", accepted_reason="intended"),
              dataclasses.replace(failed, outcome="failed"), dataclasses.replace(run_failed, run_failed=True))
    assert [p.state for p in points] == ["passed", "accepted", "failed", "run failed"]
    return dataclasses.replace(one, points=points)


def test_every_run_that_did_not_pass_is_marked_on_the_sparkline_at_its_place_as_the_chart_marks_it():
    line = sparkline(_one_run_in_each_state())
    xs = [x for x, _ in _vertices(line)]
    # the chart's shapes (chart.state_mark), smaller: an orange diamond, a red triangle, a grey cross
    assert _marks(line) == [("r1", "accepted", xs[1]), ("r2", "failed", xs[2]), ("r3", "run failed", xs[3])]
    assert all(colour in line for colour in (ACCEPTED_COLOUR, FAILED_COLOUR, RUN_FAILED_COLOUR))


def test_every_run_that_did_not_pass_is_marked_on_the_energy_line_too():
    one = _one_run_in_each_state()
    measured = dataclasses.replace(one, points=tuple(dataclasses.replace(p, energy_j=1.0 + i / 10)
                                                     for i, p in enumerate(one.points)))
    line = energy_line(measured)
    xs = [x for x, _ in _vertices(line)]
    assert _marks(line) == [("r1", "accepted", xs[1]), ("r2", "failed", xs[2]), ("r3", "run failed", xs[3])]


@pytest.mark.parametrize("energy_j", [0.0, 2.5])
def test_a_flat_energy_line_is_drawn_along_its_median_even_at_zero(energy_j):
    one = _one_run_in_each_state()
    flat = dataclasses.replace(one, points=tuple(dataclasses.replace(p, energy_j=energy_j) for p in one.points))
    assert {y for _, y in _vertices(energy_line(flat))} == {SPARK_HEIGHT / 2}  # no zero to divide by


def test_the_index_carries_the_filter_script_and_a_case_page_no_script(tmp_path):
    one = a_series(1e-3, 2e-3)
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert index.count("<script>") == 1 and "getElementById('filter-kernel')" in index.split("<script>")[1]
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    assert "<script" not in page


@pytest.mark.parametrize("runs, words", [(1, "(1 run, "), (2, "(2 runs, ")])
def test_a_failing_series_says_since_which_run_and_for_how_many_runs_in_words(runs, words):
    from kernelwatch.history.analysis import Failing
    from kernelwatch.history.site import _attention

    one = a_series(1e-4, 1e-4, 1.1e-4, 1.1e-4)
    failing = Failing(one.key, first=one.points[4 - runs], before=one.points[3 - runs], newest=one.points[-1],
                      runs=runs)
    text = _attention(one, [], failing)
    assert text.startswith(f"failing since run {one.points[4 - runs].run_id} {words}commits ")



def _case(name: str):
    return dataclasses.replace(KEY, case=f"suites/test_perf_x.py::{name}")


def _attention_cells(index: str) -> list[str]:
    return re.findall(r'<td class="(?:slower)?">([^<]*)</td></tr>', index)


@pytest.mark.parametrize("newest, cell", [
    ({"verdict": "same"}, '<td class="passed">same</td>'),  # passed: the verdict alone
    ({}, '<td class="passed">not judged</td>'),
    ({"verdict": "slower", "outcome": "failed"}, '<td class="failed">slower (failed)</td>'),
    ({"verdict": "slower", "outcome": "failed", "accepted_reason": "intended"},
     '<td class="accepted">slower (accepted)</td>'),
    ({"verdict": "same", "run_failed": True}, '<td class="run-failed">same (run failed)</td>'),
], ids=["passed", "not-judged", "failed", "accepted", "run-failed"])
def test_the_index_shows_the_newest_runs_verdict_and_any_state_but_passed(tmp_path, newest, cell):
    # the older runs carry other verdicts: only the newest run's counts
    one = with_points(a_series(1e-3, 1e-3, 1e-3), p0={"verdict": "faster"}, p1={"verdict": "new"}, p2=newest)
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert f"<td>3</td>{cell}" in index


def test_the_newest_energy_is_that_of_the_newest_run_that_measured_it(tmp_path):
    one = a_series(1e-3, 1e-3, 1e-3, 1e-3)
    measured = with_points(one, p0={"energy_j": 1.6}, p1={"energy_j": 1.7}, p2={"energy_j": 1.8})  # the newest: none
    index = write_site(tmp_path, [measured], {measured.key: []}).read_text()
    assert '<td class="nowrap">1.8 J</td>' in index
    page = (tmp_path / "cases" / case_page_name(measured.key.case)).read_text()
    assert re.findall(r'<tr class="energy-row">.*?</svg></td><td>([^<]*)</td><td>(\d+)</td>', page) == [("1.8 J", "3")]


def test_a_failing_series_names_the_commits_before_and_at_its_first_failed_run_by_eight_characters(tmp_path):
    one = with_points(a_series(1e-4, 1e-4, 1.1e-4, 1.1e-4), p2={"outcome": "failed"}, p3={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert _attention_cells(index) == ["failing since run r2 (2 runs, commits 00000001..00000002)"]


def test_a_failing_series_lists_its_other_open_slower_steps_but_not_the_one_that_holds_its_failure(tmp_path):
    one = a_series(*[1e-4] * 8)
    one = with_points(one, p5={"outcome": "failed"}, p6={"outcome": "failed"}, p7={"outcome": "failed"})
    earlier, holding = a_step(one, 1, 2), a_step(one, 4, 5)  # both slower and open; the second holds runs 5 to 7
    index = write_site(tmp_path, [one], {one.key: [earlier, holding]}).read_text()
    assert _attention_cells(index) == ["failing since run r5 (3 runs, commits 00000004..00000005); "
                                       "x1.050 at r2 (00000001..00000002)"]


def test_failing_series_come_first_then_open_slower_steps_then_the_quiet_ones_each_marked_so(tmp_path):
    # named so that the case ids alone would sort them the other way round
    failing = with_points(a_series(1e-4, 1e-4, 1e-4, key=_case("test_c")), p2={"outcome": "failed"})
    stepped = a_series(1e-4, 1e-4, 1.1e-4, key=_case("test_b"))
    quiet = a_series(1e-4, 1e-4, 1e-4, key=_case("test_a"))
    index = write_site(tmp_path, [quiet, stepped, failing], {stepped.key: [a_step(stepped, 1, 2)]}).read_text()
    rows = re.findall(r'<tr class="case-row"[^>]*data-kernel="[^"]*::(test_\w)" data-state="([^"]*)"', index)
    assert rows == [("test_c", "failing"), ("test_b", "open step"), ("test_a", "quiet")]


def test_a_case_id_without_a_module_is_listed_under_its_whole_id(tmp_path):
    one = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, case="test_alone"))
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert f'<a href="cases/{case_page_name("test_alone")}" title="test_alone">test_alone</a>' in index


def test_a_gpu_model_is_shown_whole_and_a_gpu_uuid_shortened_in_the_rows_and_the_filter(tmp_path):
    uuid = "GPU-19ed6398-1111-2222-3333-444455556666"
    by_model = a_series(1e-3, 1e-3)
    by_uuid = a_series(1e-3, 1e-3, key=dataclasses.replace(KEY, gpu=uuid))
    index = write_site(tmp_path, [by_model, by_uuid], {}).read_text()
    assert re.findall(r'<td class="nowrap" title="((?!run )[^"]*)">([^<]*)</td>', index) == [
        (uuid, "GPU-19ed6398"), ("NVIDIA H200", "NVIDIA H200")]  # one case: in GPU order
    options = index.split('id="filter-gpu">')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)">([^<]*)</option>', options) == [
        ("", "all"), (uuid, "GPU-19ed6398"), ("NVIDIA H200", "NVIDIA H200")]


def test_write_site_takes_its_options_by_keyword_only(tmp_path):
    # the options are keyword-only (cmd_site passes them so): a mapping given by its place could be taken for
    # the acknowledgements when meant as the references, so a fourth positional argument is refused
    one = a_series(1e-3, 1e-3)
    with pytest.raises(TypeError):
        write_site(tmp_path, [one], {}, {one.key: 1e-3})


# --- issue 45: the ratio of the newest run is against the level before what is open --------------------------------


def test_a_failing_series_is_compared_with_the_runs_before_its_failing_ones(tmp_path):
    # the screenshot's contradiction: failing and slower, yet 1.000 against the failed runs themselves
    one = with_points(a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4), p3={"outcome": "failed"},
                      p4={"outcome": "failed"}, p5={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert _ratios(index) == ["1.100"]
    assert "the median of 3 runs, r0 to r2, before the failing runs since run r3" in index


def test_a_failing_series_is_compared_with_the_runs_before_the_step_that_holds_its_failures(tmp_path):
    # the step at run 3 (open, slower); runs 5 and 6 failed: the level before the step is the reference
    one = with_points(a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4, 1.1e-4), p5={"outcome": "failed"},
                      p6={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: [a_step(one, 2, 3)]}).read_text()
    assert _ratios(index) == ["1.100"] and "before the open slower step at run r3" in index


@pytest.mark.parametrize("acknowledged, ratio", [(None, "1.100"), ("intended", "1.000")])
def test_an_open_slower_step_is_measured_from_the_level_before_it_and_an_acknowledged_one_is_the_new_level(
        tmp_path, acknowledged, ratio):
    one = a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4)
    index = write_site(tmp_path, [one], {one.key: [a_step(one, 2, 3)]},
                       acknowledged={(one.key.case, "r3"): acknowledged} if acknowledged else None).read_text()
    assert _ratios(index) == [ratio]


def test_two_open_slower_steps_are_measured_from_the_level_before_the_first(tmp_path):
    one = a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4, 1.21e-4, 1.21e-4, 1.21e-4)
    index = write_site(tmp_path, [one], {one.key: [a_step(one, 2, 3), a_step(one, 5, 6)]}).read_text()
    assert _ratios(index) == ["1.210"]  # both still open: the newest run is 21% over the last accepted level


def test_an_open_step_is_measured_from_its_own_level_back_to_the_step_before_it(tmp_path):
    # a faster step at run 2 (no acknowledgement needed), then an open slower one at run 5
    one = a_series(3e-4, 3e-4, 1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4)
    steps = [a_step(one, 1, 2, direction=FASTER), a_step(one, 4, 5)]
    assert _ratios(write_site(tmp_path, [one], {one.key: steps}).read_text()) == ["1.100"]


def test_a_failed_run_is_never_a_reference(tmp_path):
    # runs 1 and 2 failed (slower, and besides its cases): they are left out of the reference, as the store does
    one = with_points(a_series(2e-4, 9e-4, 9e-4, 2e-4), p1={"outcome": "failed"}, p2={"run_failed": True})
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert _ratios(index) == ["1.000"] and "the median of run r0, before it" in index


def test_a_series_failed_from_its_first_run_has_no_ratio_and_says_why(tmp_path):
    one = with_points(a_series(1e-4, 1e-4), p0={"outcome": "failed"}, p1={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    assert _ratios(index) == [] and '<td class="nowrap" title="no earlier run to compare with"></td>' in index


def test_the_sparkline_is_drawn_over_the_same_reference_as_the_ratio(tmp_path):
    one = with_points(a_series(1e-4, 1e-4, 1e-4, 1.03e-4, 1.03e-4, 1.03e-4), p3={"outcome": "failed"},
                      p4={"outcome": "failed"}, p5={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: []}).read_text()
    line = re.search(r'<svg class="sparkline".*?</svg>', index).group(0)
    half = SPARK_HEIGHT / 2 - SPARK_PAD
    # the reference (runs r0-r2) mid-height; the newest, 1.030 over it, 3/5 of the way up a ±5% scale
    assert [y for _, y in _vertices(line)] == [16.0] * 3 + [round(16 - 0.6 * half, 1)] * 3
    assert _ratios(index) == ["1.030"]


def test_every_row_of_the_index_shares_one_scale_said_in_the_header(tmp_path):
    quiet = a_series(1e-4, 1.001e-4, 0.999e-4, 1e-4, key=_case("test_quiet"))
    stepped = a_series(1e-4, 1e-4, 1.03e-4, 1.03e-4, key=_case("test_stepped"))
    index = write_site(tmp_path, [quiet, stepped], {stepped.key: []}).read_text()
    assert re.findall(r'<svg class="sparkline"[^>]* data-scale="([^"]*)"', index) == ["0.05", "0.05"]
    assert "<th>history (±5%)</th>" in index and "±5% from top to bottom" in index
    quiet_ys, stepped_ys = ([y for _, y in _vertices(line)] for line in re.findall(r'<svg class="sparkline".*?</svg>',
                                                                                   index))
    # 0.1% of noise is a tenth of the height of a 1.5% move (the stepped row's median is 1.015 ms)
    assert max(quiet_ys) - min(quiet_ys) < (max(stepped_ys) - min(stepped_ys)) / 10


def test_a_series_failing_again_after_an_acknowledged_step_is_compared_with_its_acknowledged_level(tmp_path):
    # a 10% step at run 3, acknowledged; runs 6 and 7 fail again, 5% over that level: 1.050, not 1.155
    one = with_points(a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4, 1.155e-4, 1.155e-4),
                      p6={"outcome": "failed"}, p7={"outcome": "failed"})
    index = write_site(tmp_path, [one], {one.key: [a_step(one, 2, 3)]},
                       acknowledged={(one.key.case, "r3"): "intended"}).read_text()
    assert _ratios(index) == ["1.050"] and "before the failing runs since run r6" in index


# -- whole pages against reviewed snapshots (tests/history/__snapshots__/test_site.ambr) ------------------------------

def readable(page: str) -> str:
    """A page one element a line, for the snapshot's reader: past its doctype's line it has no newline between two
    elements of its own, so the snapshot still pins every character of it."""
    doctype, rest = page.split("\n", 1)
    assert doctype == "<!DOCTYPE html>" and ">\n<" not in rest
    return page.replace("><", ">\n<")


def site_pages(out) -> dict[str, str]:
    """Every page of the site in `out`, by its path there, each readable."""
    return {page.relative_to(out).as_posix(): readable(page.read_text(encoding="utf-8"))
            for page in sorted(out.rglob("*.html"))}


@pytest.fixture(scope="module")
def rich_url(tmp_path_factory):
    return rich_store_url(tmp_path_factory)  # tests/history/rich_history.py, recorded once: the tests only read it


def site_of(url: str, out, *args: str) -> dict[str, str]:
    assert main(["site", str(out), "--history", url, *args]) == 0
    return site_pages(out)


def test_the_site_of_a_rich_history_is_the_reviewed_snapshot(rich_url, tmp_path, capsys, snapshot):
    # as `site` writes it: the steps, acknowledgements and trailers of `changes`, energy, correctness checks (one
    # of a timed case, under its chart; one alone on its page), a run failed besides its cases, throttled runs
    # left out, two GPUs (one too short: a series of one run)
    pages = site_of(rich_url, tmp_path)
    assert capsys.readouterr().out == f"{tmp_path / 'index.html'}\n"
    assert pages == snapshot


def test_the_index_of_a_rich_history_by_gpu_model_is_the_reviewed_snapshot(rich_url, tmp_path, snapshot):
    # one series per GPU model: its name whole, in the rows and the filter; the UUIDs of its runs in the other
    assert site_of(rich_url, tmp_path, "--by", "gpu_model")["index.html"] == snapshot


def test_the_site_of_an_empty_store_is_an_index_without_rows(tmp_path, snapshot):
    write_site(tmp_path, [], {})
    assert site_pages(tmp_path) == snapshot


def test_a_site_given_its_references_acknowledgements_and_title_is_the_reviewed_snapshot(tmp_path, snapshot):
    # write_site's own options, as a caller other than `site` passes them: a reference for one series, the
    # acknowledgements (the default reason: one at a step's first run after), a title; text to escape everywhere;
    # a series of one physical GPU (its UUID shortened) and one of a GPU model (named whole)
    uuid = "GPU-19ed6398-1111-2222-3333-444455556666"
    odd = with_points(a_series(1e-4, 1e-4, 1e-4, 1.1e-4, 1.1e-4, 1.1e-4, 1.05e-4,
                               key=dataclasses.replace(_case('test_q["a" & <b>]'), gpu=uuid), uuids=[uuid] * 7),
                      p3={"verdict": "slower", "outcome": "failed", "branch": "fix/<tiles>"}, p4={"verdict": "same"})
    model = with_points(a_series(2e-4, 2e-4, 2e-4, 1e-4, 1e-4, 1.2e-4, key=_case("test_model")),
                        p5={"verdict": "slower", "accepted_reason": "meant: <fused> & wider"})
    steps = {odd.key: [a_step(odd, 2, 3), a_step(odd, 4, 6, kind=CREEP, direction=FASTER)]}
    write_site(tmp_path, [odd, model], steps, acknowledged={(odd.key.case, "r3"): "meant: <wider> & 'tiles'"},
               references={model.key: 1e-4}, title="kernelwatch & <friends>")
    assert site_pages(tmp_path) == snapshot


def test_a_gpu_model_is_named_whole_on_the_case_page_too(tmp_path):
    one = with_points(a_series(1e-3, 1e-3, 2e-3), p2={"energy_j": 1.5})
    write_site(tmp_path, [one], {one.key: [a_step(one, 1, 2)]})
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    assert re.findall(r'<tr class="(?:step|energy)-row"><td>([^<]*)</td>', page) == ["NVIDIA H200"] * 2


def test_a_slower_creep_is_no_open_slower_step_on_the_index(tmp_path):
    one = a_series(*[1e-4] * 6, 1.01e-4, 1.02e-4, 1.03e-4)
    index = write_site(tmp_path, [one], {one.key: [a_step(one, 5, 8, kind=CREEP)]}).read_text()
    assert re.findall(r'data-state="([^"]*)"', index) == ["quiet"] and _attention_cells(index) == [""]


def test_a_p_value_below_the_smallest_shown_is_escaped_on_the_case_page(tmp_path):
    one = a_series(1e-3, 1e-3, 2e-3)
    write_site(tmp_path, [one], {one.key: [dataclasses.replace(a_step(one, 1, 2), p_value=1e-15)]})
    page = (tmp_path / "cases" / case_page_name(one.key.case)).read_text()
    assert "<td>&lt; 1e-12</td>" in page
