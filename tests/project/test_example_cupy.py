"""examples/cupy end to end, as a project of its own: copied to a folder outside this repository, made a git
repository, and run by pytest there (the installed kernelwatch's entry point loads the plugin).

Without a GPU its test skips with the reason and `--benchmark-compare` is refused (exit 4). On the fake GPU
(tests/plugins/fake_gpu.py, with its NumPy-backed CuPy: the example's own RawKernel runs on the CPU) with
`--benchmark-compare --kernelwatch-history URL`, on SQLite and on PostgreSQL: the first run saves the baseline
(new), three runs at commits of their own are the same, a commit that changes the launch is 3% slower (the fake
GPU's slowdown) and its run fails naming the commit window, `changes` names the case, and a commit with an
`Accept-Slowdown` trailer accepts it on the next run. A wrong kernel fails with both error figures and the
tolerance.
"""

from __future__ import annotations

import contextlib
import io
import shutil

import pytest

from kernelwatch.history.cli import main
from tests.support.backends import fresh_postgres_database
from tests.support.git_repos import git
from tests.support.pytest_runs import ROOT, run_pytest

pytestmark = pytest.mark.slow  # a dozen runs of pytest on the example: CI's second pass (tox -e unit -- -m slow)

EXAMPLE = ROOT / "examples" / "cupy"
CASE = "test_saxpy.py::test_saxpy"
FAKE_GPU = ["-p", "tests.plugins.fake_gpu", "--fake-gpu-cupy"]
SLOWER = "--fake-gpu-slowdown=*test_saxpy*:1.03"
TRAILER = "Accept-Slowdown: cases=*test_saxpy* 128 threads a block, for the older GPUs of the fleet"


def commit(folder, message: str) -> str:
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--allow-empty", "-m", message)
    return git(folder, "rev-parse", "HEAD")


def project(tmp_path):
    """A copy of examples/cupy outside this repository, as a git repository with one commit."""
    folder = tmp_path / "saxpy-project"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "reports", ".pytest_cache"))
    assert ROOT not in folder.parents
    git(folder, "init", "-q", "-b", "main")
    commit(folder, "the example")
    return folder


def pytest_in(folder, *args, env=None):
    result = run_pytest(folder, ["-p", "no:cacheprovider", *args], env=env)
    return result, result.stdout + result.stderr


def test_the_example_collects_and_without_a_gpu_skips_with_the_reason_and_refuses_a_comparison(tmp_path):
    folder = project(tmp_path)
    collected, text = pytest_in(folder, "--collect-only", "-q")
    assert collected.returncode == 0 and f"{CASE}\n" in text and "1 test collected" in text, text
    no_gpu = {"CUDA_VISIBLE_DEVICES": ""}  # hides the GPU of a machine that has one
    skipped, text = pytest_in(folder, "-rs", env=no_gpu)
    assert skipped.returncode == 0 and "1 skipped" in text, text
    assert "SKIPPED [1] test_saxpy.py:8: needs a CUDA GPU: " in text
    refused, text = pytest_in(folder, "--benchmark-compare", env=no_gpu)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, text
    assert "--benchmark-compare asks for what only a GPU can give" in text and "no usable CUDA GPU" in text


def test_a_wrong_kernel_fails_with_both_error_figures_and_the_tolerance(tmp_path):
    folder = project(tmp_path)
    kernel = folder / "saxpy" / "saxpy.cu"
    kernel.write_text(kernel.read_text().replace("a * x[i] + y[i]", "a * x[i] - y[i]"))
    failed, text = pytest_in(folder, *FAKE_GPU)
    assert failed.returncode == 1 and "1 failed" in text, text
    message = next(line for line in text.splitlines() if line.startswith("kernelwatch: test_saxpy misses"))
    assert "max error " in message and ", average error " in message and ", tolerance 1e-05 (" in message


