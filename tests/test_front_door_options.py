"""The front door without a GPU: options that name a run, a ref or a store are checked first (exit 4),
a run of skipped GPU tests says so under -q, and kernelwatch.compare says what it could judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch.compare import main as compare_main
from tests.pytest_runs import no_gpu_conftest, run_pytest

ROOT = Path(__file__).resolve().parents[1]
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
