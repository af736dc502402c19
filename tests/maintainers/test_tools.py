"""Every maintainers' tool (maintainers/): --help, exit 2 with a usage line on bad arguments, one sentence outside
its environment; every shell script a usage line on --help."""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAINTAINERS = ROOT / "maintainers"
IMPORTS_TESTS = re.compile(r"^\s*(from|import)\s+tests\b", re.MULTILINE)
HELPERS = ("maintainers.environment",)  # imported by the tools, not one of them (its --help says so)
SUPPORT = "maintainers.support"  # what the tools share with tests/: modules, not tools


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


# every Python module under maintainers/ but packages, the helpers and support/: a new tool is tested here without a word
TOOLS = sorted(module for module in map(module_of, MAINTAINERS.rglob("*.py"))
               if not module.endswith(".__init__") and module not in HELPERS and not module.startswith(SUPPORT + "."))
SHELL_SCRIPTS = sorted(str(path.relative_to(ROOT)) for path in MAINTAINERS.rglob("*.sh"))
BAD_ARGUMENTS = {"maintainers.device.summarize": [], "maintainers.checks.check_overlap": ["no-such.json"],
                 "maintainers.checks.ncu_check": ["no-such-step"], "maintainers.checks.tune_warptile": ["-5"],
                 "maintainers.checks.time_changes": ["1"], "maintainers.checks.time_store": ["--runs", "0"],
                 "maintainers.mutation.config": [], "maintainers.mutation.coverage_map": [],
                 "maintainers.mutation.filter": ["no-such.sqlite"], "maintainers.checks.nightly_time": ["--wall", "3"],
                 "maintainers.checks.cause_check": ["--size", "1"],
                 "maintainers.checks.dashboard_screenshots": ["--width", "10"],
                 "maintainers.checks.bad_documents": ["--no-such-option"],
                 "maintainers.checks.energy_check": ["measure", "--ab", "0"],
                 "maintainers.mutation.model_mutants": ["--workers", "0"],
                 "maintainers.mutation.replay": ["run", "no-such.jsonl", "--test-command", "true", "-o", "out.jsonl"],
                 **{f"maintainers.experiments.{name}": ["--no-such-option"] for name in (
                     "ab_table", "append_cost", "cupti_effect", "cupti_kinds", "cupti_smoke", "energy_spread",
                     "history_verdicts", "lone_copy", "pageable_spread", "replay_verdicts", "sensitivity_table", "spread_table",
                     "streams_spread")}}


def test_every_tool_has_bad_arguments_to_be_tried_with():
    assert set(BAD_ARGUMENTS) == set(TOOLS)


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.slow  # one Python process per tool: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("tool", [*TOOLS, *HELPERS])
def test_every_tool_has_help_that_says_its_whole_first_paragraph(tool):
    import importlib

    from maintainers.environment import summary

    result = run("-m", tool, "--help")
    assert result.returncode == 0, result.stderr
    assert f"usage: python -m {tool}" in result.stdout
    # argparse wraps the description (at spaces and after hyphens): compare without any whitespace
    said = "".join(result.stdout.split())
    assert "".join(summary(importlib.import_module(tool).__doc__).split()) in said


@pytest.mark.slow  # one Python process per tool: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("tool", TOOLS)
def test_bad_arguments_are_exit_2_with_a_usage_line(tool):
    result = run("-m", tool, *BAD_ARGUMENTS[tool])
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("usage: ")
    assert "Traceback" not in result.stderr


