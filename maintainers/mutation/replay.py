"""Replay mutants that cosmic-ray made against tests that need a machine cosmic-ray is not on (the GPU).

    python -m maintainers.mutation.replay export SESSION.sqlite [...] [--module PATH ...] [--outcome OUTCOME] -o M.jsonl
        [--sample N --seed S [--exclude EARLIER.jsonl ...]]   (a fresh random sample: N mutants, none of EARLIER's)
    python -m maintainers.mutation.replay run M.jsonl --test-command CMD [--workers N] [--timeout S] -o RESULTS.jsonl
        [--tests-by-line MAP.json]   (CMD holds {tests}: the tests that run the mutant's code, fastest first)
    python -m maintainers.mutation.replay table RESULTS.jsonl

cosmic-ray (tox -e mutation) makes the mutants and runs the CPU tests on them; code that only runs on
a GPU (the timer's hold kernel and L2 flush, NVML queries, the ceilings) survives there by construction.
`export` reads the diffs of such mutants from cosmic-ray's session files (SQLite), or makes them with
cosmic-ray's mutator for the mutants a session has not run (`--outcome pending`); `run` applies each
to a private copy of this tree, runs the test command in it, and restores the file: killed when the
command fails, survived when it passes, timeout past --timeout. It first runs the command on each
unmutated copy and stops (exit 3) if that fails, so a failure is the mutant's, not the machine's.
Workers run side by side; the GPU lock that the suite's timed tests take (src/kernelwatch/plugin/fixtures.py)
keeps their timing one at a time. With --tests-by-line (a map of maintainers.mutation.coverage_map) each mutant
runs only the tests that ran the statement it sits in (`tests_for`); one that no test runs survives
unrun ("not run" in its tail). `run` and `table` need only the Python standard library.
"""

from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import difflib
import importlib.util
import json
import os
import random
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from maintainers.environment import summary

ROOT = Path(__file__).resolve().parents[2]
# not copied into the replay's trees: environments, caches and outputs (.git is: tests of --kernelwatch-compare-ref need it)
SKIPPED = (".tox", ".venv", ".whl", ".history", ".gitbundle", "out", "__pycache__", ".pytest_cache",
           ".ruff_cache")


def export(sessions: list[Path], modules: list[str], outcome: str, *, sample: int | None = None, seed: int = 0,
           exclude: frozenset[str] = frozenset()) -> list[dict]:
    """The mutants of `modules` in cosmic-ray's `sessions` whose test outcome was `outcome` ("pending":
    not run yet, their diffs made here with cosmic-ray's own mutator), one per (module, operator,
    occurrence), with their diffs. `sample`: only that many of them, drawn by `random.Random(seed)` from
    their job ids in order, none of `exclude`'s (the job ids of earlier samples)."""
    select = ("select m.job_id, m.module_path, m.operator_name, m.operator_args, m.occurrence, m.start_pos_row,"
              " m.definition_name, r.diff from mutation_specs m left join work_results r on r.job_id = m.job_id")
    where = " where r.job_id is null" if outcome == "pending" else " where lower(r.test_outcome) = ?"
    candidates, seen = [], set()
    for session in sessions:
        db = sqlite3.connect(f"file:{session}?mode=ro", uri=True)
        for row in db.execute(select + where, () if outcome == "pending" else (outcome,)):
            key = (row[1], row[2], row[4])
            if (modules and row[1] not in modules) or key in seen or row[0] in exclude:
                continue
            seen.add(key)
            candidates.append(row)
    if sample is not None:
        by_job = {row[0]: row for row in candidates}
        candidates = [by_job[job] for job in random.Random(seed).sample(sorted(by_job), min(sample, len(by_job)))]
    mutants = []
    for job_id, module, operator, arguments, occurrence, line, definition, diff in candidates:
        if outcome == "pending":
            diff = _mutant_diff(module, operator, _arguments(arguments), occurrence)
        if not diff:
            continue
        mutants.append({"job_id": job_id, "module": module, "operator": operator, "occurrence": occurrence,
                        "line": line, "definition": definition, "diff": diff})
    return sorted(mutants, key=lambda m: (m["module"], m["line"], m["operator"], m["occurrence"]))


def _arguments(stored: str | None) -> dict:
    """An operator's arguments as cosmic-ray stores them: JSON, sometimes a JSON string of JSON."""
    value = json.loads(stored) if stored else {}
    return json.loads(value) if isinstance(value, str) else value


