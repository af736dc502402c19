"""The small timed suite the plugin's end-to-end tests run on the fake GPU, and how they run pytest on it.

tests/plugin/conftest.py's `suite` fixture writes SUITE into a folder of its own; `run` runs the plugin's pytest there
(tests/support/pytest_runs.py: in this process unless `fresh`), its baselines and report inside the folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.git_repos import git
from tests.support.pytest_runs import run_pytest

FOLDER = "Fake_GPU_9000"

SUITE = '''
import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.perf]


@pytest.mark.parametrize("name", ["alpha", "beta", "gamma"])
def test_time(kernelwatch_bench, name):
    kernelwatch_bench.time(lambda stream: None, kernel=name, shape="1x1", flops=1e9)
'''

FAILING = '''
def test_broken():
    assert False, "a real failure"
'''


def suite_repository(folder: Path, file_name: str, text: str, *ignored: str) -> None:
    """`folder` as a git repository (no commit yet) holding the suite `text` as `file_name` on the fake GPU, an
    empty baselines/ folder, and a .gitignore of the files the runs write: baselines/, report.md, SQLite stores and
    `ignored`."""
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / file_name).write_text(text)
    (folder / "baselines").mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / ".gitignore").write_text("".join(f"{name}\n" for name in ("baselines/", "report.md", "*.sqlite*", *ignored)))


def run(folder: Path, *args: str, env: dict | None = None, fresh: bool = False) -> subprocess.CompletedProcess:
    """The suite's pytest on `folder` (tests/support/pytest_runs.py: in this process unless `fresh`), its baselines
    and report inside it."""
    return run_pytest(folder, ["-p", "no:cacheprovider", "-q", f"--benchmark-storage=file://{folder / 'baselines'}",
                               f"--kernelwatch-report={folder / 'report.md'}", *args], env=env, fresh=fresh)


def saved(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "baselines" / FOLDER).glob("*.json"))


def output(result) -> str:
    return result.stdout + result.stderr
