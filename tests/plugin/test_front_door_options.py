"""The front door without a GPU: options that name a run, a ref or a store are checked first (exit 4),
a run of skipped GPU tests says so under -q, and kernelwatch.compare says what it could judge."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kernelwatch.compare import main as compare_main
from tests.support.pytest_runs import no_gpu_conftest, run_pytest

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "baselines" / "NVIDIA_H200"


def pytest_suites(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # the suites' perf files only: what the options do shows there, and the run stays short. An empty
    # CUDA_VISIBLE_DEVICES hides the GPU of a machine that has one, so these tests judge the no-GPU path on
    # a kernel developer's workstation too (they failed there before, 8 of them, on the H200)
    return run_pytest(ROOT, ["suites/test_perf_elementwise.py", "-q", "-p", "no:cacheprovider", *args],
                      env={"CUDA_VISIBLE_DEVICES": "", **(env or {})})


@pytest.mark.parametrize("args, named", [
    (["--benchmark-compare=9999"], "0005_h200-5fcc19b.json"),  # the choices are listed
    (["--kernelwatch-compare-ref", "no-such-ref"], "no-such-ref"),
    (["--kernelwatch-history", "notadb://x"], "SQLite or PostgreSQL only"),
])
def test_an_unknown_run_ref_or_store_is_exit_4_on_a_machine_without_a_gpu(args, named):
    result = pytest_suites(*args)
    assert result.returncode == 4, result.stdout + result.stderr
    assert named in result.stdout + result.stderr


@pytest.mark.parametrize("args, flag", [
    (["--benchmark-compare=0005"], "--benchmark-compare"),  # a run that exists: it is the GPU that is missing
    (["--benchmark-compare"], "--benchmark-compare"),
    (["--benchmark-save=x"], "--benchmark-save"),
    (["--kernelwatch-compare-ref", "HEAD"], "--kernelwatch-compare-ref"),
    (["--kernelwatch-history", "sqlite:///never.sqlite"], "--kernelwatch-history"),
])
def test_verdicts_a_baseline_an_ab_or_a_record_asked_for_without_a_gpu_are_exit_4_naming_what(args, flag):
    result = pytest_suites(*args)
    assert result.returncode == 4, result.stdout + result.stderr
    words = result.stdout + result.stderr
    assert f"{flag} asks for what only a GPU can give" in words and "no usable CUDA GPU" in words
    assert not (ROOT / "never.sqlite").exists()


@pytest.mark.parametrize("args, flag", [(["--kernelwatch-accept-slowdown", "meant"], "--kernelwatch-accept-slowdown"),
                                        (["--kernelwatch-compare-ref-all"], "--kernelwatch-compare-ref-all")])
def test_a_flag_without_the_flag_it_needs_is_exit_4(args, flag):
    result = pytest_suites(*args)
    assert result.returncode == 4
    assert f"{flag} works only with --kernelwatch-compare-ref REF" in result.stdout + result.stderr


def test_an_energy_verdict_without_energy_measured_is_exit_4():
    for verdict in ("report", "fail"):  # either setting judges an energy that --kernelwatch-energy=none never measures
        result = pytest_suites("--kernelwatch-energy-verdict", verdict, "--kernelwatch-energy=none")
        assert result.returncode == 4, result.stdout + result.stderr
        assert (f"--kernelwatch-energy-verdict {verdict} judges the energy measured, and --kernelwatch-energy=none "
                f"measures none") in result.stdout + result.stderr
    assert pytest_suites("--kernelwatch-energy=none").returncode == 0


def _not_a_folder(tmp_path: Path) -> Path:
    (tmp_path / "a-file").write_text("")
    return tmp_path / "a-file" / "report.md"


@pytest.mark.parametrize("where, words", [(lambda tmp_path: Path("/proc/kernelwatch/report.md"), "cannot write in /proc"),
                                          (_not_a_folder, "is no folder")], ids=["proc", "under-a-file"])
def test_a_report_path_that_cannot_be_written_is_exit_4_before_anything_runs(tmp_path, where, words):
    # without a GPU nothing is compared and no report would be written: the run passed, the report never came
    path = where(tmp_path)
    result = pytest_suites("--kernelwatch-report", str(path))
    words_seen = result.stdout + result.stderr
    assert result.returncode == 4, words_seen
    line = next(line for line in words_seen.splitlines() if line.startswith("ERROR: "))
    assert line.startswith(f"ERROR: --kernelwatch-report {path} cannot be written: ") and words in line
    assert "skipped" not in words_seen  # refused before any test ran


def test_a_report_path_in_a_folder_still_to_be_made_is_fine(tmp_path):
    assert pytest_suites("--kernelwatch-report", str(tmp_path / "new" / "folder" / "r.md")).returncode == 0
    assert not (tmp_path / "new").exists()  # checked, not made: the run compared nothing and wrote no report


def test_a_json_file_without_a_gpu_is_exit_4_and_no_empty_file_is_left(tmp_path):
    # the timings of a run only a GPU can give: an empty file that looks like a result is no answer
    result = pytest_suites(f"--benchmark-json={tmp_path / 'run.json'}")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--benchmark-json asks for what only a GPU can give" in result.stdout + result.stderr
    assert not (tmp_path / "run.json").exists()


def test_a_json_file_that_cannot_be_opened_is_exit_4_naming_it():
    result = pytest_suites("--benchmark-json=/proc/kernelwatch/run.json")  # pytest-benchmark opens it when parsing
    assert result.returncode == 4 and "--benchmark-json" in result.stdout + result.stderr


def test_only_an_empty_file_that_pytest_benchmark_opened_is_discarded(tmp_path):
    from kernelwatch.plugin.options import discard_unwritten_json

    def discard(handle) -> None:
        discard_unwritten_json(types.SimpleNamespace(option=types.SimpleNamespace(benchmark_json=handle)))
        handle.close()

    empty = tmp_path / "empty.json"
    discard(open(empty, "wb"))  # noqa: SIM115
    assert not empty.exists()
    written = tmp_path / "written.json"
    written.write_text("{}")
    discard(open(written, "ab"))  # noqa: SIM115
    assert written.read_text() == "{}"  # a file with something in it is never removed
    discard(open(os.devnull, "wb"))  # noqa: SIM115
    assert Path(os.devnull).exists()  # nor anything that is no regular file
    discard_unwritten_json(types.SimpleNamespace(option=types.SimpleNamespace()))  # pytest-benchmark not loaded
    discard(types.SimpleNamespace(name="<stdout>", close=lambda: None))  # --benchmark-json - : standard output


@pytest.mark.parametrize("args, env, named", [
    ([], {"KERNELWATCH_THRESHOLD": "abc"}, "$KERNELWATCH_THRESHOLD='abc' is not a number"),
    (["--kernelwatch-threshold", "abc"], {}, "--kernelwatch-threshold='abc' is not a number"),
    (["--kernelwatch-threshold", "abc"], {"KERNELWATCH_THRESHOLD": "2%"}, "--kernelwatch-threshold='abc' is not a number"),
], ids=["variable", "option", "option-over-variable"])
def test_a_threshold_that_is_no_fraction_is_exit_4_naming_where_it_came_from(args, env, named):
    result = pytest_suites(*args, env=env)
    assert result.returncode == 4
    line = next(line for line in (result.stdout + result.stderr).splitlines() if line.startswith("ERROR: "))
    assert line.startswith(f"ERROR: {named}; use a fraction like 0.05 or 5%")


def test_a_pull_request_run_without_compare_ref_is_exit_4():
    result = pytest_suites(env={"KERNELWATCH_PULL_REQUEST": "1"})
    assert result.returncode == 4
    assert "pass --kernelwatch-compare-ref REF, e.g. --kernelwatch-compare-ref origin/main" in result.stdout + result.stderr


@pytest.mark.parametrize("value, words", [("notaurl", "is neither a path nor a URL"),
                                          ("/nonexistent/dir/h.sqlite", "does not exist"),
                                          ("host=h password=hunter2", "libpq connection string")])
def test_a_history_value_that_names_no_store_is_exit_4_on_any_machine(value, words):
    result = pytest_suites("--kernelwatch-history", value)
    assert result.returncode == 4 and words in result.stdout + result.stderr
    assert "hunter2" not in result.stdout + result.stderr


def test_skipped_gpu_tests_are_counted_with_their_reason_under_q():
    result = pytest_suites()
    assert result.returncode == 0
    line = next(line for line in result.stdout.splitlines() if line.startswith("kernelwatch: "))
    assert "GPU tests skipped: needs a CUDA GPU: " in line and "--kernelwatch-require-gpu" in line
    assert int(line.split()[1]) > 0


def test_the_skipped_gpu_tests_counted_are_those_left_after_deselection():
    result = pytest_suites("-k", "vector_add")  # the count is taken after -k has deselected the others
    assert result.returncode == 0
    line = next(line for line in result.stdout.splitlines() if line.startswith("kernelwatch: "))
    summary = result.stdout.strip().splitlines()[-1]  # "12 skipped, 30 deselected in 1.2s"
    assert "deselected" in summary
    assert f"{line.split()[1]} skipped" in summary


MIXED = """
import pytest


