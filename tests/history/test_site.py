"""The dashboard's files, read as text (the browser test reads them as a person would)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from harness.history.site import case_page_name, write_site
from harness.history.steps import detect_all
from tests.history.h200_histories import case_profiles, gpu_timed_profiles, relative_medians, synthetic_series


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
    assert "<td>2.000</td>" in index


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
