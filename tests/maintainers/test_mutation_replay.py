"""maintainers/mutation/replay.py: cosmic-ray's diffs applied exactly, each mutant judged in a copy of its
own, the tree restored after it, and no verdict when the unmutated tree already fails."""

from __future__ import annotations

import difflib
import json
import sys
import time

import pytest

from maintainers.mutation import replay as mutation_replay
from tests.support.cosmic_ray_sessions import cosmic_ray_session

pytestmark = pytest.mark.slow  # copies of the tree and timeouts: run by CI's second pass (tox -e unit -- -m slow)


def unified(before: str, after: str, module: str = "pkg/mod.py") -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{module}", f"b/{module}"))


SOURCE = "".join(f"# line {i}\n" for i in range(30)) + "def f():\n    return 1\n" + "".join(
    f"# tail {i}\n" for i in range(10))


@pytest.mark.parametrize("change", [("return 1", "return 2"), ("line 0\n", "line zero\n"), ("# tail 9\n", "")])
def test_a_diff_applied_gives_exactly_the_mutated_source(change):
    mutated = SOURCE.replace(*change, 1)
    assert mutation_replay.apply_diff(SOURCE, unified(SOURCE, mutated)) == mutated


def test_a_diff_of_two_places_applies_both():
    mutated = SOURCE.replace("line 2\n", "line two\n").replace("tail 7\n", "tail seven\n")
    assert mutation_replay.apply_diff(SOURCE, unified(SOURCE, mutated)) == mutated


def test_cosmic_rays_header_line_is_skipped():
    mutated = SOURCE.replace("return 1", "return 0")
    assert mutation_replay.apply_diff(SOURCE, unified(SOURCE, mutated)) == mutated
    assert mutation_replay._strip_header("--- mutation diff ---\n" + unified(SOURCE, mutated)) == unified(
        SOURCE, mutated)


def test_a_diff_of_another_version_of_the_file_is_refused():
    diff = unified(SOURCE, SOURCE.replace("return 1", "return 2"))
    with pytest.raises(ValueError, match="does not match line"):
        mutation_replay.apply_diff(SOURCE.replace("return 1", "return 3"), diff)


def session_file(tmp_path, rows):
    """A session of NumberReplacer mutants at line 3: (job id, module, test outcome or None if pending, diff)."""
    return cosmic_ray_session(tmp_path / "session.sqlite",
                              [(job, module, "core/NumberReplacer", 3, 0) for job, module, _, _ in rows],
                              [(job, "NORMAL", outcome, diff) for job, _, outcome, diff in rows if outcome is not None])


def test_export_keeps_the_asked_outcome_and_module_once_each(tmp_path):
    path = session_file(tmp_path, [("a", "pkg/mod.py", "SURVIVED", "d1"), ("b", "pkg/mod.py", "KILLED", "d2"),
                                   ("c", "pkg/other.py", "SURVIVED", "d3"), ("d", "pkg/mod.py", None, None)])
    survivors = mutation_replay.export([path, path], ["pkg/mod.py"], "survived")
    assert [(m["job_id"], m["diff"]) for m in survivors] == [("a", "d1")]
    assert [m["job_id"] for m in mutation_replay.export([path], [], "killed")] == ["b"]