def test_on_the_cpu():
    pass


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 2])
def test_on_a_gpu(n):
    pass
"""


def test_without_a_gpu_only_the_gpu_tests_are_skipped_and_counted_and_the_others_run(tmp_path):
    (tmp_path / "conftest.py").write_text(no_gpu_conftest("no GPU in this folder"))
    (tmp_path / "test_mixed.py").write_text(MIXED)
    result = run_pytest(tmp_path, ["-q", "-p", "no:cacheprovider"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 2 skipped" in result.stdout
    assert "kernelwatch: 2 GPU tests skipped: needs a CUDA GPU: no GPU in this folder." in result.stdout


@pytest.mark.gpu
def test_a_gpu_test_runs_only_where_cuda_can_use_a_gpu():
    # this run's own plugin skips it on a machine without one, as it skips the suites' GPU tests there
    from kernelwatch.timing.gpu import cuda_available

    assert cuda_available() == (True, "")


def test_require_gpu_makes_a_missing_gpu_an_error_naming_the_reason():
    result = pytest_suites("--kernelwatch-require-gpu")
    assert result.returncode == 4
    assert "no usable CUDA GPU on this machine" in result.stdout + result.stderr


def compare(*paths) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelwatch.compare", *map(str, paths)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow  # kernelwatch.compare in subprocesses: CI's second pass (tox -e unit -- -m slow)
def test_compare_of_two_gpus_runs_leads_with_how_many_cases_it_could_judge_and_refuses_to_pass_on_so_few():
    # both files name the host "vm" and differ by GPU: "other GPU", not "other host"
    result = compare(RUNS / "0004_h200-46c5004.json", RUNS / "0005_h200-5fcc19b.json")
    assert result.returncode == 2, result.stderr
    assert result.stdout.splitlines()[0] == "8 of 86 cases judged; not judged: 24 other GPU, 54 other timer"
    assert "under 50%, too few to pass the comparison (--allow-partial accepts it)" in result.stderr
    assert compare(RUNS / "0004_h200-46c5004.json", RUNS / "0005_h200-5fcc19b.json", "--allow-partial").returncode == 0


@pytest.mark.slow  # kernelwatch.compare in subprocesses: CI's second pass (tox -e unit -- -m slow)
def test_compare_takes_run_numbers_of_a_baselines_folder():
    result = compare("2", "3", "--in", RUNS, "--allow-partial")
    assert result.returncode == 0 and result.stdout.startswith("4 of 86 cases judged")
    missing = compare("5", "9", "--in", RUNS)
    assert missing.returncode == 2 and "holds no run 0009 (its runs: 0001_h200-34b7857.json" in missing.stderr


def test_compare_of_a_file_with_itself_says_so(capsys):
    path = RUNS / "0005_h200-5fcc19b.json"
    compare_main([str(path), str(path)])  # in this process: the subprocess forms above are marked slow
    assert "was compared with itself" in capsys.readouterr().out.splitlines()[1]


def test_compare_in_which_no_case_can_be_judged_is_exit_2(tmp_path, capsys):
    import json

    doc = json.loads((RUNS / "0005_h200-5fcc19b.json").read_text())
    for bench in doc["benchmarks"]:
        bench["extra_info"]["timer"] = "cuda events"  # another timer for every case: none comparable
    other = tmp_path / "other-timer.json"
    other.write_text(json.dumps(doc))
    code = compare_main([str(RUNS / "0005_h200-5fcc19b.json"), str(other)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out.splitlines()[0].startswith("0 of 86 cases judged")
    assert "no case could be judged" in err