def _mutant_diff(module: str, operator: str, arguments: dict, occurrence: int) -> str | None:
    """The unified diff of one mutant of this tree's `module`, as cosmic-ray would apply it."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    source = (ROOT / module).read_text()
    try:
        mutated = mutate_code(source, get_operator(operator)(**arguments), occurrence)
    except Exception as error:  # noqa: BLE001 (cosmic-ray's own exec records these as incompetent: no mutant)
        print(f"cosmic-ray cannot make {module} {operator} #{occurrence}: {type(error).__name__}: {error}",
              file=sys.stderr)
        return None
    if mutated is None:
        return None
    return "".join(difflib.unified_diff(source.splitlines(keepends=True), mutated.splitlines(keepends=True),
                                        f"a/{module}", f"b/{module}"))


def tests_for(coverage_map: dict, module: str, line: int, source: str) -> list[str]:
    """The tests of `coverage_map` that run the code of `module`'s `line`, fastest first: those that ran
    a line of the innermost statement that holds it (of its header, for a compound statement); for a
    line outside every function body (module and class level, decorators, signatures: run at import)
    every test of each test file that holds a test that ran any line of the module. A test can see such
    a line without running a line of the module: one that builds a frozen dataclass of it by hand runs
    only the dataclass's generated code, yet fails when `frozen=True` is mutated away."""
    lines = coverage_map["files"].get(module, {})
    span = statement_lines(source, line)
    if span is None:
        files = {t.split("::", 1)[0] for tests in lines.values() for t in tests}
        chosen = {t for t in coverage_map["seconds"] if t.split("::", 1)[0] in files}
        chosen |= {t for tests in lines.values() for t in tests}
    else:
        first, last = span
        chosen = {t for number, tests in lines.items() if first <= int(number) <= last for t in tests}
    seconds = coverage_map["seconds"]
    return sorted(chosen, key=lambda t: (seconds.get(t, 0.0), t))


def statement_lines(source: str, line: int) -> tuple[int, int] | None:
    """The first and last line of the innermost statement holding `line` (its header where `line` is in
    a compound statement's header, the whole statement where it falls on a blank line or an `else:` of
    its body); None where `line` is in no function body, so that it runs when the module is imported.
    A test that runs none of these lines cannot see a change to `line`."""
    tree = ast.parse(source)
    if not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body[0].lineno <= line <= node.end_lineno
               for node in ast.walk(tree)):
        return None
    holding = [node for node in ast.walk(tree) if isinstance(node, (ast.stmt, ast.ExceptHandler))
               and node.lineno <= line <= node.end_lineno]
    innermost = max(holding, key=lambda node: (node.lineno, -node.end_lineno))
    body = getattr(innermost, "body", None)
    if body and line < body[0].lineno:
        return innermost.lineno, body[0].lineno - 1
    return innermost.lineno, innermost.end_lineno


# the process groups of the test commands running now: stopping the replay (SIGTERM, Ctrl-C) kills them, so
# that a hung mutant's tests, each in a session of its own, do not outlive the replay that started them
_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


def _stop(signum: int, frame: object) -> None:
    with _RUNNING_LOCK:
        for group in _RUNNING:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
    raise SystemExit(128 + signum)


def _copy_tree(target: Path) -> None:
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(*SKIPPED), symlinks=True, dirs_exist_ok=True)


