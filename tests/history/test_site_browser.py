"""The dashboard read in a real browser: Debian's headless Chromium driven by Playwright.

Playwright's Python package drives the system browser (`executable_path`), never a
browser of its own (`playwright install` is not run; this machine has no network).
Playwright rather than Selenium: it needs no driver binary matched to the browser's
version, and it reports console messages, page errors and every request as events.

Without Chromium or Playwright the tests skip with the reason, except where the
environment variable CI is set: there a missing browser is a failure.
Screenshots go to $KERNELWATCH_ARTIFACTS/site-screenshots (default: the test's tmp folder).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from kernelwatch.history.cli import main
from kernelwatch.history.site import case_page_name, write_site
from kernelwatch.history.steps import detect_all
from maintainers.support.dashboard_history import (
    ACCEPTED_CASE,
    ACCEPTED_RUN,
    CASES,
    FAILED_RUN,
    STEP_RUN,
    record_dashboard_history,
)
from maintainers.support.dashboard_history import RUNS as DASH_RUNS
from maintainers.support.dashboard_history import STEPPED_CASE as DASH_STEPPED
from maintainers.support.h200_histories import gpu_timed_profiles, relative_medians, synthetic_series
from maintainers.support.synthetic_history import STEP_AT as STORE_STEP_AT
from maintainers.support.synthetic_history import (
    STEPPED_CASE,
    STEPPED_HISTORY_CASES,
    STEPPED_HISTORY_RUNS,
    case_name,
    record_stepped_history,
)
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)

CHROMIUM = os.environ.get("KERNELWATCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
STEP_CASE = 2  # the case (of the profiles below) with a 3% step at STEP_AT
STEP_AT = 20
RUNS = 40


pytestmark = pytest.mark.slow  # a real browser, started per module: run by CI's second pass (tox -e unit -- -m slow)


def _browser_missing(why: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_missing("the playwright package is not installed (tox -e unit installs it)")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _browser_missing(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Three cases on two GPUs, 40 runs each; case STEP_CASE is 3% slower from run STEP_AT on, on both GPUs."""
    series = []
    for gpu_index, gpu in enumerate(("GPU-aaaa-0001", "GPU-bbbb-0002")):
        for case_index, noise in enumerate(gpu_timed_profiles()[:3]):
            rng = np.random.default_rng(100 * gpu_index + case_index)
            shape = {"step_at": STEP_AT, "step": 0.03} if case_index == STEP_CASE else {}
            series.append(synthetic_series(noise, relative_medians(noise, RUNS, rng, **shape), gpu=gpu))
    steps = detect_all(series, 0.015)
    out = tmp_path_factory.mktemp("site")
    write_site(out, series, steps)
    return out, series


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    root = os.environ.get("KERNELWATCH_ARTIFACTS")
    folder = Path(root) / "site-screenshots" if root else tmp_path_factory.mktemp("site-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(context, path: Path):
    """Open `path`; returns the page and the problems seen: console errors, page errors, requests off disk."""
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("request", lambda request: problems.append(f"fetched {request.url}")
            if not request.url.startswith(("file:", "data:")) else None)
    page.goto(path.as_uri(), wait_until="load")
    return page, problems


def test_every_page_loads_without_a_console_error_and_fetches_nothing(chromium, site, artifacts):
    out, _ = site
    pages = [out / "index.html", *sorted((out / "cases").glob("*.html"))]
    assert len(pages) == 4
    for path in pages:
        page, problems = _open(chromium, path)
        page.screenshot(path=str(artifacts / f"{path.stem}.png"), full_page=True)
        page.close()
        assert problems == [], path.name


def test_every_case_plots_one_point_per_run_and_gpu(chromium, site):
    out, series = site
    for case in {one.key.case for one in series}:
        expected = sum(len(one) for one in series if one.key.case == case)
        page, _ = _open(chromium, out / "cases" / case_page_name(case))
        assert page.locator("svg.case-plot").count() == 1
        assert page.locator("svg.case-plot circle.point").count() == expected == 2 * RUNS
        assert page.locator("svg.case-plot").get_attribute("data-points") == str(expected)
        page.close()


def test_the_known_step_is_marked_between_its_runs(chromium, site):
    out, series = site
    case = gpu_timed_profiles()[STEP_CASE].case
    page, _ = _open(chromium, out / "cases" / case_page_name(case))
    marks = page.locator("line.step.slower")
    assert marks.count() == 2  # one per GPU
    for i in range(2):
        assert marks.nth(i).get_attribute("data-before-run") == f"run-{STEP_AT:04d}"  # runs count from 1
        assert marks.nth(i).get_attribute("data-after-run") == f"run-{STEP_AT + 1:04d}"
    assert "c0020..c0021" in page.locator("svg.case-plot").text_content()
    for other in {one.key.case for one in series} - {case}:
        quiet, _ = _open(chromium, out / "cases" / case_page_name(other))
        assert quiet.locator("line.step").count() == 0
        quiet.close()
    page.close()


def test_index_lists_open_slower_steps_first_and_filters(chromium, site, artifacts):
    out, _ = site
    page, _ = _open(chromium, out / "index.html")
    rows = page.locator("tr.case-row")
    assert rows.count() == 6
    step_case = gpu_timed_profiles()[STEP_CASE].case
    assert [rows.nth(i).get_attribute("data-kernel") for i in range(2)] == [step_case, step_case]
    assert page.locator("tr.case-row svg.sparkline").count() == 6
    page.select_option("#filter-uuid", "GPU-bbbb-0002")
    assert page.locator("tr.case-row:visible").count() == 3
    page.fill("#filter-kernel", step_case.rsplit("[", 1)[-1].rstrip("]"))
    assert page.locator("tr.case-row:visible").count() == 1
    assert page.locator("#shown").inner_text() == "1 of 6 series"
    page.screenshot(path=str(artifacts / "index-filtered.png"), full_page=True)
    page.close()


def test_a_site_built_from_a_store_loads_and_marks_its_step(chromium, history_url, tmp_path, artifacts):
    ids = record_stepped_history(history_url)
    out = tmp_path / "site"
    assert main(["site", str(out), "--history", history_url]) == 0
    pages = [out / "index.html", *sorted((out / "cases").glob("*.html"))]
    assert len(pages) == 1 + STEPPED_HISTORY_CASES
    backend = history_url.split(":", 1)[0]
    for path in pages:
        page, problems = _open(chromium, path)
        assert problems == [], path.name
        if path.name == "index.html":
            assert page.locator("tr.case-row").count() == STEPPED_HISTORY_CASES
            assert page.locator("tr.case-row").first.get_attribute("data-kernel") == case_name(STEPPED_CASE)
            page.screenshot(path=str(artifacts / f"store-{backend}-index.png"), full_page=True)
        else:
            assert page.locator("svg.case-plot circle.point").count() == STEPPED_HISTORY_RUNS
        page.close()
    page, _ = _open(chromium, out / "cases" / case_page_name(case_name(STEPPED_CASE)))
    mark = page.locator("line.step.slower")
    assert mark.count() == 1 and page.locator("line.step").count() == 1
    assert mark.get_attribute("data-after-run") == str(ids[STORE_STEP_AT])  # the first slow run
    page.screenshot(path=str(artifacts / f"store-{backend}-stepped-case.png"), full_page=True)
    page.close()


# --- issue 45: a dashboard that does not contradict itself (maintainers/support/dashboard_history.py's 20 runs) -------


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    """The site of the dashboard history (a SQLite store): 20 runs, case 2 3% slower and failing from run 7 on, case 4
    4% slower and accepted at run 12, run 15 recorded as failed; (its folder, {run number: run id})."""
    folder = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{folder / 'history.sqlite'}"
    ids = record_dashboard_history(url)
    assert main(["site", str(folder / "site"), "--history", url]) == 0
    return folder / "site", ids


def _overlapping(boxes: list[dict]) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes[i + 1:], i + 1)
            if a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]]


