"""The suite's pytest plugin driven end to end on a CPU, with the fake GPU of tests/plugins/fake_gpu.py.

Each test runs pytest in a subprocess on a small timed suite: save, compare,
slowed cases, corrupt or missing baselines, two saves at once, a failed test,
unwritable folders, --kernelwatch-require-gpu.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_suite import FAILING, FOLDER, SUITE, output, run, saved
from tests.support.git_repos import git_init
from tests.support.pytest_runs import clean_environment, no_gpu_conftest, run_pytest

ROOT = Path(__file__).resolve().parents[2]
def test_a_saved_run_compares_clean_with_itself_on_a_rerun(suite):
    assert run(suite, "--benchmark-save=first").returncode == 0
    assert saved(suite) == ["0001_first.json"]
    result = run(suite, "--benchmark-compare", "--fake-gpu-seed=1")
    assert result.returncode == 0, output(result)
    assert "3 same" in output(result)
    report = (suite / "report.md").read_text()
    assert "0001_first.json" in report and report.count("| same |") == 3


def test_a_storage_the_user_names_is_kept_even_where_it_sorts_before_pytest_benchmarks_default(suite):
    # only pytest-benchmark's own default (file://./.benchmarks) is replaced by the suite's baselines/;
    # "file://../elsewhere" sorts before it and is the user's choice
    work = suite / "work"
    work.mkdir()
    (work / "conftest.py").write_text((suite / "conftest.py").read_text())
    (work / "test_fake_suite.py").write_text((suite / "test_fake_suite.py").read_text())
    result = run(work, "--benchmark-storage=file://../elsewhere", "--benchmark-save=mine")
    assert result.returncode == 0, output(result)
    assert sorted(p.name for p in (suite / "elsewhere" / FOLDER).glob("*.json")) == ["0001_mine.json"]


def test_a_slowed_case_fails_its_own_test_and_the_report_says_so(suite):
    run(suite, "--benchmark-save=first")
    result = run(suite, "--benchmark-compare", "--fake-gpu-seed=1", "--fake-gpu-slowdown=*beta*:1.10")
    assert result.returncode == 1, output(result)
    assert "1 failed, 2 passed" in output(result)
    assert "performance regression" in output(result) and "test_time[beta]" in output(result)
    report = (suite / "report.md").read_text()
    assert "**slower**" in report and "1 slower" in report


def test_a_three_percent_slowdown_is_flagged_on_the_same_gpu_but_not_against_another(suite):
    run(suite, "--benchmark-save=first")
    same_gpu = run(suite, "--benchmark-compare", "--fake-gpu-seed=1", "--fake-gpu-slowdown=*alpha*:1.03")
    assert same_gpu.returncode == 1, output(same_gpu)
    other_gpu = run(suite, "--benchmark-compare", "--fake-gpu-seed=1", "--fake-gpu-slowdown=*alpha*:1.03",
                    "--fake-gpu-uuid=GPU-another-host")
    assert other_gpu.returncode == 0, output(other_gpu)


def test_a_run_with_a_failed_test_is_never_saved(suite):
    (suite / "test_failing.py").write_text(FAILING)
    result = run(suite, "--benchmark-save=broken")
    assert result.returncode == 1
    assert saved(suite) == []
    assert "not saved as a baseline: 1 test(s) failed" in output(result)


@pytest.mark.slow
def test_two_saves_at_once_get_two_numbers_and_lose_nothing(suite):
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               f"--benchmark-storage=file://{suite / 'baselines'}", "--benchmark-save=same-label"]
    env = clean_environment()
    processes = [subprocess.Popen(command, cwd=suite, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0].decode() for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    assert saved(suite) == ["0001_same-label.json", "0002_same-label.json"]


@pytest.mark.slow  # two pytest sessions per corrupt form: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("content", ["", "{}", '{"benchmarks": [', "[]"], ids=["empty", "object", "truncated", "list"])
def test_a_corrupt_newest_baseline_is_an_error_not_a_fallback(suite, content):
    run(suite, "--benchmark-save=good")
    (suite / "baselines" / FOLDER / "0002_bad.json").write_text(content)
    result = run(suite, "--benchmark-compare")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert "0002_bad.json" in output(result)


def test_a_named_baseline_that_does_not_exist_is_an_error(suite):
    run(suite, "--benchmark-save=good")
    result = run(suite, "--benchmark-compare=9999")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert "9999" in output(result)


def test_a_baseline_of_another_gpu_model_is_refused(suite):
    run(suite, "--benchmark-save=good")
    path = suite / "baselines" / FOLDER / "0001_good.json"
    doc = json.loads(path.read_text())
    doc["machine_info"]["gpu"]["name"] = "NVIDIA A100-SXM4-80GB"
    path.write_text(json.dumps(doc))
    result = run(suite, "--benchmark-compare")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "A100" in output(result)


def test_no_baseline_is_reported_with_a_command_that_exists(suite):
    result = run(suite, "--benchmark-compare")
    assert result.returncode == 0, output(result)
    assert "no baseline for Fake GPU 9000" in output(result)
    # the advice holds in any project (no tox environment of this repository's), and does what it says
    assert "by running the same tests with --benchmark-save=LABEL" in output(result)
    assert run(suite, "--benchmark-save=LABEL").returncode == 0
    assert [p.name for p in (suite / "baselines" / FOLDER).glob("*.json")] == ["0001_LABEL.json"]


def test_a_read_only_baselines_folder_is_a_clear_error_and_the_report_is_still_written(suite):
    run(suite, "--benchmark-save=first")
    folder = suite / "baselines" / FOLDER
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write to read-only folders (root)")
        result = run(suite, "--benchmark-compare", "--benchmark-save=second")
    finally:
        folder.chmod(0o755)
    assert result.returncode == 1, output(result)
    assert "Traceback" not in output(result)
    assert "cannot save" in output(result)
    assert (suite / "report.md").exists()


def test_a_report_path_that_is_a_folder_is_a_clear_error_before_anything_is_timed(suite):
    run(suite, "--benchmark-save=first")
    (suite / "report.md").mkdir()
    result = run(suite, "--benchmark-compare")
    assert result.returncode == 4, output(result)
    assert "Traceback" not in output(result) and " passed" not in output(result)
    assert f"--kernelwatch-report {suite / 'report.md'} cannot be written: it is a folder" in output(result)
    # the ini key's report (checked when written: a run that compares nothing writes none) fails the run at its end
    result = run_pytest(suite, ["-p", "no:cacheprovider", "-q", f"--benchmark-storage=file://{suite / 'baselines'}",
                                "-o", "kernelwatch_report=report.md", "--benchmark-compare"])
    assert result.returncode == 1, output(result)
    assert "Traceback" not in output(result) and "could not write the report" in output(result)


def test_require_gpu_fails_a_run_without_a_gpu(tmp_path):
    from kernelwatch.timing.gpu import cuda_available

    if cuda_available()[0]:
        pytest.skip("this machine has a GPU: the claim is about machines without one")
    (tmp_path / "conftest.py").write_text('')
    (tmp_path / "test_fake_suite.py").write_text(SUITE)
    (tmp_path / "baselines").mkdir()
    plain = run(tmp_path)
    assert plain.returncode == 0 and "3 skipped" in output(plain), output(plain)
    for args, env in ((["--kernelwatch-require-gpu"], None), ([], {"KERNELWATCH_REQUIRE_GPU": "1"})):
        result = run(tmp_path, *args, env=env)
        assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
        assert "no usable CUDA GPU" in output(result)


def test_a_device_hook_of_the_suites_own_conftest_answers_before_the_plugins_default(tmp_path):
    # the conftest is registered before the plugins it names: the default CudaDevice must still come last
    (tmp_path / "conftest.py").write_text(no_gpu_conftest("the conftest's own device"))
    (tmp_path / "test_fake_suite.py").write_text(SUITE)
    result = run(tmp_path, "--kernelwatch-require-gpu")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert "--kernelwatch-require-gpu: no usable CUDA GPU on this machine: the conftest's own device" in output(result)


def with_kernel_library(suite):
    """`suite` as a project whose pytest.ini names its kernel library (tests/plugin/test_kernel_library.py's
    tinylib), which --kernelwatch-compare-ref needs."""
    from tests.support.kernel_library import BASE, write_library

    write_library(suite, BASE)
    (suite / "pytest.ini").write_text("[pytest]\nkernelwatch_kernels = tinylib\n")
    return suite


def test_an_unknown_compare_ref_is_an_error_before_anything_runs(suite):
    with_kernel_library(suite)
    git_init(suite)  # the ref is looked up in the repository of the tests being run
    result = run(suite, "--kernelwatch-compare-ref", "no-such-branch-anywhere")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert "unknown git ref 'no-such-branch-anywhere'" in output(result)
    assert "Traceback" not in output(result)


def test_compare_ref_skips_cases_it_cannot_prepare_on_the_base_side_with_the_reason(suite):
    with_kernel_library(suite)  # the base side is that library at the ref
    git_init(suite)
    result = run(suite, "--kernelwatch-compare-ref", "HEAD", "-rs")
    assert result.returncode == 0, output(result)
    assert "3 skipped" in output(result) and "a plain run, which the base side cannot prepare" in output(result)


@pytest.mark.parametrize("option", ["--benchmark-save=pr", "--benchmark-autosave", "--benchmark-compare-fail=median:5%"],
                         ids=["save", "autosave", "compare-fail"])
def test_compare_ref_refuses_options_that_store_or_judge_against_a_baseline(suite, option):
    # the ref does not exist: the refusal must come first, before git is asked anything
    result = run(suite, "--kernelwatch-compare-ref", "no-such-branch-anywhere", option)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert f"--kernelwatch-compare-ref cannot be combined with {option.split('=')[0]}" in output(result)
    assert "unknown git ref" not in output(result) and "Traceback" not in output(result)
    assert saved(suite) == []


@pytest.mark.slow  # a pytest session in a subprocess: CI's second pass (tox -e unit -- -m slow)
def test_the_storage_folder_naming_is_restored_after_the_session(suite):
    script = ("import sys, pytest, pytest_benchmark.session as session\n"
              "original = session.get_machine_id\n"
              "code = pytest.main(sys.argv[1:])\n"
              "print('get_machine_id', 'restored' if session.get_machine_id is original else 'replaced', int(code))\n")
    command = [sys.executable, "-c", script, "-p", "no:cacheprovider", "-q",
               f"--benchmark-storage=file://{suite / 'baselines'}", "--benchmark-save=first"]
    result = subprocess.run(command, cwd=suite, capture_output=True, text=True, env=clean_environment(), timeout=120)
    assert "get_machine_id restored 0" in result.stdout, output(result)
    assert saved(suite) == ["0001_first.json"]  # while the session ran, the folder was named by the GPU model


SLOWDOWN_CONFTEST = '''
import dataclasses

from kernelwatch.timing.gpu import ClockState
from tests.plugins import fake_gpu

pytest_plugins = ["tests.plugins.fake_gpu", "tests.plugins.slowdown"]

fake_gpu.FakeDevice.clock_state = lambda self: ClockState({now}, 0)
_fake_info = fake_gpu.fake_info
fake_gpu.fake_info = lambda uuid: dataclasses.replace(_fake_info(uuid), sm_clock_max_mhz={maximum})
'''
FAKE_CASE_S = 100e-6  # the fake timer's median for the slowdown's own measurements (case "")


def first_spin_tried(result) -> list[int]:
    """The cycles of the first spin the calibration tried, from the failure naming each try (the
    message appears once more in the short summary under -ra, as CI runs it)."""
    tried = re.findall(r"test_time\[beta\] did not slow down by half of 50% at any spin tried "
                       r"\(0 cycles: [\d.]+ µs, (\d+) cycles", output(result))
    return sorted({int(cycles) for cycles in tried})


@pytest.mark.parametrize("now, maximum, clock_mhz", [(1500, 1980, 1500), (None, 1980, 1980)],
                         ids=["clock-now", "maximum-when-now-is-unknown"])
def test_the_slowdown_plugin_sizes_its_first_spin_from_the_sm_clock_now(suite, now, maximum, clock_mhz):
    (suite / "conftest.py").write_text(SLOWDOWN_CONFTEST.format(now=now, maximum=maximum))
    result = run(suite, "--slow-down=*beta*:50")
    # the fake timer's samples do not depend on the run: no spin slows it, and the slowed case fails
    assert result.returncode == 1, output(result)
    assert "1 failed" in output(result)
    assert "the timer does not see the spin" in output(result)
    assert first_spin_tried(result) == [pytest.approx(0.5 * FAKE_CASE_S * clock_mhz * 1e6, rel=0.01)]


def test_the_slowdown_plugin_refuses_a_gpu_whose_sm_clock_is_unknown(suite):
    (suite / "conftest.py").write_text(SLOWDOWN_CONFTEST.format(now=None, maximum=None))
    result = run(suite, "--slow-down=*beta*:50")
    assert result.returncode != 0
    assert "UsageError: --slow-down: the SM clock of Fake GPU 9000 is unknown" in output(result)
    assert "1 error" in output(result) and first_spin_tried(result) == []


@pytest.mark.slow
def test_under_xdist_the_workers_time_and_no_notice_says_benchmarks_are_disabled(suite):
    """pytest-benchmark turns itself off under xdist and says so; the suite turns it back on in
    each worker, so that notice must not be printed, and the run must still save every case."""
    result = run(suite, "-n", "2", "--benchmark-save=two-workers")
    assert result.returncode == 0, output(result)
    assert "automatically disabled" not in output(result)
    saved_run = json.loads((suite / "baselines" / FOLDER / "0001_two-workers.json").read_text())
    assert len(saved_run["benchmarks"]) == 3


PROBE = """

def pytest_sessionstart(session):
    (session.config.rootpath / "compare-flag.txt").write_text(repr(session.config.option.benchmark_compare))
"""


def test_the_suite_judges_against_the_baseline_and_pytest_benchmark_is_left_no_compare_of_its_own(suite):
    run(suite, "--benchmark-save=first")
    (suite / "conftest.py").write_text((suite / "conftest.py").read_text() + PROBE)
    result = run(suite, "--benchmark-compare", "--fake-gpu-seed=1")
    assert result.returncode == 0, output(result)
    assert (suite / "compare-flag.txt").read_text() == "False" and "3 same" in output(result)
