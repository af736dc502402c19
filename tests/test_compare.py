"""`python -m kernelwatch.compare OLD NEW`: verdicts and the report from two saved runs, no GPU needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelwatch import compare
from kernelwatch.storage.runs import BaselineError
from kernelwatch.verdict.record import TIMER_WALL
from tests.support.git_repos import git

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "baselines" / "NVIDIA_H200" / "0002_h200-f7a0fb6.json"
# its host routines, timed by wall clock: one run of their machine is too few to judge them (few runs)
WALL_CLOCK = sum(b["extra_info"].get("timer") == TIMER_WALL for b in json.loads(COMMITTED.read_text())["benchmarks"])
SLOWED_CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-warptile_128x256]"
ELEMENTWISE_CASE = "suites/test_perf_elementwise.py::test_add_time[8192x8192-vector_add]"
CUBLAS_CASE = "suites/test_perf_matmul.py::test_matmul_time[4096x4096x4096-cublas]"


def run_compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelwatch.compare", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # kernelwatch.compare in a process of its own: CI's second pass (tox -e unit -- -m slow)
def test_the_committed_baseline_against_itself_is_same_everywhere_it_is_judged(tmp_path):
    """Its GPU-timed cases read same; its wall-clock host routines are not judged against one run of their
    machine (few runs: a verdict on them needs eight)."""
    result = run_compare(COMMITTED, COMMITTED, "--report", tmp_path / "report.md")
    assert result.returncode == 0, result.stderr
    assert WALL_CLOCK > 0 and result.stdout.strip().splitlines()[-1] == f"{WALL_CLOCK} few runs, {86 - WALL_CLOCK} same"
    assert (tmp_path / "report.md").read_text().count("| same |") == 86 - WALL_CLOCK


@pytest.mark.slow
def test_one_case_slowed_ten_percent_is_the_one_regression(tmp_path):
    doc = json.loads(COMMITTED.read_text())
    bench = next(b for b in doc["benchmarks"] if b["fullname"] == SLOWED_CASE)
    bench["stats"]["data"] = [1.10 * x for x in bench["stats"]["data"]]
    slowed = tmp_path / "slowed.json"
    slowed.write_text(json.dumps(doc))
    result = run_compare(COMMITTED, slowed)
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip().splitlines()[-1] == f"1 slower, {WALL_CLOCK} few runs, {85 - WALL_CLOCK} same"
    regressed = [line for line in result.stdout.splitlines() if "**slower**" in line]
    assert len(regressed) == 1 and "warptile_128x256" in regressed[0] and "1.100×" in regressed[0]


def _slowed(tmp_path, factor: float) -> Path:
    doc = json.loads(COMMITTED.read_text())
    bench = next(b for b in doc["benchmarks"] if b["fullname"] == SLOWED_CASE)
    bench["stats"]["data"] = [factor * x for x in bench["stats"]["data"]]
    slowed = tmp_path / "slowed.json"
    slowed.write_text(json.dumps(doc))
    return slowed


@pytest.mark.parametrize("args, env", [([], {"KERNELWATCH_THRESHOLD": "20%"}), (["--threshold", "0.2"], {}),
                                       (["--threshold", "0.2"], {"KERNELWATCH_THRESHOLD": "1%"})],
                         ids=["variable", "option", "option-over-variable"])
def test_the_threshold_a_live_run_takes_is_the_one_compare_takes(tmp_path, capsys, monkeypatch, args, env):
    # a 10% slowdown is slower at the 1.5% floor, and same where the same-GPU floor is 20%, as a live run under
    # KERNELWATCH_THRESHOLD=20% judges it: pytest and compare judge the same two runs alike
    slowed = _slowed(tmp_path, 1.10)
    monkeypatch.delenv("KERNELWATCH_THRESHOLD", raising=False)
    assert compare.main([str(COMMITTED), str(slowed)]) == compare.EXIT_SLOWER
    capsys.readouterr()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert compare.main([str(COMMITTED), str(slowed), *args]) == compare.EXIT_OK
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == f"{WALL_CLOCK} few runs, {86 - WALL_CLOCK} same" and "| 20.0% |" in out  # the detectable change of each case


@pytest.mark.parametrize("args, env, named", [([], {"KERNELWATCH_THRESHOLD": "abc"}, "$KERNELWATCH_THRESHOLD='abc'"),
                                              (["--threshold", "150%"], {}, "--threshold='150%'")])
def test_a_threshold_that_is_no_fraction_is_exit_2_naming_where_it_came_from(capsys, monkeypatch, args, env, named):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert compare.main([str(COMMITTED), str(COMMITTED), *args]) == compare.EXIT_UNUSABLE
    captured = capsys.readouterr()
    assert captured.err.startswith(f"error: {named} ") and len(captured.err.splitlines()) == 1 and not captured.out


@pytest.mark.slow
def test_an_unusable_file_is_exit_status_two_with_the_reason(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"benchmarks": [')
    result = run_compare(COMMITTED, broken)
    assert result.returncode == 2
    assert "broken.json" in result.stderr and "Traceback" not in result.stderr


RUNS = Path(__file__).resolve().parents[1] / "baselines" / "NVIDIA_H200"


def help_text(capsys) -> str:
    """`compare --help`'s text, its lines joined (argparse wraps them to the terminal's width)."""
    with pytest.raises(SystemExit):
        compare.main(["--help"])
    return " ".join(capsys.readouterr().out.split())


def test_the_help_describes_the_command_by_the_first_line_of_its_docstring(capsys):
    assert "Verdicts and the markdown report from two saved runs, on any machine" in help_text(capsys)


def test_the_help_of_allow_partial_says_a_comparison_must_judge_half_the_cases(capsys):
    """The module's docstring: fewer than MIN_JUDGED (half) of NEW's cases judged is exit 2."""
    assert "--allow-partial pass a comparison that judged under 50% of the cases (default: exit 2)" in help_text(capsys)


def test_two_different_files_are_not_called_a_comparison_with_itself(capsys):
    older, newer = str(RUNS / "0004_h200-46c5004.json"), str(RUNS / "0005_h200-5fcc19b.json")
    for old, new in ((older, newer), (newer, older)):
        compare.main([old, new])
        assert "compared with itself" not in capsys.readouterr().out


def test_the_report_names_the_new_runs_gpu_and_a_run_of_another_gpu_model_is_refused(tmp_path, capsys):
    """The GPU comes from NEW's machine_info: it titles the report and OLD must have been timed on one like it."""
    path = RUNS / "0005_h200-5fcc19b.json"
    gpu = json.loads(path.read_text())["machine_info"]["gpu"]
    _, text = compare.compare_runs(path, path)
    assert text.startswith(f"# kernelwatch on {gpu['name']} ({gpu['uuid']}, host {gpu['host']}) vs ")
    doc = json.loads(path.read_text())
    doc["machine_info"]["gpu"]["name"] = "NVIDIA A100-SXM4-80GB"
    other = tmp_path / "0001_a100.json"
    other.write_text(json.dumps(doc))
    assert compare.main([str(other), str(path)]) == compare.EXIT_UNUSABLE
    assert "comparing across GPU models is refused" in capsys.readouterr().err


