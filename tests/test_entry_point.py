"""The `kernelwatch` console script (src/kernelwatch/cli.py): one command line that hands `compare` to kernelwatch.compare and every
other command to the history store's (src/kernelwatch/history/cli.py)."""

from __future__ import annotations

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
