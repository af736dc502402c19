"""maintainers/device/summarize.py reads the error figures the correctness suite leaves in JUnit XML."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="suites.test_matmul_correctness" name="test_matmul_matches_float64[naive-uniform-1000x1000x1000]">
<properties><property name="max_error" value="2.2e-06" /><property name="avg_error" value="3.36e-07" /></properties>
</testcase>
<testcase classname="suites.test_matmul_correctness" name="test_matmul_matches_float64[naive_kahan-normal-4096x4096x4096]">
<properties><property name="max_error" value="7.01e-09" /><property name="avg_error" value="6.88e-10" /></properties>
</testcase>
<testcase classname="suites.test_matmul_correctness" name="test_matmul_matches_float64[naive-uniform-17x17x17]">
<properties><property name="max_error" value="1e-07" /><property name="avg_error" value="1e-08" /></properties>
</testcase>
</testsuite></testsuites>
"""


def test_the_error_table_has_the_rows_of_the_table_sizes_only(tmp_path):
    path = tmp_path / "correctness.xml"
    path.write_text(JUNIT)
    result = subprocess.run([sys.executable, "-m", "maintainers.device.summarize", "--errors", str(path)], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows == ["| naive | 1000 | uniform | 2.20e-06 | 3.36e-07 |",
                    "| naive_kahan | 4096 | normal | 7.01e-09 | 6.88e-10 |"]
