"""examples/: each small project adopts kernelwatch in at most 15 lines of conftest and test together, and ruff
(`tox -e lint`) checks them. The CuPy one runs end to end on the fake GPU (tests/project/test_example_cupy.py); the
Triton and PyTorch ones need wheels of gigabytes and a GPU, so CI only lints and counts them."""

from __future__ import annotations

import configparser
import tomllib

import pytest

from tests.support.pytest_runs import ROOT

EXAMPLES = ROOT / "examples"
NAMES = ["cupy", "triton", "torch"]
MOST_LINES = 15


def adoption_lines(folder) -> list[str]:
    """The lines of an example's conftest.py and test files that are neither blank nor a comment."""
    files = sorted(folder.rglob("conftest.py")) + sorted(folder.rglob("test_*.py"))
    return [line for path in files for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_examples_are_the_three_projects():
    assert sorted(path.name for path in EXAMPLES.iterdir() if path.is_dir()) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_an_example_adopts_kernelwatch_in_at_most_15_lines_and_says_how_to_run_it(name):
    folder = EXAMPLES / name
    tests = sorted(folder.rglob("test_*.py"))
    assert tests and all("kernelwatch(" in path.read_text() for path in tests), "a test that uses the fixture"
    lines = adoption_lines(folder)
    assert len(lines) <= MOST_LINES, f"{name}: {len(lines)} lines of conftest and test:\n" + "\n".join(lines)
    assert "pytest" in (folder / "README.md").read_text()


def test_the_line_count_leaves_out_blank_lines_and_comments(tmp_path):
    (tmp_path / "conftest.py").write_text("# a comment\n\nimport pytest\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    # why\n    pass\n")
    assert adoption_lines(tmp_path) == ["import pytest", "def test_x():", "    pass"]


def test_lint_covers_the_examples():
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    excluded = ruff.get("exclude", []) + ruff.get("extend-exclude", [])
    assert not any(pattern.strip("/").split("/")[0] in ("examples", "*") for pattern in excluded), excluded
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    assert tox["testenv:lint"]["commands"].strip() == "ruff check {posargs:.}"  # the whole tree, examples/ in it
