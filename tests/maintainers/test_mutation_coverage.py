"""maintainers/mutation/coverage_map.py's map and its use in maintainers/mutation/replay.py: a mutant runs the
tests that ran its statement (for code run at import, every test of the test files whose tests ran the module), fastest first; none
when no test ran it."""

from __future__ import annotations

import importlib.util
import json
import sys
import sysconfig
from pathlib import Path

import pytest

from maintainers.mutation import coverage_map as mutation_coverage
from maintainers.mutation import replay as mutation_replay

SOURCE = """\
LIMIT = 3


@decorated(4)
def outer(x=5):
    y = x + 1
    if (y > 2 and
            y < 9):
        y = 0
    try:
        y = y / x
    except (ZeroDivisionError,
            ValueError):
        y = None

    def inner():
        return y * 2

    return inner()


class Box:
    size = 7
"""
# SOURCE's lines: LIMIT 1, decorator 4, def 5, body 6-19 (if 7-9, try 10-14: handler 12-14), inner's body 17, Box 22-23
MAP = {"seconds": {"t::all": 2.0, "t::fast": 0.1, "t::if": 0.5, "t::raise": 1.0, "t::box": 0.2},
       "files": {"pkg/mod.py": {"6": ["t::all", "t::fast", "t::if", "t::raise"], "7": ["t::all", "t::if"],
                                "8": ["t::all"], "9": ["t::if"], "11": ["t::all", "t::raise"], "13": ["t::raise"],
                                "17": ["t::fast"], "23": ["t::box"]}}}
MODULE = ["t::fast", "t::box", "t::if", "t::raise", "t::all"]  # every test of the module, fastest first


@pytest.mark.parametrize(("line", "tests"), [
    (6, ["t::fast", "t::if", "t::raise", "t::all"]),  # a simple statement: the tests that ran it
    (8, ["t::if", "t::all"]),                         # an if's condition over two lines: the header's tests
    (9, ["t::if"]),                                   # the if's body: its own statement's, not the header's
    (13, ["t::raise"]),                               # an except clause's header: the tests that reached it
    (15, ["t::fast", "t::if", "t::raise", "t::all"]), # a blank line of the body: the whole function's
    (17, ["t::fast"]),                                # the nested function's statement
    (1, MODULE),                                      # module level runs at import: every test of the module
    (4, MODULE),                                      # so does a decorator
    (5, MODULE),                                      # and a default value
    (23, MODULE),                                     # and a class body
])
def test_a_line_selects_the_tests_that_ran_its_innermost_statement(line, tests):
    assert mutation_replay.tests_for(MAP, "pkg/mod.py", line, SOURCE) == tests


def test_a_line_run_at_import_selects_every_test_of_the_files_whose_tests_ran_the_module():
    # "u::value" builds a frozen dataclass of the module by hand: it runs none of the module's lines, yet it
    # is the test that sees `frozen=True` mutated away; "v::other" is in a file that never ran the module
    coverage_map = {"seconds": {"u::runs": 0.3, "u::value": 0.1, "v::other": 0.2},
                    "files": {"pkg/mod.py": {"6": ["u::runs"]}}}
    assert mutation_replay.tests_for(coverage_map, "pkg/mod.py", 23, SOURCE) == ["u::value", "u::runs"]
    assert mutation_replay.tests_for(coverage_map, "pkg/mod.py", 6, SOURCE) == ["u::runs"]


def test_a_module_no_test_ran_selects_nothing():
    assert mutation_replay.tests_for(MAP, "pkg/other.py", 1, SOURCE) == []
    assert mutation_replay.tests_for({"seconds": {}, "files": {"pkg/mod.py": {"6": ["t::a"]}}},
                                     "pkg/mod.py", 17, SOURCE) == []


@pytest.mark.parametrize(("nodeid", "name"), [("tests/a.py::test_b[x-1]", "tests/a.py::test_b"),
                                              ("tests/a.py::C::test_d", "tests/a.py::C::test_d")])
def test_a_node_id_loses_only_its_parameters(nodeid, name):
    assert mutation_coverage.test_name(nodeid) == name


