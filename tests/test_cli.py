"""The `kernelwatch` console script (src/kernelwatch/cli.py): one command line that hands `compare` to kernelwatch.compare,
runs `plot` itself and hands every other command to the history store's (src/kernelwatch/history/cli.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch import cli, compare
from kernelwatch.history import cli as history_cli


def test_compare_goes_to_kernelwatch_compare_and_the_rest_to_the_history_commands(monkeypatch):
    called = []
    monkeypatch.setattr(compare, "run", lambda args: called.append(("compare", args.command)) or 7)
    monkeypatch.setattr(history_cli, "run", lambda args: called.append(("history", args.command)) or 9)
    assert cli.main(["compare", "old.json", "new.json"]) == 7
    assert cli.main(["runs", "--history", "sqlite:///nowhere.sqlite"]) == 9
    assert called == [("compare", "compare"), ("history", "runs")]


def test_a_command_built_at_run_time_goes_where_its_name_says(monkeypatch):
    # the console script's argv strings are made at run time, not interned as a test's literals are: the command
    # must be told by its value
    monkeypatch.setattr(compare, "run", lambda args: 7)
    monkeypatch.setattr(history_cli, "run", lambda args: 9)
    assert cli.main(["".join(["comp", "are"]), "old.json", "new.json"]) == 7


def test_without_a_command_it_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2 and "COMMAND" in capsys.readouterr().err


def test_plot_is_run_by_the_console_script_itself(monkeypatch):
    monkeypatch.setattr(cli, "run_plot", lambda args: 5)
    monkeypatch.setattr(history_cli, "run", lambda args: 9)
    assert cli.main(["plot", "baselines/NVIDIA_H200"]) == 5


@pytest.mark.slow  # a Python process without matplotlib: `tox -e unit` leaves it out, CI's slow pass runs it
def test_plot_without_matplotlib_says_what_it_needs_in_one_sentence(tmp_path):
    blocker = tmp_path / "matplotlib"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    result = subprocess.run([str(Path(sys.executable).with_name("kernelwatch")), "plot", "baselines/NVIDIA_H200",
                             "--out", str(tmp_path)], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == cli.NO_MATPLOTLIB
    assert result.stderr.strip().count("\n") == 0 and "kernelwatch plot needs matplotlib" in result.stderr