def _run_command(command: str, cwd: Path, timeout: float, private_tmp: bool = False) -> tuple[str, str]:
    # the copy's src/ before an installed kernelwatch: the mutant is what its tests import
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(cwd / "src"), os.environ.get("PYTHONPATH")]))}
    if private_tmp:  # the copy's own TMPDIR: its tests' lock files and scratch folders meet no other copy's
        # (beside the copy, not in it: a test's scratch folder must lie outside the copy's git tree)
        tmp = cwd.parent / f"{cwd.name}.tmp"
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    # a session of its own, so that a timeout kills the whole command (the shell and every test
    # process under it), not the shell alone: a mutant that loops forever must not outlive its turn
    process = subprocess.Popen(command, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    with _RUNNING_LOCK:
        _RUNNING.add(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "timeout", ""
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process.pid)
    tail = (stdout + stderr).strip().splitlines()[-3:]
    return ("survived" if process.returncode == 0 else "killed"), " | ".join(tail)


def apply_diff(text: str, diff: str) -> str:
    """`text` with cosmic-ray's unified diff of it applied; ValueError where the diff's context differs."""
    lines = text.splitlines(keepends=True)
    out, at = [], 0
    hunks = re.split(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@.*\n", diff, flags=re.M)
    for start, body in zip(hunks[1::2], hunks[2::2], strict=True):
        begin = int(start) - 1 if int(start) > 0 else 0
        out += lines[at:begin]
        at = begin
        for line in body.splitlines(keepends=True):
            tag, content = line[:1], line[1:]
            if tag in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\n") != content.rstrip("\n"):
                    raise ValueError(f"the diff does not match line {at + 1}: {content.strip()!r}")
                at += 1
                if tag == " ":
                    out.append(lines[at - 1])
            elif tag == "+":
                out.append(content if content.endswith("\n") else content + "\n")
    return "".join(out + lines[at:])


def _replay_one(mutant: dict, tree: Path, command: str, timeout: float, private_tmp: bool = False,
                tests: list[str] | None = None) -> dict:
    """One mutant in `tree`; `tests`, where a map chose them, go in place of {tests} in `command`."""
    if tests is not None:
        if not tests:
            return {**_described(mutant), "outcome": "survived", "tests": 0,
                    "tail": f"not run: no test of the map runs line {mutant['line']}'s code", "seconds": 0.0}
        command = _with_tests(command, tests)
    module = tree / mutant["module"]
    original = module.read_text()
    diff = _strip_header(mutant["diff"])
    try:
        try:
            module.write_text(apply_diff(original, diff))
        except ValueError as error:
            return {**_described(mutant), "outcome": "not applied", "tail": str(error)}
        started = time.perf_counter()
        outcome, tail = _run_command(command, tree, timeout, private_tmp)
        return {**_described(mutant), "outcome": outcome, "tail": tail,
                "seconds": round(time.perf_counter() - started, 1)}
    finally:
        module.write_text(original)


# the command runs as one argument of `sh -c`, which Linux caps at 128 KiB (MAX_ARG_STRLEN)
MAX_TESTS_CHARS = 100_000


def _with_tests(command: str, tests: list[str]) -> str:
    """`command` with `tests` in place of {tests}; where their node ids would pass MAX_TESTS_CHARS (a line run
    at import by a module every test uses), their files instead: every test of those files, a superset."""
    listed = " ".join(shlex.quote(t) for t in tests)
    if len(listed) > MAX_TESTS_CHARS:
        listed = " ".join(shlex.quote(f) for f in dict.fromkeys(t.split("::", 1)[0] for t in tests))
    return command.replace("{tests}", listed)


def _strip_header(diff: str) -> str:
    """The diff without the "--- mutation diff ---" line that cosmic-ray puts before its own."""
    return diff.split("--- mutation diff ---\n", 1)[-1]


def _described(mutant: dict) -> dict:
    return {key: value for key, value in mutant.items() if key != "diff"}


def run(mutants: list[dict], command: str, workers: int, timeout: float, out: Path, private_tmp: bool = False,
        coverage_map: dict | None = None) -> int:
    earlier = {signum: signal.signal(signum, _stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _run(mutants, command, workers, timeout, out, private_tmp, coverage_map)
    finally:
        for signum, handler in earlier.items():
            signal.signal(signum, handler)


def _run(mutants: list[dict], command: str, workers: int, timeout: float, out: Path, private_tmp: bool,
         coverage_map: dict | None) -> int:
    with tempfile.TemporaryDirectory(prefix="mutation-replay-") as scratch:
        trees = []
        for index in range(workers):
            tree = Path(scratch) / f"tree{index}"
            tree.mkdir()
            _copy_tree(tree)
            trees.append(tree)
        checks, tests = [command] * workers, [None] * len(mutants)
        if coverage_map is not None:
            sources = {m["module"]: (ROOT / m["module"]).read_text() for m in mutants}
            tests = [tests_for(coverage_map, m["module"], m["line"], sources[m["module"]]) for m in mutants]
            # every test that some mutant will run is run once unmutated, the tests dealt out over the
            # copies (each copy checked, the whole costing one pass over those tests, not one per copy)
            chosen = sorted({t for some in tests for t in some},
                            key=lambda t: (coverage_map["seconds"].get(t, 0.0), t))
            checks = [_with_tests(command, chosen[i::workers]) if chosen[i::workers] else "true"
                      for i in range(workers)]
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            checked = list(pool.map(lambda pair: _run_command(pair[1], pair[0], timeout, private_tmp),
                                    zip(trees, checks, strict=True)))
        failed = [(tree.name, tail) for tree, (outcome, tail) in zip(trees, checked, strict=True) if outcome != "survived"]
        if failed:
            print(f"the unmutated tree fails the test command, so no mutant can be judged: {failed}", file=sys.stderr)
            return 3
        print(f"unmutated tree passes in each of {workers} copies; replaying {len(mutants)} mutants", flush=True)
        free = list(trees)
        results = []
        with concurrent.futures.ThreadPoolExecutor(workers) as pool, out.open("w") as sink:
            pending = {}
            queue = collections.deque(zip(mutants, tests, strict=True))
            while queue or pending:
                while queue and free:
                    tree = free.pop()
                    mutant, its_tests = queue.popleft()
                    pending[pool.submit(_replay_one, mutant, tree, command, timeout, private_tmp, its_tests)] = tree
                done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    free.append(pending.pop(future))
                    result = future.result()
                    results.append(result)
                    sink.write(json.dumps(result) + "\n")
                    sink.flush()
    print(table(results))
    return 0


def table(results: list[dict]) -> str:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for result in results:
        counts[result["module"]][result["outcome"]] += 1
    kinds = ["killed", "survived", "timeout", "not applied"]
    lines = ["| module | replayed | " + " | ".join(kinds) + " |", "| --- | --- |" + " --- |" * len(kinds)]
    for module in sorted(counts):
        row = counts[module]
        lines.append(f"| {module} | {sum(row.values())} | " + " | ".join(str(row[k]) for k in kinds) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.mutation.replay", description=summary(__doc__))
    commands = parser.add_subparsers(dest="command", required=True)
    p_export = commands.add_parser("export", help="mutants of cosmic-ray sessions, with their diffs, as JSON lines")
    p_export.add_argument("sessions", nargs="+", type=Path, help="cosmic-ray session files (SQLite)")
    p_export.add_argument("--module", action="append", default=[], help="only this module (repeatable)")
    p_export.add_argument("--outcome", default="survived", choices=["survived", "killed", "pending"],
                          help="the CPU run's outcome to export (default: survived); pending: not run")
    p_export.add_argument("--sample", type=int, help="a random sample of this many of them (with --seed)")
    p_export.add_argument("--seed", type=int, default=0, help="the sample's random.Random seed (default 0)")
    p_export.add_argument("--exclude", action="append", type=Path, default=[],
                          help="an earlier sample's JSON lines: none of its mutants again (repeatable)")
    p_export.add_argument("-o", "--out", type=Path, required=True)
    p_run = commands.add_parser("run", help="apply each mutant to a copy of this tree and run the test command")
    p_run.add_argument("mutants", type=Path)
    p_run.add_argument("--test-command", required=True, help="a shell command; exit 0 means the mutant survived")
    p_run.add_argument("--workers", type=int, default=4, help="copies of the tree replayed side by side (default 4)")
    p_run.add_argument("--timeout", type=float, default=120.0, help="seconds before a mutant counts as a timeout")
    p_run.add_argument("--private-tmp", action="store_true",
                       help="give each copy its own TMPDIR (tests on a fake GPU; not where the real GPU's lock matters)")
    p_run.add_argument("--tests-by-line", type=Path, metavar="MAP",
                       help="maintainers.mutation.coverage_map's map: each mutant runs only the tests that ran its statement, "
                            "in place of {tests} in the test command")
    p_run.add_argument("-o", "--out", type=Path, required=True)
    p_table = commands.add_parser("table", help="killed/survived per module of a run's results")
    p_table.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    if args.command == "export":
        for session in args.sessions:
            if not session.is_file():
                parser.error(f"no such session file: {session}")
        if args.outcome == "pending" and importlib.util.find_spec("cosmic_ray") is None:
            print("exporting pending mutants needs cosmic-ray: run it in tox -e mutation's environment "
                  "(.tox/mutation/bin/python -m maintainers.mutation.replay ...)", file=sys.stderr)
            return 3
        earlier = frozenset(json.loads(line)["job_id"] for path in args.exclude
                            for line in path.read_text().splitlines() if line.strip())
        mutants = export(args.sessions, args.module, args.outcome, sample=args.sample, seed=args.seed,
                         exclude=earlier)
        args.out.write_text("".join(json.dumps(m) + "\n" for m in mutants))
        print(f"{len(mutants)} mutants written to {args.out}")
        return 0
    if args.command == "run":
        if not args.mutants.is_file():
            parser.error(f"no such file: {args.mutants}")
        if args.workers < 1:
            parser.error("--workers must be at least 1")
        coverage_map = None
        if args.tests_by_line is not None:
            if not args.tests_by_line.is_file():
                parser.error(f"no such file: {args.tests_by_line}")
            if "{tests}" not in args.test_command:
                parser.error("--tests-by-line needs {tests} in --test-command, where the chosen tests go")
            coverage_map = json.loads(args.tests_by_line.read_text())
        elif "{tests}" in args.test_command:
            parser.error("{tests} in --test-command needs --tests-by-line, the map that chooses them")
        mutants = [json.loads(line) for line in args.mutants.read_text().splitlines() if line.strip()]
        return run(mutants, args.test_command, args.workers, args.timeout, args.out, args.private_tmp, coverage_map)
    if not args.results.is_file():
        parser.error(f"no such file: {args.results}")
    print(table([json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