@pytest.fixture
def toy_tree(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(SOURCE)
    (root / ".tox").mkdir()  # never copied
    monkeypatch.setattr(mutation_replay, "ROOT", root)
    return root


TEST = f"{sys.executable} -c \"import pkg.mod; assert pkg.mod.f() == 1\""


def mutants(*pairs):
    return [{"job_id": str(i), "module": "pkg/mod.py", "operator": "op", "occurrence": i, "line": 31,
             "definition": "f", "diff": unified(SOURCE, SOURCE.replace(*pair))} for i, pair in enumerate(pairs)]


def test_each_mutant_is_judged_in_its_copy_and_the_tree_is_left_as_it_was(toy_tree, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    replay = mutants(("return 1", "return 2"), ("line 5\n", "line five\n"), ("line 6\n", "not applicable\n"))
    replay[2]["diff"] = replay[2]["diff"].replace("-# line 6", "-# line six")  # context of another version
    assert mutation_replay.run(replay, TEST, workers=2, timeout=30, out=out) == 0
    results = {r["job_id"]: r["outcome"] for r in map(json.loads, out.read_text().splitlines())}
    assert results == {"0": "killed", "1": "survived", "2": "not applied"}
    assert (toy_tree / "pkg" / "mod.py").read_text() == SOURCE
    assert "| pkg/mod.py | 3 | 1 | 1 | 0 | 1 |" in capsys.readouterr().out


def test_a_mutant_past_the_timeout_is_a_timeout(toy_tree, tmp_path):
    out = tmp_path / "results.jsonl"
    slow = f"{sys.executable} -c \"import pkg.mod, time; pkg.mod.f() == 1 or time.sleep(30)\""
    assert mutation_replay.run(mutants(("return 1", "return 2")), slow, workers=1, timeout=2, out=out) == 0
    assert json.loads(out.read_text())["outcome"] == "timeout"


def test_no_mutant_is_judged_when_the_unmutated_tree_fails(toy_tree, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    failing = f"{sys.executable} -c \"import pkg.mod; assert pkg.mod.f() == 2\""
    assert mutation_replay.run(mutants(("return 1", "return 2")), failing, workers=1, timeout=30, out=out) == 3
    assert "the unmutated tree fails the test command" in capsys.readouterr().err
    assert not out.exists()


def test_a_private_tmp_gives_each_copy_its_own_tmpdir(toy_tree, tmp_path):
    out = tmp_path / "results.jsonl"
    own_tmp = (f"{sys.executable} -c \"import os, pathlib; here = pathlib.Path.cwd(); "
               "assert pathlib.Path(os.environ['TMPDIR']) == here.parent / (here.name + '.tmp')\"")
    assert mutation_replay.run(mutants(("return 1", "return 2")), own_tmp, workers=1, timeout=30, out=out,
                               private_tmp=True) == 0
    assert json.loads(out.read_text())["outcome"] == "survived"
    assert mutation_replay.run(mutants(("return 1", "return 2")), own_tmp, workers=1, timeout=30, out=out) == 3


def test_a_timeout_kills_every_process_of_the_command(toy_tree, tmp_path):
    out = tmp_path / "results.jsonl"
    marker = tmp_path / "still-running"
    # the shell starts a child that would write the marker after the timeout, unless killed with it
    slow = (f"{sys.executable} -c \"import pkg.mod, sys; sys.exit(pkg.mod.f() != 1)\" || "
            f"({sys.executable} -c \"import time, pathlib; time.sleep(4); pathlib.Path('{marker}').write_text('')\"; true)")
    assert mutation_replay.run(mutants(("return 1", "return 2")), slow, workers=1, timeout=1, out=out) == 0
    assert json.loads(out.read_text())["outcome"] == "timeout"
    time.sleep(5)
    assert not marker.exists()


def test_stopping_the_replay_kills_the_test_commands_it_started(toy_tree, tmp_path):
    import os
    import signal
    import threading
    out, started, marker = tmp_path / "results.jsonl", tmp_path / "started", tmp_path / "still-running"
    # the mutant's command says it has started, then would write the marker 4 s later unless killed
    hung = (f"{sys.executable} -c \"import pkg.mod, sys; sys.exit(pkg.mod.f() != 1)\" || "
            f"({sys.executable} -c \"import time, pathlib; pathlib.Path('{started}').write_text(''); "
            f"time.sleep(4); pathlib.Path('{marker}').write_text('')\"; true)")

    def stop_when_started():
        deadline = time.monotonic() + 20
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    stopper = threading.Thread(target=stop_when_started)
    stopper.start()
    with pytest.raises(SystemExit) as stopped:
        mutation_replay.run(mutants(("return 1", "return 2")), hung, workers=1, timeout=30, out=out)
    stopper.join()
    assert stopped.value.code == 128 + signal.SIGTERM
    assert started.exists()
    time.sleep(5)
    assert not marker.exists()
    assert signal.getsignal(signal.SIGTERM) is not mutation_replay._stop  # the caller's handler is back


def test_a_sample_is_drawn_by_its_seed_from_the_job_ids_in_order_leaving_out_earlier_ones(tmp_path):
    import random

    jobs = [f"j{i:02d}" for i in range(10)]
    path = session_file(tmp_path, [(job, f"pkg/m{i}.py", "SURVIVED", f"d{i}") for i, job in enumerate(jobs)])
    first = mutation_replay.export([path], [], "survived", sample=3, seed=7)
    assert sorted(m["job_id"] for m in first) == sorted(random.Random(7).sample(jobs, 3))
    second = mutation_replay.export([path], [], "survived", sample=3, seed=8,
                                    exclude=frozenset(m["job_id"] for m in first))
    rest = [job for job in jobs if job not in {m["job_id"] for m in first}]
    assert sorted(m["job_id"] for m in second) == sorted(random.Random(8).sample(rest, 3))
    assert len(mutation_replay.export([path], [], "survived", sample=50, seed=1)) == 10  # at most all of them


def test_tests_too_many_for_one_command_line_are_given_by_their_files():
    few = [f"tests/test_{i % 3}.py::test_{i}" for i in range(5)]
    assert mutation_replay._with_tests("pytest {tests} -x", few) == "pytest " + " ".join(few) + " -x"
    many = [f"tests/test_{i % 3}.py::test_{'x' * 40}_{i}" for i in range(5000)]  # about 260 KB of node ids
    command = mutation_replay._with_tests("pytest {tests} -x", many)
    assert command == "pytest tests/test_0.py tests/test_1.py tests/test_2.py -x"