def test_mutation_coverage_without_coverage_says_what_it_needs_in_one_sentence(tmp_path):
    blocker = tmp_path / "coverage"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    result = run("-m", "maintainers.mutation.coverage_map", "-o", str(tmp_path / "map.json"), "--", "tests",
                 env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 3
    assert result.stderr.strip().count("\n") == 0 and "needs coverage.py" in result.stderr
    assert not (tmp_path / "map.json").exists()


def test_mutation_replay_without_cosmic_ray_says_what_it_needs_in_one_sentence(tmp_path):
    import importlib.util

    if importlib.util.find_spec("cosmic_ray") is not None:
        pytest.skip("cosmic-ray is installed here")
    session = tmp_path / "session.sqlite"
    session.write_bytes(b"")
    result = run("-m", "maintainers.mutation.replay", "export", str(session), "--outcome", "pending", "-o",
                 str(tmp_path / "m.jsonl"))
    assert result.returncode == 3
    assert result.stderr.strip().count("\n") == 0 and "needs cosmic-ray" in result.stderr


@pytest.mark.parametrize("command", [["maintainers.checks.tune_warptile", "256"], ["maintainers.checks.nightly_time"]])
def test_a_gpu_tool_without_a_gpu_says_why_in_one_sentence(command):
    from kernelwatch.timing.gpu import cuda_available

    if cuda_available()[0]:
        pytest.skip("this machine has a GPU")
    result = run("-m", *command)
    assert result.returncode == 3
    assert "Traceback" not in result.stderr and result.stderr.strip().count("\n") == 0
    assert "needs" in result.stderr


@pytest.mark.parametrize("script", SHELL_SCRIPTS)
def test_every_shell_script_says_its_usage_on_help_and_runs_nothing(script, tmp_path):
    result = subprocess.run(["bash", script, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60,
                            env={**os.environ, "OUT": str(tmp_path / "out")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: ") and f"maintainers/{Path(script).parent.name}/" in result.stdout
    assert not (tmp_path / "out").exists()  # nothing ran


def test_run_gpu_suites_without_a_step_is_usage_and_exit_2():
    result = subprocess.run(["bash", "maintainers/device/run_gpu_suites.sh"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: bash maintainers/device/run_gpu_suites.sh STEP")


def test_run_gpu_suites_without_nvidia_smi_is_one_sentence_and_non_zero(tmp_path):
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    if any((Path(d) / "nvidia-smi").exists() for d in env["PATH"].split(":")):
        pytest.skip("nvidia-smi is on this machine")
    result = subprocess.run(["bash", "maintainers/device/run_gpu_suites.sh", "correctness"], capture_output=True, text=True,
                            cwd=ROOT, env={**env, "OUT": str(tmp_path)})
    assert result.returncode != 0
    assert "nvidia-smi is not on this machine" in result.stderr


@pytest.mark.parametrize("step", ["phases", "nightlies"])
@pytest.mark.parametrize("count", ["", "x", "0", "-1", "2.5"])
def test_run_gpu_suites_wants_a_whole_number_of_runs_before_it_runs_anything(tmp_path, step, count):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\nexit 0\n")  # past the driver check: nothing may run after it
    (fake / "nvidia-smi").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin", "OUT": str(tmp_path / "out")}
    args = [step, count] if count else [step]
    result = subprocess.run(["bash", "maintainers/device/run_gpu_suites.sh", *args], capture_output=True, text=True, cwd=ROOT,
                            env=env)
    assert result.returncode == 2
    assert f"{step} N: N is the number of " in result.stderr and f"not '{count}'" in result.stderr
    assert not list((tmp_path / "out" / "work").glob("*.log"))  # no step ran


def test_no_tool_puts_itself_on_sys_path_or_imports_the_tests():
    for path in MAINTAINERS.rglob("*.py"):
        text = path.read_text()
        assert "sys.path" not in text, path
        assert not IMPORTS_TESTS.search(text), f"{path} imports tests/: move what it needs to maintainers/support/"


def test_an_import_of_the_tests_is_seen():
    assert IMPORTS_TESTS.search("def f():\n    from tests.history.synthetic import GPU_A\n")
    assert IMPORTS_TESTS.search("import tests.plugins.slowdown\n")
    assert not IMPORTS_TESTS.search("from maintainers.support import synthetic_history  # was tests.history\n")


def test_the_tool_listing_finds_every_kind_of_tool():
    assert "maintainers.mutation.replay" in TOOLS and "maintainers.checks.ncu_check" in TOOLS
    assert "maintainers/device/run_gpu_suites.sh" in SHELL_SCRIPTS and "maintainers/checks/sanitize.sh" in SHELL_SCRIPTS


def test_the_gpu_environments_of_tox_require_a_gpu():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    commands = tox["testenv:{gpu,bench,quick,pr,baseline,sanitize}-{cuda12,cuda13}"]["commands"]
    lines = [line.strip() for line in commands.strip().splitlines()]
    for env in ("gpu", "bench", "quick", "pr", "baseline"):
        (line,) = [line for line in lines if line.startswith(f"{env}:")]
        assert "--kernelwatch-require-gpu" in line, line
    assert "--kernelwatch-require-gpu" in (MAINTAINERS / "checks" / "sanitize.sh").read_text()


def test_time_changes_history_without_store_is_refused_and_store_takes_no_value():
    # `--store` once took an optional URL and swallowed RUNS: `--store 200 90` filled a file named 200
    refused = run("-m", "maintainers.checks.time_changes", "--history", "sqlite:///x.sqlite")
    assert refused.returncode == 2 and "--history needs --store" in refused.stderr
    assert not (ROOT / "x.sqlite").exists()