def test_a_report_that_cannot_be_written_is_exit_status_two_with_the_reason(tmp_path, capsys):
    """--report naming a folder: the OSError is reported and the exit status is 2, no traceback."""
    status = compare.main([str(RUNS / "0005_h200-5fcc19b.json"), str(RUNS / "0005_h200-5fcc19b.json"),
                           "--report", str(tmp_path)])
    assert status == compare.EXIT_UNUSABLE
    assert "could not write the report" in capsys.readouterr().err


@pytest.mark.slow  # git worktrees and static builds in a subprocess: CI's second pass (tox -e unit -- -m slow)
def test_a_slower_matrix_product_gets_a_card_built_from_both_runs_commits(tmp_path, monkeypatch):
    import shutil
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "kernels", repo / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "16-deep k tiles")
    old_commit = git(repo, "rev-parse", "HEAD")
    registry = repo / "kernels" / "registry.py"
    registry.write_text(registry.read_text().replace("rm=2, rn=4, bk=16),", "rm=2, rn=4, bk=8),"))
    git(repo, "commit", "-q", "-am", "8-deep k tiles")
    new_commit = git(repo, "rev-parse", "HEAD")

    doc = json.loads(COMMITTED.read_text())
    doc["commit_info"]["id"] = old_commit
    (tmp_path / "old.json").write_text(json.dumps(doc))
    bench = next(b for b in doc["benchmarks"] if b["fullname"] == SLOWED_CASE)
    bench["stats"]["data"] = [1.035 * x for x in bench["stats"]["data"]]
    doc["commit_info"]["id"] = new_commit
    driver = doc["machine_info"]["gpu"]["driver"]
    doc["machine_info"]["gpu"]["driver"] = "590.10"
    (tmp_path / "new.json").write_text(json.dumps(doc))
    # the repository names no kernel library in a pytest configuration: the card says so, unless --kernels names it
    _, unnamed = compare.compare_runs(tmp_path / "old.json", tmp_path / "new.json", repo)
    assert ("No card: the project names no kernel library (the ini key kernelwatch_kernels; docs/kernel-library.md); "
            "or name it with --kernels PACKAGE") in unnamed
    verdicts, text = compare.compare_runs(tmp_path / "old.json", tmp_path / "new.json", repo, "kernels")
    assert [v.case for v in verdicts if v.label == "slower"] == [SLOWED_CASE]
    card = text[text.index("## Why the slower cases are slower"):].splitlines()
    assert card[2] == f"#### Why `{SLOWED_CASE}` is slower"
    assert card[4] == f"The builds at commits {old_commit[:12]} (old) and {new_commit[:12]} (new), static half."
    assert card[6].startswith("1. **barriers**: BAR per FFMA in the code 0.0010 -> 0.0019")
    assert "| dynamic shared memory (bytes) | 49664 | **24832** |" in card
    assert f"Environment differences: driver {driver} -> 590.10" in card
    assert [p for p in tmp_path.iterdir() if p.name.startswith("kernelwatch-base-")] == []  # worktrees removed


