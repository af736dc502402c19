"""`python -m harness.history`: help, usage errors (exit 2), and the commands on each backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backends import history_url_fixture  # noqa: F401 (pytest fixtures)
from synthetic import make_document, write_document

from harness.history.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_every_command_and_each_command_has_help(capsys):
    done = subprocess.run([sys.executable, "-m", "harness.history", "--help"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0
    assert all(command.NAME in done.stdout for command in COMMANDS)
    for command in COMMANDS:
        with pytest.raises(SystemExit) as exited:
            main([command.NAME, "--help"])
        assert exited.value.code == 0
        assert "--history URL" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["export"], ["export", "seven"], ["import"],
                                  ["runs", "--limit", "many"], ["import", "x.json", "--outcome", "maybe"],
                                  ["changes", "--newest", "0"], ["changes", "--since", "yesterday"],
                                  ["changes", "--by", "host"], ["changes", "extra"], ["acknowledge", "case"],
                                  ["acknowledge", "case", "3"], ["acknowledge", "case", "three", "--reason", "r"],
                                  ["site"], ["bisect", "case", "--good", "HEAD~1"], ["bisect", "--bad", "HEAD"]])
def test_bad_arguments_exit_2_with_a_usage_line(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("usage: python -m harness.history")


def test_import_runs_and_export_on_a_store(history_url, tmp_path, capsys):
    paths = [write_document(tmp_path / "runs", number, make_document(number)) for number in (1, 2)]
    (tmp_path / "runs" / "0003_broken.json").write_text("{")
    assert main(["import", str(tmp_path / "runs"), "--profile", "quick", "--history", history_url]) == 1
    captured = capsys.readouterr()
    assert "0003_broken.json is not valid JSON" in captured.err
    assert captured.out.splitlines()[-1].startswith("2 imported, 0 skipped (already recorded), 1 failed")

    assert main(["runs", "--history", history_url]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["id", "date", "(UTC)", "commit", "branch", "profile", "GPU", "host", "outcome", "cases"]
    assert [line.split()[0] for line in table[1:]] == ["2", "1"]
    assert "quick" in table[1] and "NVIDIA H200 (GPU-aaaaaaaa)" in table[1] and table[1].split()[-2:] == ["passed", "3"]

    assert main(["export", "1", "--history", history_url]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(paths[0].read_text())
    assert main(["export", "9", "--history", history_url]) == 1
    assert capsys.readouterr().err.strip().startswith("error: there is no run 9")
