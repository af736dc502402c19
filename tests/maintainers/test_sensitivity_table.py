"""maintainers/experiments/sensitivity_table.py on recorded-like runs: counts, exit status, and the split of a
slowed ratio into the process's offset and the injected slowdown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernelwatch.verdict.labels import SAME, SLOWER
from kernelwatch.verdict.record import CaseRecord

ROOT = Path(__file__).resolve().parents[2]
MODULE = "maintainers.experiments.sensitivity_table"
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-row_shared]"
BASE = 448.6e-6


def run_file(folder: Path, name: str, median: float, verdict: str, **params) -> None:
    record = CaseRecord(case=CASE, median_s=median, samples=[median] * 3, verdict=verdict, ratio=median / BASE,
                        detectable=0.02, params=params)
    bench = {"name": CASE.split("::")[-1], "fullname": CASE, "stats": {"data": record.samples},
             "extra_info": record.to_extra_info()}
    (folder / f"{name}.json").write_text(json.dumps({"benchmarks": [bench]}))


def table(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", MODULE, str(folder)], capture_output=True, text=True, cwd=ROOT)


def test_a_missed_slowdown_is_split_into_the_process_offset_and_the_injection(tmp_path):
    run_file(tmp_path, "same-1", 447.0e-6, SAME)
    run_file(tmp_path, "same-2", 448.0e-6, SAME)
    # the process read the case 1.1% below the baseline before the spin; the spin added 3%
    before = 443.7e-6
    run_file(tmp_path, "slowed-1", before * 1.03, SAME, slowed_by_percent=3.0, unslowed_median_s=before,
             spin_cycles=26000)
    run_file(tmp_path, "slowed-2", 462.0e-6, SLOWER, slowed_by_percent=3.0, unslowed_median_s=448.5e-6,
             spin_cycles=26000)
    result = table(tmp_path)
    assert result.returncode == 1, "a slowed case of 50 µs or more was missed"
    row = next(line for line in result.stdout.splitlines() if line.startswith("| test_matmul_time"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[3] == "1/2" and cells[5] == "0/2"
    assert cells[7] == "0.989-1.000"  # before the spin, of the baseline
    assert cells[8] == "+3.0% to +3.0%"  # added by the spin


def test_every_slowdown_flagged_and_no_false_alarm_exits_0(tmp_path):
    run_file(tmp_path, "same-1", 448.0e-6, SAME)
    run_file(tmp_path, "slowed-1", 462.0e-6, SLOWER)  # a record without its injection: no split
    result = table(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("| — | — |")


def test_a_case_whose_slowed_test_failed_before_timing_counts_as_missed(tmp_path):
    # host W: the slowdown plugin failed cupy_add 8192²'s slowed test in all 10 runs, so the
    # slowed runs held one case fewer; every case present was flagged, and the table said 0 missed
    run_file(tmp_path, "same-1", 448.0e-6, SAME)
    (tmp_path / "slowed-1.json").write_text(json.dumps({"benchmarks": []}))
    result = table(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "| slowed 1 | 0 | 0 | 0 | 0 | 1 |" in result.stdout
    assert f"{CASE}: not timed in 1 slowed run(s)" in result.stdout