def test_no_two_x_labels_of_a_chart_overlap_nor_two_step_labels(chromium, dashboard, site):
    for out in (dashboard[0], site[0]):
        for path in sorted((out / "cases").glob("*.html")):
            page, _ = _open(chromium, path)
            boxes = {kind: [label.bounding_box() for label in page.locator(f"svg.case-plot text.{kind}").all()]
                     for kind in ("x-tick", "step-label")}
            assert len(boxes["x-tick"]) >= 5 and _overlapping(boxes["x-tick"]) == [], path.name
            assert _overlapping(boxes["step-label"]) == [], path.name  # two GPUs' one step: one label
            page.close()


def _rows_by_case(page) -> dict[str, object]:
    return {row.get_attribute("data-kernel"): row for row in page.locator("tr.case-row").all()}


def _ratio(page, row) -> float:
    headers = page.locator("tr:has(th) th").all_inner_texts()
    return float(row.locator("td").nth(headers.index("latest / reference")).inner_text())


def test_the_index_ratio_is_the_newest_run_over_the_reference_before_its_open_step(chromium, dashboard, site):
    page, _ = _open(chromium, dashboard[0] / "index.html")
    rows = _rows_by_case(page)
    failing = rows[case_name(DASH_STEPPED)]
    assert failing.get_attribute("data-state") == "failing" and "slower" in failing.inner_text()
    assert 1.02 < _ratio(page, failing) < 1.04  # 3% over runs 1-6, not 1.000 over the failed runs 7-19
    assert 0.99 < _ratio(page, rows[case_name(ACCEPTED_CASE)]) < 1.01  # over its accepted level: no longer news
    page.close()
    page, _ = _open(chromium, site[0] / "index.html")
    stepped = [row for row in page.locator("tr.case-row").all()
               if row.get_attribute("data-kernel") == gpu_timed_profiles()[STEP_CASE].case]
    assert len(stepped) == 2 and all(row.get_attribute("data-state") == "open step" for row in stepped)
    for row in stepped:  # an open step, not failing: the reference is before it too
        assert 1.02 < _ratio(page, row) < 1.04
    page.close()


