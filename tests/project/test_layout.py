"""The harness's rooms: imports run one way, no cycles, no module reaching another's private names, none too long."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "src" / "kernelwatch"
# The rooms in import order: a module may import its own room and the rooms before it, never after.
ORDER = ["units", "metrics", "timing", "verdict", "storage", "ab", "cause", "report", "history", "plugin", "compare", "cli"]
MAX_LINES = 350


def module_name(path: Path) -> str:
    parts = path.relative_to(HARNESS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


MODULES = {module_name(path): path for path in sorted(HARNESS.rglob("*.py"))}


def imports_of(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every import of a harness module in `path`, relative ones resolved."""
    tree = ast.parse(path.read_text())
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names if alias.name.startswith("kernelwatch")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            if base.startswith("kernelwatch"):
                names = [alias.name for alias in node.names]
                submodules = [f"{base}.{name}" for name in names if f"{base}.{name}" in MODULES]
                found += [(sub, []) for sub in submodules] or [(base, names)]
    return found


def test_every_module_of_the_harness_lies_in_a_known_room():
    unknown = {module for module in MODULES if module != "kernelwatch" and room(module) not in ORDER}
    assert not unknown, f"modules outside the rooms {ORDER}: {sorted(unknown)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_only_to_its_own_room_or_an_earlier_one(module):
    if module == "kernelwatch":
        return
    mine = ORDER.index(room(module))
    upward = [target for target, _ in imports_of(MODULES[module])
              if target != "kernelwatch" and ORDER.index(room(target)) > mine]
    assert not upward, f"{module} imports from a later room: {upward} (order: {' < '.join(ORDER)})"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_another_modules_private_names(module):
    private = [f"{target}.{name}" for target, names in imports_of(MODULES[module]) for name in names
               if name.startswith("_") and name != "__version__"]
    assert not private, f"{module} imports private names: {private}"


