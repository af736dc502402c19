"""maintainers/checks/nightly_time.py: the nightly's wall time per test family, from pytest's JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from maintainers.checks import nightly_time

CASES = [  # (module, name, seconds): one or more of every family, and one the table does not know
    ("suites.test_perf_matmul", "test_matmul_host_routine_time[naive-pinned]", 0.25),
    ("suites.test_perf_matmul", "test_matmul_time[naive-8192x8192x8192]", 2.0),
    ("suites.test_perf_matmul", "test_matmul_time[tiled32-1024x1024x1024]", 0.5),
    ("suites.test_perf_elementwise", "test_add_time[cupy_add-1024x1024]", 0.125),
    ("suites.test_perf_elementwise", "test_vector_add_streams_time[chunks=4]", 3.0),
    ("suites.test_matmul_correctness", "test_matmul_propagates_nan_and_inf[naive-1x1x1]", 4.5),
    ("suites.test_matmul_correctness", "test_matmul_matches_float64[naive-uniform-1x1x1]", 0.0625),
    ("suites.test_matmul_correctness", "test_kahan_max_error_is_ten_times_below_plain[1000]", 1.0),
    ("suites.test_host_routines", "test_matmul_host_routine_matches_float64[naive-pinned]", 0.375),
    ("suites.test_elementwise_correctness", "test_vector_add_streams_is_exact[4]", 0.75),
    ("suites.test_verdict_gpu", "test_kernel_doing_its_work_twice_is_flagged", 1.5),
    ("suites.test_new_thing", "test_something", 0.5),
]


def write_junit(path, cases=CASES):
    suite = ET.Element("testsuite")
    for module, name, seconds in cases:
        ET.SubElement(suite, "testcase", classname=module, name=name, time=str(seconds))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path)
    return path


@pytest.mark.parametrize(("module", "name", "family"), [
    ("suites.test_perf_matmul", "test_matmul_host_routine_time[naive-pinned]", "host routines, timed"),
    ("suites.test_perf_matmul", "test_matmul_time[naive-1000x1000x1000]", "matmul, timed"),
    ("suites.test_matmul_correctness", "test_matmul_propagates_nan_and_inf[x]", "matmul NaN/Inf propagation"),
    ("suites.test_matmul_correctness", "test_negative_control_fails_the_checks", "matmul correctness"),
    ("suites.test_host_routines", "test_matmul_host_routine_matches_float64[a]", "host routines, correctness"),
    ("suites.test_elementwise_correctness", "test_vector_add_streams_is_exact[1]", "elementwise correctness"),
    ("suites.test_perf_elementwise", "test_vector_add_streams_time[chunks=1]", "streams, timed"),
    ("suites.test_perf_elementwise", "test_something_new", "other"),
])
def test_each_test_has_the_family_of_its_module_and_function(module, name, family):
    assert nightly_time.family_of(module, name) == family


def test_table_sums_each_family_and_leaves_the_rest_to_the_session(tmp_path):
    table = nightly_time.family_table(nightly_time.test_times(write_junit(tmp_path / "run.xml")), wall=20.0)
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("|")]
    rows = {row[0]: row for row in cells}
    assert rows["matmul, timed"][1:3] == ["2", "2.5"]
    assert rows["matmul correctness"][1:3] == ["2", "1.1"]  # the NaN test has a family of its own
    assert rows["matmul NaN/Inf propagation"][1:3] == ["1", "4.5"]
    assert rows["other"][1:3] == ["1", "0.5"]
    total = sum(seconds for _, _, seconds in CASES)
    assert rows["all tests"][1:3] == [str(len(CASES)), f"{total:.1f}"]
    assert rows["session (start-up, collection, report)"][2] == f"{20.0 - total:.1f}"
    assert "**20.0**" in rows["**wall**"][2]
    assert "test_matmul_time[naive-8192x8192x8192] (2.00 s)" in rows["matmul, timed"][3]


def test_without_a_wall_time_no_session_row(tmp_path):
    table = nightly_time.family_table(nightly_time.test_times(write_junit(tmp_path / "run.xml")))
    assert "session" not in table and "wall" not in table


def test_slowest_tests_are_listed_per_family_slowest_first(tmp_path):
    table = nightly_time.family_table(nightly_time.test_times(write_junit(tmp_path / "run.xml")), slowest=2)
    line = next(line for line in table.splitlines() if line.startswith("matmul, timed: "))
    assert line.index("naive-8192") < line.index("tiled32-1024")


def test_reads_a_junit_file(tmp_path, capsys):
    assert nightly_time.main(["--junit", str(write_junit(tmp_path / "run.xml")), "--wall", "30"]) == 0
    assert "| **wall** | | **30.0** | |" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--junit", "no-such.xml"], ["--wall", "3"], ["--junit", "x.xml", "--", "-k", "y"]])
def test_bad_arguments_exit_2(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.xml").write_text("<testsuites/>")
    with pytest.raises(SystemExit) as exit_info:
        nightly_time.main(argv)
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err