def test_a_pull_request_is_timed_against_its_base_through_the_examples_kernel_library(tmp_path):
    # saxpy/ implements the kernel library and pyproject.toml names it: --kernelwatch-compare-ref loads the base's
    # saxpy from the ref's tree, and the same machine code and launch on both sides is `unchanged`, not timed
    folder = project(tmp_path)
    commit(folder, "a commit that changes no kernel")
    unchanged, text = pytest_in(folder, *FAKE_GPU, "--kernelwatch-compare-ref", "HEAD~1")
    assert unchanged.returncode == 0 and "against HEAD~1 (" in text and ": 1 unchanged" in text, text
    launch = folder / "saxpy" / "__init__.py"
    launch.write_text(launch.read_text().replace("THREADS = 256", "THREADS = 128"))
    commit(folder, "saxpy: 128 threads a block")
    timed, text = pytest_in(folder, *FAKE_GPU, "--kernelwatch-compare-ref", "HEAD~1", SLOWER)
    assert timed.returncode == 1 and ": 1 slower" in text, text  # both sides timed, interleaved: head is 3% slower
    assert "slower than HEAD~1: 3.0% slower" in text


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def life(request, tmp_path_factory):
    """The example's nightlies on one backend: (folder, {run: output}, {run: commit}, `changes` after run 5)."""
    tmp_path = tmp_path_factory.mktemp(request.param)
    folder = project(tmp_path)
    store = (fresh_postgres_database() if request.param == "postgresql"
             else contextlib.nullcontext(f"sqlite:///{tmp_path / 'history.sqlite'}"))
    with store as url:
        texts, commits = {}, {}

        def nightly(number: int, *extra: str) -> str:
            result, text = pytest_in(folder, *FAKE_GPU, "--benchmark-compare", f"--kernelwatch-history={url}",
                                     f"--fake-gpu-seed={number}", *extra)
            texts[number] = text
            return text

        commits[1] = git(folder, "rev-parse", "HEAD")
        nightly(1, "--benchmark-save=first")
        commits[2] = commit(folder, "the baseline")
        for number in (2, 3, 4):
            if number > 2:
                commits[number] = commit(folder, f"change {number}")
            nightly(number)
        launch = folder / "saxpy" / "__init__.py"
        launch.write_text(launch.read_text().replace("THREADS = 256", "THREADS = 128"))
        commits[5] = commit(folder, "saxpy: 128 threads a block")
        nightly(5, SLOWER)
        changes = io.StringIO()
        with contextlib.redirect_stdout(changes):
            changes_status = main(["changes", "--history", url])
        commits[6] = commit(folder, f"saxpy: the slowdown is meant\n\n{TRAILER}")
        nightly(6, SLOWER)
        yield folder, texts, commits, (changes_status, changes.getvalue())


def test_new_then_same_three_times(life):
    folder, texts, commits, _ = life
    assert "1 passed" in texts[1] and "1 new; report:" in texts[1], texts[1]
    assert "saved this run as" in texts[1] and "0001_first.json" in texts[1]
    for number in (2, 3, 4):
        assert "1 passed" in texts[number] and "1 same; report:" in texts[number], texts[number]
    assert "recorded this run (passed) as history run 4 in" in texts[4]


def test_a_three_percent_slowdown_is_slower_with_its_commit_window(life):
    folder, texts, commits, _ = life
    text = texts[5]
    assert "1 failed" in text and "1 slower; report:" in text and "performance regression" in text, text
    section = text[text.index("kernelwatch: slower cases"):]
    assert f"{CASE}: slower x1.0" in section
    assert f"commits {commits[4][:12]}..{commits[5][:12]}: 1 commit (first parent, oldest first)" in section
    assert f"{commits[5][:12]} saxpy: 128 threads a block" in section


def test_changes_names_the_slower_case_with_its_commits(life):
    _, _, commits, (status, out) = life
    assert status == 1, out  # a case failing in the newest run
    assert f"slower (the nightly's verdict) since run 5, 1 failed run: {CASE}" in out
    assert f"commits: {commits[4]}..{commits[5]} (1 commit)" in out and "OPEN: failing in the newest run" in out


def test_a_commit_with_an_accept_slowdown_trailer_accepts_it_on_the_next_run(life):
    _, texts, _, _ = life
    text = texts[6]
    assert "1 passed" in text and "1 accepted; report:" in text, text
    assert "128 threads a block, for the older GPUs of the fleet" in text