def import_graph() -> dict[str, set[str]]:
    """Module -> the harness modules it imports (a package's __init__ importing its own submodules
    is how a package is put together, not an edge)."""
    graph = {module: {target for target, _ in imports_of(path) if target in MODULES and target != module}
             for module, path in MODULES.items()}
    for module, targets in graph.items():
        if MODULES[module].name == "__init__.py":
            graph[module] = {t for t in targets if not t.startswith(module + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` as [a, b, ..., a], or None."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target, path + [target])):
                return cycle
        state[node] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module, [module])):
            return cycle
    return None


def test_the_imports_between_harness_modules_have_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_a_sitting(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES}): split it by concern"


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_every_room_opens_with_a_docstring_that_says_what_it_owns_and_may_import(module):
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text())) or ""
    assert len(doc) > 80 and "import" in doc, f"{module}'s docstring must say what it owns and what it may import"


TESTS = Path(__file__).resolve().parents[1]
TEST_FILES = sorted(TESTS.rglob("test_*.py"))


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_a_test_file_is_named_after_what_it_tests_and_says_what_that_is(path):
    """Not after the pass that found its tests (gaps, issue numbers, _2): a newcomer finds a module's tests by name."""
    assert not re.search(r"gaps|issue|_\d+$|pass", path.stem), f"{path.name} is named after how its tests were found"
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} does not open with what it tests"


def test_the_test_file_rule_refuses_a_file_named_after_a_pass(tmp_path):
    for name in ("test_mutation_gaps_3.py", "test_issue_29.py"):
        (tmp_path / name).write_text('"""x"""\n')
        with pytest.raises(AssertionError, match="named after how"):
            test_a_test_file_is_named_after_what_it_tests_and_says_what_that_is(tmp_path / name)
    (tmp_path / "test_undocumented.py").write_text("x = 1\n")
    with pytest.raises(AssertionError, match="does not open with"):
        test_a_test_file_is_named_after_what_it_tests_and_says_what_that_is(tmp_path / "test_undocumented.py")


def imported_test_files(path: Path) -> list[str]:
    """The test files (a module named test_*) that the file at `path` imports, relative imports included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found += [base] + [f"{base}.{alias.name}".lstrip(".") for alias in node.names]
    return sorted({name for name in found if name.rpartition(".")[2].startswith("test_")})


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_file_imports_another_test_file(path):
    """A helper two test files share lives in tests/support/ (or a folder's conftest.py), never in one of them."""
    imported = imported_test_files(path)
    assert not imported, f"{path.name} imports the test file(s) {imported}: move what it takes into tests/support/"


def test_the_import_rule_refuses_a_test_file_importing_another(tmp_path):
    for source in ("from tests.timing.test_rules import fake_cupti\n", "from test_concurrent_writers import writer\n",
                   "import tests.project.test_readme\n", "from . import test_readme\n",
                   "def f():\n    from tests.plugin.test_kernel_library import BASE\n"):
        (tmp_path / "test_bad.py").write_text(f'"""x"""\n{source}')
        with pytest.raises(AssertionError, match="imports the test file"):
            test_no_test_file_imports_another_test_file(tmp_path / "test_bad.py")
    (tmp_path / "test_good.py").write_text('"""x"""\nfrom tests.support.cupti import fake_cupti\nimport pytest\n')
    test_no_test_file_imports_another_test_file(tmp_path / "test_good.py")


# Where the tests of a module live when no test file is named after it (tests/ROOM/test_NAME.py for
# kernelwatch.ROOM.NAME): the files, and why there. Every module of the package is named by a file or here.
TESTED_ELSEWHERE = {
    "ab.commits": ("tests/verdict/test_acceptance.py", "a commit window is what an acceptance trailer is looked up in"),
    "cause.card": ("tests/cause/test_static_card.py tests/cause/test_dynamic_card.py", "the card of each kind of cause"),
    "cause.code_under_test": ("tests/plugin/test_state.py", "a part of the session's state, checked with the others"),
    "cause.phases": ("tests/cause/test_phase_card.py", "the phase card is its product"),
    "cause.static": ("tests/cause/test_static_card.py", "the static card is its product"),
    "history.bisect_checks": ("tests/history/test_bisect.py", "the checks bisect makes before building"),
    "history.cmd_bisect": ("tests/history/test_bisect.py", "the command is bisect's front door"),
    "history.cmd_export": ("tests/history/test_cli.py tests/storage/history/test_committed_runs_round_trip.py",
                           "export is read back against import"),
    "history.cmd_remove_run": ("tests/history/test_remove_run.py", "the command and the store's amendment together"),
    "history.cmd_runs": ("tests/history/test_cli.py", "one listing among the store's commands"),
    "history.cmd_site": ("tests/history/test_site.py tests/history/test_site_browser.py", "the dashboard it writes"),
    "history.reference": ("tests/history/test_site.py", "the dashboard's reference line"),
    "plugin.device": ("tests/plugin/test_options.py tests/plugin/test_front_door_options.py",
                      "the GPU a run takes, through the options that choose it"),
    "plugin.hookspecs": ("tests/plugin/test_options.py", "the device hook a test plugin implements"),
    "plugin.recording": ("tests/plugin/test_history.py tests/history/test_gpu_runs_replay.py",
                         "recording into the store is a plugin run's end"),
    "plugin.regression": ("tests/verdict/test_acceptance.py tests/plugin/test_stored_slower_cards.py",
                          "a slower case's window, acceptance and cards"),
    "report.energy": ("tests/plugin/test_energy.py", "the section is checked beside the measurement that fills it"),
    "report.findings": ("tests/plugin/test_state.py", "a part of the session's state, checked with the others"),
    "report.phases": ("tests/verdict/test_phases.py", "the phases section beside the phase verdicts it shows"),
    "storage.history.amendments": ("tests/history/test_remove_run.py tests/storage/history/test_record_and_export.py",
                                   "acknowledgements and removals of stored runs"),
    "storage.history.connection": ("tests/storage/history/test_locks.py tests/storage/history/test_errors.py",
                                   "a connection's locks and errors"),
    "storage.history.documents": ("tests/storage/history/test_record_and_export.py", "a run's document in and out"),
    "storage.history.rows": ("tests/history/test_series.py", "the rows a series is read from"),
    "storage.history.schema": ("tests/storage/history/test_migrations.py", "the store's schema is its migrations"),
    "storage.history.validation_accuracy": ("tests/storage/history/test_validation.py tests/end_to_end/test_accuracy_life.py",
                                            "a document's accuracy list, with the rest of its validation"),
    "storage.history.validation_fields": ("tests/storage/history/test_validation.py", "the field checks validation shares"),
    "storage.stored_runs": ("tests/plugin/test_state.py", "a part of the session's state, checked with the others"),
    "timing.cupti": ("tests/timing/test_timer.py tests/timing/test_rules.py", "the timer is CUPTI's user"),
    "timing.measuring": ("tests/plugin/test_state.py", "a part of the session's state, checked with the others"),
    "timing.profile": ("tests/timing/test_rules.py", "a profile is the sampling and stop rules"),
    "timing.wall": ("tests/timing/test_rules.py tests/timing/test_phases.py", "wall-clock timing among the timing rules"),
    "verdict.judging": ("tests/plugin/test_state.py", "a part of the session's state, checked with the others"),
    "verdict.labels": ("tests/verdict/test_stats.py tests/report/test_markdown.py", "the words every verdict and report uses"),
}


def named_test_files(module: str) -> list[Path]:
    """The test file named after `module`: the tests of kernelwatch.<room>.<name> are tests/<room>/test_<name>.py
    (kernelwatch.storage.history.<name>: tests/storage/history/test_<name>.py; kernelwatch.<name>: tests/test_<name>.py).
    A file of that name in another room's folder tests something else."""
    *folders, name = module.split(".")[1:]
    path = TESTS.joinpath(*folders, f"test_{name}.py")
    return [path] if path.is_file() else []


def expected_test_file(module: str) -> str:
    *folders, name = module.split(".")[1:]
    return "/".join(["tests", *folders, f"test_{name}.py"])


PRODUCT_MODULES = sorted(m for m, path in MODULES.items() if path.name not in ("__init__.py", "__main__.py"))


@pytest.mark.parametrize("module", PRODUCT_MODULES)
def test_every_module_has_a_test_file_named_after_it_or_says_where_its_tests_live(module):
    short = module.removeprefix("kernelwatch.")
    named = named_test_files(module)
    if short not in TESTED_ELSEWHERE:
        assert named, f"{module} has no {expected_test_file(module)}: add one, or a TESTED_ELSEWHERE line"
        return
    assert not named, f"{module} has {named[0].relative_to(TESTS.parent)}: drop its TESTED_ELSEWHERE line"
    files, why = TESTED_ELSEWHERE[short]
    assert why, f"{module}'s TESTED_ELSEWHERE line says where, not why"
    for name in files.split():
        assert (TESTS.parent / name).is_file(), f"{module}'s tests are said to live in {name}, which does not exist"


def test_every_tested_elsewhere_line_names_a_module_that_exists():
    assert set(TESTED_ELSEWHERE) <= {m.removeprefix("kernelwatch.") for m in PRODUCT_MODULES}


# The files the repository's root may hold: the layout the README names. A store or log written into the
# root by a mistyped command (a SQLite file named `200` once was committed) is refused here.
ROOT_FILES = {".gitignore", "README.md", "conftest.py", "pyproject.toml", "tox.ini"}


def test_the_repository_root_holds_only_its_known_files():
    root = HARNESS.parents[1]  # src/kernelwatch -> the repository
    if not (root / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    import subprocess
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    assert {name for name in tracked if "/" not in name} <= ROOT_FILES