def compare_slowed(tmp_path, slowed, edit=lambda extra_info: None, gpu=None):
    """compare_runs of the committed run (its commit replaced by one git lacks) against a copy with the
    cases `slowed` 50% slower (past every floor), `edit` applied to each of those
    cases' extra_info and `gpu` to its GPU's; returns the verdicts and the cards' section ("" if none)."""
    doc = json.loads(COMMITTED.read_text())
    doc["commit_info"]["id"] = "f" * 40
    (tmp_path / "old.json").write_text(json.dumps(doc))
    doc["machine_info"]["gpu"].update(gpu or {})
    for bench in doc["benchmarks"]:
        if bench["fullname"] in slowed:
            bench["stats"]["data"] = [1.5 * x for x in bench["stats"]["data"]]
            edit(bench["extra_info"])
    (tmp_path / "new.json").write_text(json.dumps(doc))
    verdicts, text = compare.compare_runs(tmp_path / "old.json", tmp_path / "new.json", ROOT)
    cards = text[text.index("## Why the slower cases are slower"):] if "## Why the slower" in text else ""
    return verdicts, cards


def test_a_card_whose_commit_git_lacks_says_so_for_a_matrix_product_and_an_add_alike(tmp_path):
    """The commits are looked up in the checkout given (the working directory by default), and the card names it;
    the kernel library is the one its pyproject.toml names (kernelwatch_kernels), which builds adds too."""
    verdicts, cards = compare_slowed(tmp_path, (SLOWED_CASE, ELEMENTWISE_CASE))
    assert sum(v.label == "slower" for v in verdicts) == 2
    for case in (SLOWED_CASE, ELEMENTWISE_CASE):
        assert f"#### Why `{case}` is slower\n\nNo card: unknown git ref '{'f' * 40}' in {ROOT}\n" in cards
    assert cards.count("#### Why") == 2


def test_a_slower_cublas_product_gets_no_card_and_a_product_of_unrecorded_machine_code_gets_one(tmp_path):
    """sass "library" (read from the file, as every saved run is) marks a library's kernel: nothing of the
    suite's to explain; a case that recorded no sass (a host routine's, or an older run's) is still the suite's
    own kernel."""
    def forget_the_suites_sass(extra_info):
        if extra_info.get("sass") != "library":
            extra_info.pop("sass", None)

    verdicts, cards = compare_slowed(tmp_path, (CUBLAS_CASE, SLOWED_CASE), forget_the_suites_sass)
    assert {v.case for v in verdicts if v.label == "slower"} == {CUBLAS_CASE, SLOWED_CASE}
    assert cards.count("#### Why") == 1 and f"#### Why `{SLOWED_CASE}` is slower" in cards


def test_a_throttled_matrix_product_gets_no_card(tmp_path):
    """Only a slower case gets a card; "throttled" sorts after "slower" but is not judged at all."""
    verdicts, cards = compare_slowed(tmp_path, (SLOWED_CASE,), lambda info: info.update(throttle_reasons=["hw_slowdown"]))
    assert [v.label for v in verdicts if v.case == SLOWED_CASE] == ["throttled"]
    assert cards == ""


