"""`python -m harness.compare OLD NEW`: verdicts and the report from two saved runs, no GPU needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "baselines" / "NVIDIA_H200" / "0002_h200-f7a0fb6.json"
SLOWED_CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"


pytestmark = pytest.mark.slow  # harness.compare in processes of its own: run by CI's second pass (tox -e unit -- -m slow)


def compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.compare", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_the_committed_baseline_against_itself_is_same_everywhere(tmp_path):
    result = compare(COMMITTED, COMMITTED, "--report", tmp_path / "report.md")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "86 same"
    assert (tmp_path / "report.md").read_text().count("| same |") == 86


def test_one_case_slowed_ten_percent_is_the_one_regression(tmp_path):
    doc = json.loads(COMMITTED.read_text())
    bench = next(b for b in doc["benchmarks"] if b["fullname"] == SLOWED_CASE)
    bench["stats"]["data"] = [1.10 * x for x in bench["stats"]["data"]]
    slowed = tmp_path / "slowed.json"
    slowed.write_text(json.dumps(doc))
    result = compare(COMMITTED, slowed)
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "1 slower, 85 same"
    regressed = [line for line in result.stdout.splitlines() if "**slower**" in line]
    assert len(regressed) == 1 and "warptile_128x256" in regressed[0] and "1.100×" in regressed[0]


def test_an_unusable_file_is_exit_status_two_with_the_reason(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"benchmarks": [')
    result = compare(COMMITTED, broken)
    assert result.returncode == 2
    assert "broken.json" in result.stderr and "Traceback" not in result.stderr
