"""Running pytest on a test folder from a test: in this process (fast), or in a fresh one where it must be.

The plugin's end-to-end tests start pytest on a small suite in a folder of their own, dozens of times.
A fresh Python for each run costs about 2 s (the harness, SciPy and SQLAlchemy imported again); a run in
this process, where they are imported already, about 0.3 s. `run_pytest` runs in this process unless told
otherwise, with what a fresh process would have: the folder as its working directory, the environment
without this run's own PYTEST_* and KERNELWATCH_* variables (an xdist worker's id would make the inner
run think it is one), and none of the folder's modules left behind for the next run. A run with xdist
workers (-n) runs in a fresh process (its workers, started from an in-process controller, did not find
the harness on a clean clone), and `fresh=True` gives one wherever a test needs it.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def no_gpu_conftest(why_not: str) -> str:
    """A conftest whose own device layer has no GPU, for `why_not`, whatever this machine has."""
    return ('import types\n\n'
            'def pytest_kernelwatch_device(config):\n'
            f'    return types.SimpleNamespace(available=False, why_not={why_not!r})\n')


def clean_environment() -> dict:
    """This process's environment without what would change the inner run (an xdist worker's ids, ...)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "KERNELWATCH_"))}
    return dict(environment, PYTHONPATH=str(ROOT))


@contextlib.contextmanager
def _as_a_fresh_run(folder: Path, environment: dict):
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    before = set(sys.modules)
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:  # the folder's conftest and test modules
            module_file = getattr(sys.modules[name], "__file__", None) or ""
            if module_file.startswith(str(folder)):
                del sys.modules[name]


def run_pytest(folder: Path, args: list[str], *, env: dict | None = None, fresh: bool = False,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """pytest with `args` in `folder`: its exit status and what it printed (CompletedProcess)."""
    folder = Path(folder)
    environment = dict(clean_environment(), **(env or {}))
    if fresh or "-n" in args:
        return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=folder, capture_output=True, text=True,
                              env=environment, timeout=timeout)
    import pytest

    out, err = io.StringIO(), io.StringIO()
    with _as_a_fresh_run(folder, environment), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = pytest.main(["-p", "no:randomly", *args])
    return subprocess.CompletedProcess(["pytest", *args], int(code), out.getvalue(), err.getvalue())