@pytest.fixture
def toy_tree(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    monkeypatch.setattr(mutation_replay, "ROOT", root)
    return root


def test_the_replay_runs_each_mutant_with_its_tests_and_passes_over_one_no_test_runs(toy_tree, tmp_path):
    # the command fails when the mutated function's value is wrong for a test named in {tests}
    check = (f"{sys.executable} -c \"import sys, pkg.mod; "
             "want = {'t::f': ('f', 1), 't::g': ('g', 2)}; "
             "sys.exit(any(getattr(pkg.mod, want[t][0])() != want[t][1] for t in sys.argv[1:]))\" {tests}")
    coverage_map = {"seconds": {"t::f": 1.0, "t::g": 1.0}, "files": {"pkg/mod.py": {"2": ["t::f"]}}}
    source = (toy_tree / "pkg" / "mod.py").read_text()

    def mutant(job, old, new, line):
        return {"job_id": job, "module": "pkg/mod.py", "operator": "op", "occurrence": 0, "line": line,
                "definition": None, "diff": "".join(__import__("difflib").unified_diff(
                    source.splitlines(True), source.replace(old, new).splitlines(True), "a/pkg/mod.py", "b/pkg/mod.py"))}

    out = tmp_path / "results.jsonl"
    replay = [mutant("f", "return 1", "return 0", 2), mutant("g", "return 2", "return 0", 6)]
    assert mutation_replay.run(replay, check, workers=1, timeout=30, out=out, coverage_map=coverage_map) == 0
    results = {r["job_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert results["f"]["outcome"] == "killed"
    assert (results["g"]["outcome"], results["g"]["tests"]) == ("survived", 0)  # t::g would kill it: not in the map
    assert "not run" in results["g"]["tail"]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--test-command", "true {tests}"], "{tests} in --test-command needs --tests-by-line"),
    (["--test-command", "true", "--tests-by-line", "MAP"], "--tests-by-line needs {tests}"),
])
def test_the_map_and_its_placeholder_come_together(tmp_path, capsys, arguments, message):
    (tmp_path / "m.jsonl").write_text("")
    (tmp_path / "MAP").write_text("{}")
    arguments = [str(tmp_path / a) if a == "MAP" else a for a in arguments]
    with pytest.raises(SystemExit) as exit_:
        mutation_replay.main(["run", str(tmp_path / "m.jsonl"), "-o", str(tmp_path / "r"), *arguments])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("coverage") is None,
                    reason="the map is built with coverage.py, in tox -e mutation's environment only")
@pytest.mark.slow  # pytest under coverage.py in subprocesses: CI's second pass (tox -e unit -- -m slow)
def test_a_built_map_names_the_test_that_ran_a_line_in_a_subprocess_and_leaves_out_a_failing_test(tmp_path):
    tests = tmp_path / "test_toy.py"
    tests.write_text(
        "import subprocess, sys\n"
        "def test_in_process():\n"
        # a call, not an import: pytest's entry point has imported the installed plugin before any test
        "    from kernelwatch import units\n"
        "    assert units.percent(0.5)\n"
        "def test_in_a_subprocess():\n"
        f"    subprocess.run([sys.executable, '-c', 'import kernelwatch.metrics'], check=True, cwd={str(tmp_path)!r},\n"
        f"                   env={{'PYTHONPATH': {str(mutation_coverage.ROOT)!r}, **__import__('os').environ}})\n"
        "def test_failing():\n"
        "    import kernelwatch.compare\n"
        "    assert False\n"
        # a copy of the package outside the tree (the replay's own tests make such copies): not the files mutated
        "def test_in_a_copy():\n"
        f"    subprocess.run([sys.executable, '-c', 'import kernelwatch.elsewhere'], check=True, cwd={str(tmp_path)!r},\n"
        f"                   env={{**__import__('os').environ, 'PYTHONPATH': {str(tmp_path / 'copy')!r}}})\n")
    (tmp_path / "copy" / "kernelwatch").mkdir(parents=True)
    (tmp_path / "copy" / "kernelwatch" / "__init__.py").write_text("")
    (tmp_path / "copy" / "kernelwatch" / "elsewhere.py").write_text("X = 1\n")
    # as in a map's own run, where this test builds a map inside it: the outer run's startup file must stay
    pth = Path(sysconfig.get_paths()["purelib"]) / mutation_coverage.PTH
    outer = pth.exists()
    pth.write_text("import coverage; coverage.process_startup()\n")
    try:
        built = mutation_coverage.build([str(tests), "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)])
        assert pth.exists()
    finally:
        if not outer:
            pth.unlink(missing_ok=True)
    # node ids are relative to the run's rootdir, as pytest takes them back in a replay's command
    assert built["failed"] == ["test_toy.py::test_failing"]
    assert "test_toy.py::test_in_a_subprocess" in {t for lines in built["files"]["src/kernelwatch/metrics.py"].values()
                                                   for t in lines}
    assert "test_toy.py::test_in_process" in {t for lines in built["files"]["src/kernelwatch/units.py"].values() for t in lines}
    assert all("test_toy.py::test_failing" not in t for lines in built["files"].values() for t in lines.values())
    assert all(path.startswith(("src/kernelwatch/", "kernels/")) for path in built["files"])


@pytest.mark.parametrize("installed", ["/usr/lib/python3.12/site-packages/kernelwatch",  # pip install
                                       "/tmp/site/kernelwatch"])  # pip install --target, on PYTHONPATH (device scripts)
def test_the_lines_of_an_installed_kernelwatch_count_as_the_lines_of_src(tmp_path, installed):
    """coverage.py's own path aliasing over the map's configuration: a line run in an installed copy lands on the
    file the mutants change. Where it did not, a map built on the GPU machine held no in-process line."""
    import coverage
    from coverage.files import PathAliases

    rc = tmp_path / "coverage.ini"
    rc.write_text(mutation_coverage.coverage_config(str(tmp_path)))
    canonical, *patterns = coverage.Coverage(config_file=str(rc)).config.paths["kernelwatch"]
    aliases = PathAliases(relative=False)
    for pattern in patterns:
        aliases.add(pattern, canonical)
    assert aliases.map(f"{installed}/history/chart.py") == str(mutation_coverage.ROOT / "src/kernelwatch/history/chart.py")