def test_a_slower_case_whose_shape_its_library_cannot_build_gets_a_card_saying_why(tmp_path, monkeypatch):
    """The library's build_for reads the shape: this repository's kernels build a matrix product of MxNxK only, so a
    shape of four extents (a batch of products) gets the library's one line why not."""
    import kernels
    from kernelwatch.cause.stored import PackagesAtCommits

    monkeypatch.setattr(PackagesAtCommits, "package", lambda self, commit: kernels)  # every commit: this checkout's
    verdicts, cards = compare_slowed(tmp_path, (SLOWED_CASE,), lambda info: info.update(shape="2x4096x4096x4096"))
    assert [v.label for v in verdicts if v.case == SLOWED_CASE] == ["slower"]
    assert cards == ("## Why the slower cases are slower\n\n"
                     f"#### Why `{SLOWED_CASE}` is slower\n\n"
                     "No card: the case's shape '2x4096x4096x4096' is no matrix product's MxNxK\n\n")


def test_a_new_run_without_a_readable_compute_capability_gets_no_card_and_the_reason(tmp_path):
    verdicts, cards = compare_slowed(tmp_path, (SLOWED_CASE,), gpu={"compute_capability": "sm90"})
    assert [v.label for v in verdicts if v.case == SLOWED_CASE] == ["slower"]
    assert cards == ("## Why the slower cases are slower\n\n"
                     f"#### Why `{SLOWED_CASE}` is slower\n\n"
                     "No card: compute capability must read like '9.0', got 'sm90'\n\n")


def test_a_run_number_names_that_run_only_never_the_next_one(tmp_path):
    for name in ("0001_h200-aaaaaaa.json", "0003_h200-ccccccc.json", "0004_h200-ddddddd.json"):
        (tmp_path / name).write_text("{}")
    assert compare.run_path("3", tmp_path) == tmp_path / "0003_h200-ccccccc.json"
    assert compare.run_path("0004", tmp_path) == tmp_path / "0004_h200-ddddddd.json"
    with pytest.raises(BaselineError, match="holds no run 0002"):  # not 0003, the first run after it
        compare.run_path("2", tmp_path)


def test_a_run_number_is_matched_by_value_past_two_hundred_fifty_six_too(tmp_path):
    """Run 0300 is found by "300": its number is compared by value (CPython caches ints up to 256 only)."""
    (tmp_path / "0300_h200-aaaaaaa.json").write_text("{}")
    assert compare.run_path("300", tmp_path) == tmp_path / "0300_h200-aaaaaaa.json"


def test_two_runs_of_one_number_are_an_error_naming_both(tmp_path, capsys):
    """Two branches that each saved a run 0006, merged: the number names neither; the files do."""
    for name in ("0006_h200-bbbbbbb.json", "0006_h200-aaaaaaa.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(BaselineError, match=r"holds 2 runs numbered 0006 \(0006_h200-aaaaaaa.json, "
                                            r"0006_h200-bbbbbbb.json\): name the file"):
        compare.run_path("6", tmp_path)
    assert compare.main(["6", "6", "--in", str(tmp_path)]) == compare.EXIT_UNUSABLE
    assert "name the file" in capsys.readouterr().err


def test_a_name_that_is_no_file_and_no_run_number_is_reported_missing(tmp_path, capsys):
    """Not a number: no run of the folder is looked for; load_run reports the file missing (exit 2, no traceback)."""
    missing = tmp_path / "missing.json"
    assert compare.main([str(missing), str(missing), "--in", str(tmp_path)]) == compare.EXIT_UNUSABLE
    assert capsys.readouterr().err == f"error: {missing} does not exist\n"


def test_a_comparison_that_judged_exactly_half_of_the_cases_passes(tmp_path, capsys):
    """Under half judged is exit 2 (the module's docstring); half is enough: here one of two cases, the other timed
    by another timer than OLD's."""
    from kernelwatch.verdict.record import TIMER_EVENTS

    doc = json.loads(COMMITTED.read_text())
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["fullname"] in (SLOWED_CASE, CUBLAS_CASE)]
    next(b for b in doc["benchmarks"] if b["fullname"] == CUBLAS_CASE)["extra_info"]["timer"] = TIMER_EVENTS
    (tmp_path / "new.json").write_text(json.dumps(doc))
    assert compare.main([str(COMMITTED), str(tmp_path / "new.json")]) == compare.EXIT_OK
    assert capsys.readouterr().out.startswith("1 of 2 cases judged; not judged: 1 other timer\n")
