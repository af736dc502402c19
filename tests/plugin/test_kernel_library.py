"""The kernel library (src/kernelwatch/ab/library.py) through the plugin, end to end on the fake GPU.

A project names its library in the ini key kernelwatch_kernels; here a tiny one, `tinylib`, in a
folder of its own (a git repository with a pytest.ini), implements the protocol in a few lines.
With it, `--kernelwatch-compare-ref` prepares each case on both sides, skips the unchanged one,
times the changed one and cards it, and says which kernels are new and removed; `bisect -k`, built
on that A/B, selects among the project's own testpaths. Without it the project times and judges as
ever, is refused the A/B in one line, and a slower case's card says in one line why there is none.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.support.fake_suite import output, run
from tests.support.git_repos import git_init
from tests.support.kernel_library import BASE, write_library

TESTS = '''
import pytest

import tinylib

pytestmark = [pytest.mark.gpu, pytest.mark.perf]


@pytest.mark.parametrize("name", {names!r})
def test_k(kernelwatch_bench, name):
    kernelwatch_bench.time(tinylib.prepare(name), kernel=name, shape="32")
'''


def project(folder, operations: dict[str, str], names: list[str], library: str | None = "tinylib"):
    """A project on the fake GPU timing tinylib's kernels `names`; its pytest.ini names `library` (None: none)."""
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / "pytest.ini").write_text("[pytest]\n" + (f"kernelwatch_kernels = {library}\n" if library else ""))
    (folder / "test_k.py").write_text(TESTS.format(names=names))
    (folder / "baselines").mkdir(exist_ok=True)
    write_library(folder, operations)
    return folder


HEAD = {"scale": "* 2.0f", "shift": "+ 2.0f", "fresh": "* 3.0f"}  # shift changed, gone removed, fresh new


@pytest.mark.slow  # NVRTC builds of both sides and a worktree: CI's second pass (tox -e unit -- -m slow)
def test_compare_ref_prepares_each_case_on_both_sides_through_the_library_the_ini_key_names(tmp_path):
    project(tmp_path, BASE, ["scale", "shift", "fresh"])
    git_init(tmp_path)
    write_library(tmp_path, HEAD)  # the working tree is head, uncommitted
    result = run(tmp_path, "--kernelwatch-compare-ref", "main", "--fake-gpu-slowdown=*shift*:1.05", "-v")  # -q -v: a header
    assert result.returncode == 1, output(result)
    assert "kernelwatch: kernel library tinylib (tinylib)" in output(result)
    assert "FAILED test_k.py::test_k[shift] - Failed: slower than main" in output(result)
    assert "2 passed" in output(result)
    report = (tmp_path / "report.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line.split("|")[-2].strip(" *") for line in report.splitlines()
            if line.startswith("| `")}
    # scale: the same machine code on both sides, not timed; shift: other code, timed and 5% slower
    assert rows == {"test_k.py::test_k[scale]": "unchanged", "test_k.py::test_k[shift]": "slower",
                    "test_k.py::test_k[fresh]": "new", "gone": "removed"}
    card = report[report.index("## Why the slower cases are slower"):]
    assert "#### Why `test_k.py::test_k[shift]` is slower" in card and "No card" not in card
    assert "| registers per thread |" in card  # its static half, from each side's own source


def test_compare_ref_without_a_kernel_library_is_refused_in_one_line_before_anything_is_timed(tmp_path):
    project(tmp_path, BASE, ["scale"], library=None)
    git_init(tmp_path)
    result = run(tmp_path, "--kernelwatch-compare-ref", "main")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    assert ("ERROR: --kernelwatch-compare-ref prepares each case on both sides through the project's kernel library, "
            "and the project names no kernel library (the ini key kernelwatch_kernels; docs/kernel-library.md)\n"
            ) in result.stderr
    assert "Traceback" not in output(result) and "passed" not in output(result)
    assert not (tmp_path / "report.md").exists()


@pytest.mark.parametrize("library, why", [
    ("no_such_lib", "kernelwatch_kernels = 'no_such_lib' does not import: ModuleNotFoundError(\"No module named "
                    "'no_such_lib'\")"),
    ("json", "kernelwatch_kernels = 'json' ("),  # a package, but not a kernel library
], ids=["not importable", "incomplete"])
def test_a_kernel_library_that_cannot_be_used_is_refused_in_one_line_before_anything_is_timed(tmp_path, library, why):
    project(tmp_path, BASE, ["scale"], library=library)
    result = run(tmp_path)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output(result)
    [line] = [line for line in result.stderr.splitlines() if line.startswith("ERROR: ")]
    assert line.startswith(f"ERROR: {why}") and "Traceback" not in output(result)
    if library == "json":
        assert line.endswith(" lacks source_of, build_for, kernel_names (docs/kernel-library.md)")


def test_a_project_without_a_kernel_library_times_and_judges_and_its_slower_cases_card_says_why_none(tmp_path):
    project(tmp_path, BASE, ["scale", "shift"], library=None)
    first = run(tmp_path, "--benchmark-save=first", "-v")  # -q -v: the header's lines
    assert first.returncode == 0, output(first)
    assert ("kernelwatch: the project names no kernel library (the ini key kernelwatch_kernels; "
            "docs/kernel-library.md): no machine-code identity") in output(first)
    result = run(tmp_path, "--benchmark-compare", "--fake-gpu-seed=1", "--fake-gpu-slowdown=*shift*:1.10")
    assert result.returncode == 1, output(result)
    assert "FAILED test_k.py::test_k[shift] - Failed: performance regression" in output(result)
    report = (tmp_path / "report.md").read_text()
    assert ("No card: the project names no kernel library (the ini key kernelwatch_kernels; "
            "docs/kernel-library.md)") in report
    assert "| `test_k.py::test_k[scale]` |" in report


@pytest.mark.slow  # four pytest sessions in processes of their own, each an A/B: CI's second pass
def test_bisect_finds_the_slowing_commit_by_a_k_expression_among_the_projects_own_testpaths(tmp_path, monkeypatch,
                                                                                           capsys):
    """`bisect -k` in a project whose tests live in checks/ (its testpaths), not suites/: each probe is the real
    A/B of the plugin on the fake GPU, in a worktree of the commit; the commit that changed `shift` and slowed it
    (the fake GPU slows the head by the ini's addopts from there on) is the first bad one."""
    from kernelwatch.history.cli import main
    from tests.support.pytest_runs import ROOT

    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the probes' pytest finds tests.plugins.fake_gpu
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "checks").mkdir()
    (repo / "checks" / "test_k.py").write_text(TESTS.format(names=["scale", "shift"]))
    (repo / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    ini = "[pytest]\ntestpaths = checks\nkernelwatch_kernels = tinylib\n"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    commits = []
    for i, (operations, addopts) in enumerate([(BASE, ""), (BASE, ""), (HEAD, "addopts = --fake-gpu-slowdown=*shift*:1.05\n"),
                                               (HEAD, "addopts = --fake-gpu-slowdown=*shift*:1.05\n")]):
        write_library(repo, operations)
        (repo / "pytest.ini").write_text(ini + addopts)
        (repo / "log.txt").write_text(f"change {i}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"change {i}"], check=True)
        commits.append(subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip())
    assert main(["bisect", "-k", "shift", f"{commits[0]}..{commits[-1]}", "--profile", "quick", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{commits[-1][:12]} bad against the good ref (exit 1, slower 1.05")
    assert out[-1].startswith(f"first bad commit: {commits[2]} change 2 (last good {commits[1][:12]}; 3 candidates")
