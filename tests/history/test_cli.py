"""`python -m kernelwatch.history`: help, usage errors (exit 2), and the commands on each backend."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch.history.cli import COMMANDS, main
from kernelwatch.storage.history import open_store
from maintainers.support.dashboard_history import accuracy_check
from maintainers.support.synthetic_history import GPU_A, GPU_B, case_name, make_document, write_document
from tests.support.backends import history_url_fixture  # noqa: F401 (pytest fixtures)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # one subprocess per command: CI's second pass (tox -e unit -- -m slow)
def test_help_lists_every_command_and_each_command_has_help(capsys):
    done = subprocess.run([sys.executable, "-m", "kernelwatch.history", "--help"], capture_output=True, text=True,
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
    assert capsys.readouterr().err.startswith("usage: python -m kernelwatch.history")


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


def import_one_run(history_url: str, tmp_path) -> dict:
    """Run 1 of maintainers/support/synthetic_history.py written to tmp_path/runs and imported by the command line."""
    doc = make_document(1)
    write_document(tmp_path / "runs", 1, doc)
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0
    return doc


def runs_table_row(history_url: str, capsys) -> str:
    """The first run's row of `runs` (what was printed before is dropped)."""
    capsys.readouterr()
    assert main(["runs", "--history", history_url]) == 0
    return capsys.readouterr().out.splitlines()[1]


def test_an_empty_store_says_so_and_says_matches_only_under_a_filter(history_url, capsys):
    open_store(history_url).close()
    assert main(["runs", "--history", history_url]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("no stored run in ") and not out.endswith(" matches")
    assert main(["runs", "--gpu", "GPU-x", "--history", history_url]) == 0
    assert capsys.readouterr().out.strip().endswith(" matches")


def test_export_writes_json_indented_by_two(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    capsys.readouterr()
    assert main(["export", "1", "--history", history_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "{" and lines[1].startswith('  "') and not lines[1].startswith('   ')


def test_export_to_a_file_it_cannot_write_is_one_sentence_and_exit_1(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["export", "1", "-o", str(blocker / "run.json"), "--history", history_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write run 1 to ") and "Traceback" not in err


@pytest.mark.parametrize("text", ["three", "2.5", ""])
def test_a_run_count_that_is_not_a_whole_number_is_a_usage_error(text, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["changes", "--newest", text])
    assert exited.value.code == 2
    assert "not a whole number of runs" in capsys.readouterr().err


def test_export_to_a_file_returns_0_and_a_write_error_names_the_systems_words(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    assert main(["export", "1", "-o", str(tmp_path / "run.json"), "--history", history_url]) == 0
    assert (tmp_path / "run.json").read_text().startswith("{\n")
    blocker = tmp_path / "file"
    blocker.write_text("")
    capsys.readouterr()
    assert main(["export", "1", "-o", str(blocker / "run.json"), "--history", history_url]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write run 1 to ") and "[Errno" not in err  # the words alone


def test_changes_on_an_empty_store_names_the_gpu_only_when_asked_for_one(history_url, capsys):
    open_store(history_url).close()
    assert main(["changes", "--history", history_url]) == 0
    assert " on " not in capsys.readouterr().out
    assert main(["changes", "--gpu", "GPU-x", "--history", history_url]) == 0
    assert capsys.readouterr().out.strip().endswith(" on GPU-x")


def test_the_runs_table_names_a_commit_by_ten_characters(history_url, tmp_path, capsys):
    doc = import_one_run(history_url, tmp_path)
    row = runs_table_row(history_url, capsys)
    commit = doc["commit_info"]["id"]
    assert f" {commit[:10]} " in row and commit[:11] not in row


def test_importing_nothing_is_exit_1(history_url, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["import", str(tmp_path / "empty"), "--history", history_url]) == 1
    assert capsys.readouterr().err.startswith("error: no stored run in ")


@pytest.mark.parametrize("field", [("machine_info", "node"), ("commit_info", "branch")])  # host, branch
def test_the_runs_table_names_the_host_and_the_branch(history_url, tmp_path, capsys, field):
    doc = import_one_run(history_url, tmp_path)
    row = runs_table_row(history_url, capsys)
    value = doc[field[0]][field[1]]
    assert value and f" {value} " in row


def test_export_replaces_a_file_it_wrote_before(history_url, tmp_path):
    import_one_run(history_url, tmp_path)
    target = tmp_path / "run.json"
    target.write_text("old")
    assert main(["export", "1", "-o", str(target), "--history", history_url]) == 0
    assert target.read_text().startswith("{\n")


def test_a_site_that_cannot_be_written_is_one_sentence_and_exit_1(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    capsys.readouterr()
    assert main(["site", str(blocker / "site"), "--history", history_url]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: cannot write the site into {blocker / 'site'}: ") and "[Errno" not in err


@pytest.fixture(scope="module")
def two_gpus_checks(tmp_path_factory):
    """A SQLite store of two runs on each of two GPUs (GPU_A an NVIDIA H200, GPU_B an NVIDIA A100), each run with
    the correctness check of case 0."""
    url = f"sqlite:///{tmp_path_factory.mktemp('two_gpus') / 'history.sqlite'}"
    with open_store(url) as store:
        for gpu, model, first in ((GPU_A, "NVIDIA H200", 1), (GPU_B, "NVIDIA A100", 3)):
            for run in (first, first + 1):
                doc = make_document(run, gpu_uuid=gpu)
                doc["machine_info"]["gpu"]["name"] = model
                doc["kernelwatch_accuracy"] = [accuracy_check(run - first + 1, case_name(0))]
                store.record_run(doc, outcome="passed", profile="quick")
    return url


# GPU_A sorts before GPU_B and both before "NVIDIA": a filter that compared them by order would let the other in
@pytest.mark.parametrize("gpu, shown", [(None, [GPU_A, GPU_B]), (GPU_A, [GPU_A]), (GPU_B, [GPU_B]),
                                        ("NVIDIA A100", [GPU_B]), ("NVIDIA H200", [GPU_A]), ("GPU-none", [])],
                         ids=["every GPU", "GPU_A", "GPU_B", "A100", "H200", "no such GPU"])
def test_the_sites_checks_are_those_of_the_gpu_or_gpu_model_asked_for(two_gpus_checks, tmp_path, capsys, gpu, shown):
    out = tmp_path / "site"
    assert main(["site", str(out), "--history", two_gpus_checks, *(["--gpu", gpu] if gpu else [])]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    rows = re.findall(r'<tr class="accuracy-row" data-kernel="([^"]+)"[^>]*>.*?</td><td>([^<]*)</td><td>(\d+)</td>',
                      (out / "index.html").read_text())
    assert sorted(rows) == [(case_name(0), uuid, "2") for uuid in shown]


def test_importing_a_run_again_counts_it_once_as_skipped(history_url, tmp_path, capsys):
    import_one_run(history_url, tmp_path)
    capsys.readouterr()
    assert main(["import", str(tmp_path / "runs"), "--history", history_url]) == 0  # the same file again
    assert capsys.readouterr().out.splitlines()[-1].startswith("0 imported, 1 skipped (already recorded), 0 failed")
