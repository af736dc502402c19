"""Which tests run which lines of src/kernelwatch/ and kernels/: the map that lets a replayed mutant run only
the tests that can see it.

    python -m maintainers.mutation.coverage_map -o MAP.json -- PYTEST_ARGUMENTS...
    python -m maintainers.mutation.replay run M.jsonl --tests-by-line MAP.json --test-command 'python -m pytest {tests} -x -q'

Runs pytest once under coverage.py with every test in its own coverage context, named by its node id
without parameters (`tests/test_x.py::test_y`). Python processes that a test starts (the plugin's
end-to-end tests run pytest in a subprocess) are measured too and counted to the test that started
them: a .pth file in this interpreter's site-packages starts coverage in every process that has
COVERAGE_PROCESS_START, and the context of such a process is read from the environment variable
that this module's pytest hooks set around each test. The .pth file is removed when the run ends.

maintainers.mutation.replay's `tests_for` reads the map: a mutant runs the tests that ran its statement.
Tests that fail unmutated are left out of the map, with their names printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from maintainers.environment import summary

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ("kernelwatch", "kernels")  # import packages; kernelwatch installed (site-packages) or from src/
CONTEXT = "MUTATION_COVERAGE_TEST"  # the test a process runs for; read by the subprocesses' coverage config
TIMES = "MUTATION_COVERAGE_TIMES"  # where the main pytest process writes each test's seconds and outcome
PTH = "mutation_coverage_startup.pth"


def test_name(nodeid: str) -> str:
    """A node id without its parameters: the name that selects every case of a parametrized test."""
    return nodeid.split("[", 1)[0]


# -- pytest hooks (loaded with -p maintainers.mutation.coverage_map by the run below) --------------------------

_times: dict[str, float] = {}
_failed: set[str] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    import coverage

    name = test_name(item.nodeid)
    os.environ[CONTEXT] = name
    current = coverage.Coverage.current()
    if current is not None:
        current.switch_context(name)
    try:
        return (yield)
    finally:
        os.environ.pop(CONTEXT, None)
        if current is not None:
            current.switch_context("")


def pytest_runtest_logreport(report):
    name = test_name(report.nodeid)
    _times[name] = _times.get(name, 0.0) + report.duration
    if report.failed:
        _failed.add(name)


def pytest_sessionfinish(session):
    if os.environ.get(TIMES) and not hasattr(session.config, "workerinput"):  # the main process only
        Path(os.environ[TIMES]).write_text(json.dumps({"seconds": _times, "failed": sorted(_failed)}))


# -- the run --------------------------------------------------------------------------------------------

def coverage_config(scratch: str) -> str:
    """coverage.py's configuration of a map's run, its data files in the folder `scratch`."""
    return ("[run]\n"
            f"data_file = {scratch}/.coverage\n"
            "parallel = true\n"
            f"source_pkgs = {', '.join(MEASURED)}\n"
            f"context = ${{{CONTEXT}}}\n"
            "disable_warnings = no-data-collected, module-not-measured\n"
            # an installed kernelwatch's lines are counted as src/kernelwatch's, the files mutated: site-packages,
            # or the folder of `pip install --target` that the device scripts put on PYTHONPATH (where only
            # */site-packages/ matched, the map of 2026-12-06 on the GPU machine lost every in-process line)
            "[paths]\n"
            f"kernelwatch =\n    {ROOT / 'src' / 'kernelwatch'}\n    */kernelwatch\n")


def build(pytest_arguments: list[str]) -> dict:
    """Run pytest with `pytest_arguments` under coverage; the map of test seconds and covered lines."""
    import coverage

    with tempfile.TemporaryDirectory(prefix="mutation-coverage-") as scratch:
        rc = Path(scratch) / "coverage.ini"
        rc.write_text(coverage_config(scratch))
        times = Path(scratch) / "times.json"
        pth = Path(sysconfig.get_paths()["purelib"]) / PTH
        outer = pth.exists()  # a map built by a test of a map's run (this module's own): the outer run's file stays
        pth.write_text("import coverage; coverage.process_startup()\n")  # coverage must be in site-packages
        try:
            env = {**os.environ, "COVERAGE_PROCESS_START": str(rc), TIMES: str(times)}
            env.pop(CONTEXT, None)
            subprocess.run([sys.executable, "-m", "pytest", "-p", "maintainers.mutation.coverage_map", *pytest_arguments],
                           cwd=ROOT, env=env, check=False)
        finally:
            if not outer:
                pth.unlink(missing_ok=True)
        if not times.is_file():
            raise SystemExit("pytest ended before its session finished: no map written")
        recorded = json.loads(times.read_text())
        measured = coverage.Coverage(data_file=f"{scratch}/.coverage", config_file=str(rc))
        measured.combine(data_paths=[scratch])
        data = measured.get_data()
        failed = set(recorded["failed"])
        files: dict[str, dict[str, list[str]]] = {}
        for path in sorted(data.measured_files()):
            if not Path(path).resolve().is_relative_to(ROOT):
                continue  # a copy of the tree that a test made (the replay's own tests), not the files mutated
            relative = Path(path).resolve().relative_to(ROOT).as_posix()
            lines = {str(line): sorted(t for t in tests if t and t not in failed)
                     for line, tests in data.contexts_by_lineno(path).items()}
            files[relative] = {line: tests for line, tests in lines.items() if tests}
    seconds = {name: round(s, 3) for name, s in recorded["seconds"].items() if name not in failed}
    return {"arguments": pytest_arguments, "seconds": seconds, "failed": sorted(failed), "files": files}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.mutation.coverage_map", description=summary(__doc__))
    parser.add_argument("-o", "--out", type=Path, required=True, help="the map to write (JSON)")
    parser.add_argument("pytest_arguments", nargs="+", help="pytest's arguments, after --")
    args = parser.parse_args(argv)
    try:
        import coverage  # noqa: F401
    except ImportError:
        print("maintainers.mutation.coverage_map needs coverage.py: run it in tox -e mutation's environment "
              "(.tox/mutation/bin/python -m maintainers.mutation.coverage_map ...)", file=sys.stderr)
        return 3
    coverage_map = build(args.pytest_arguments)
    args.out.write_text(json.dumps(coverage_map))
    covered = sum(len(lines) for lines in coverage_map["files"].values())
    print(f"{len(coverage_map['seconds'])} tests, {covered} lines of {len(coverage_map['files'])} files "
          f"written to {args.out}")
    if coverage_map["failed"]:
        print(f"left out, failing unmutated: {' '.join(coverage_map['failed'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
