"""maintainers/experiments/replay_verdicts.py on synthetic sensitivity runs: it judges with the suite's own rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sensitivity_runs import QUIET, write_run

ROOT = Path(__file__).resolve().parents[2]
MODULE = "maintainers.experiments.replay_verdicts"
SHORT = "suites/test_perf_elementwise.py::test_add_time[1024x1024-vector_add]"


pytestmark = pytest.mark.slow  # recorded sensitivity runs replayed: run by CI's second pass (tox -e unit -- -m slow)


def replay(folder: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", MODULE, str(folder), "--draws", "5", *options],
                          capture_output=True, text=True, cwd=ROOT)


def rows(stdout: str) -> dict[str, list[str]]:
    cells = ([cell.strip() for cell in line.strip("|").split("|")] for line in stdout.splitlines()
             if line.startswith("| test_") or line.startswith("| **all"))
    return {row[0]: row[1:] for row in cells}


def test_a_3_percent_slowdown_of_a_quiet_case_is_caught_and_nothing_unmodified_is_flagged(tmp_path):
    for i in range(5):  # processes 0.2% apart
        write_run(tmp_path, f"same-{i + 1}", {QUIET: 448e-6 * (1 + 0.002 * (i - 2)), SHORT: 5e-6}, seed=i)
        write_run(tmp_path, f"slowed-{i + 1}", {QUIET: 448e-6 * 1.03 * (1 + 0.002 * (i - 2)), SHORT: 5e-6},
                  seed=10 + i)
    result = replay(tmp_path, "--baseline-runs", "3")
    assert result.returncode == 0, result.stderr
    table = rows(result.stdout)
    assert table["test_matmul_time[1024x1024x1024-row_shared]"] == ["0 of 10", "0 of 25"]
    assert "test_add_time[1024x1024-vector_add]" not in table, "cases under 50 µs are left out"


def test_a_floor_above_the_slowdown_misses_every_slowed_run(tmp_path):
    for i in range(3):
        write_run(tmp_path, f"same-{i + 1}", {QUIET: 448e-6}, seed=i)
        write_run(tmp_path, f"slowed-{i + 1}", {QUIET: 448e-6 * 1.03}, seed=10 + i)
    table = rows(replay(tmp_path, "--baseline-runs", "1", "--floor", "0.04").stdout)
    assert table["**all**"] == ["0 of 10", "15 of 15"]


def test_more_baseline_runs_than_the_folder_holds_is_an_error(tmp_path):
    for i in range(2):
        write_run(tmp_path, f"same-{i + 1}", {QUIET: 448e-6}, seed=i)
    write_run(tmp_path, "slowed-1", {QUIET: 448e-6 * 1.03}, seed=9)
    result = replay(tmp_path, "--baseline-runs", "2")
    assert result.returncode == 2 and "--baseline-runs must be 1 to 1" in result.stderr


def test_against_the_sensitivity_steps_own_baselines_every_run_is_judged_once(tmp_path):
    for i in range(3):
        write_run(tmp_path, f"scratch-baseline-{i + 1}", {QUIET: 448e-6 * (1 + 0.001 * (i - 1))}, seed=20 + i)
    for i in range(4):
        write_run(tmp_path, f"same-{i + 1}", {QUIET: 448e-6}, seed=i)
        write_run(tmp_path, f"slowed-{i + 1}", {QUIET: 448e-6 * 1.03}, seed=10 + i)
    result = replay(tmp_path, "--against", "scratch-baseline")
    assert result.returncode == 0, result.stderr
    assert "against the 3 scratch-baseline runs" in result.stdout
    assert rows(result.stdout)["**all**"] == ["0 of 4", "0 of 4"]