def _height(locator) -> float:
    """The height of an SVG element's geometry as the browser lays it out (Playwright's bounding box adds the stroke's
    miter allowance: 4.8 px for a 1.2 px line)."""
    return locator.evaluate("element => element.getBBox().height * element.getScreenCTM().d")


def test_the_sparklines_share_one_scale_so_noise_looks_smaller_than_a_step(chromium, dashboard):
    page, _ = _open(chromium, dashboard[0] / "index.html")
    rows = _rows_by_case(page)
    stepped = _height(rows[case_name(DASH_STEPPED)].locator("svg.sparkline polyline"))
    assert stepped > 4
    for number in range(CASES):
        if number not in (DASH_STEPPED, ACCEPTED_CASE):  # within 0.3% of their level: a tenth of the 3% step
            assert _height(rows[case_name(number)].locator("svg.sparkline polyline")) < stepped / 3, number
    page.close()


def test_failed_accepted_and_run_failed_runs_are_marked_on_the_sparklines_and_the_charts(chromium, dashboard):
    out, ids = dashboard
    page, _ = _open(chromium, out / "index.html")
    rows = _rows_by_case(page)

    def marked(number: int, state: str) -> list[str]:
        return [mark.get_attribute("data-run")
                for mark in rows[case_name(number)].locator(f'svg.sparkline [data-state="{state}"]').all()]

    assert marked(DASH_STEPPED, "failed") == [str(ids[run]) for run in range(STEP_RUN, DASH_RUNS + 1)]
    assert marked(ACCEPTED_CASE, "accepted") == [str(ids[ACCEPTED_RUN])]
    for number in range(CASES):
        if number != DASH_STEPPED:  # its run 15 failed as a case: the red mark, above
            assert marked(number, "run failed") == [str(ids[FAILED_RUN])], number
    page.close()
    for number in range(CASES):  # and the chart of each case's page
        chart, _ = _open(chromium, out / "cases" / case_page_name(case_name(number)))
        states = dict(chart.locator("svg.case-plot .point").evaluate_all(
            "marks => marks.map(mark => [mark.dataset.run, mark.dataset.state])"))
        assert states[str(ids[FAILED_RUN])] == ("failed" if number == DASH_STEPPED else "run failed")
        chart.close()


def test_no_page_is_wider_than_a_1280_px_window(chromium, dashboard, site):
    for out in (dashboard[0], site[0]):
        for path in [out / "index.html", *sorted((out / "cases").glob("*.html"))]:
            page, _ = _open(chromium, path)
            width, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert window == 1280 and width <= window, f"{path.name}: {width} px wide"
            page.close()
