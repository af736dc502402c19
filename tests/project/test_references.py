"""Every repository path and module that a docstring, a page of docs/ or of maintainers/ names exists (README.md:
tests/project/test_readme.py).

A path is a word that starts with one of the repository's folders (`src/kernelwatch/verdict/noise.py`,
`docs/method.md`); one with a placeholder or a pattern in it (`<gpu>`, `NNNN`, `*`, `{...}`) names no file.
A module is a dotted name under kernelwatch, kernels or maintainers (`kernelwatch.history.bisect`); its
last part may be a name in the module before it (`kernelwatch.verdict.noise.detectable_change`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE = ("src", "kernels", "suites", "tests", "maintainers")  # the folders whose docstrings are read
FOLDERS = (*CODE, "docs", "baselines", "requirements", ".ci", ".github")
_FOLDERS = "|".join(re.escape(folder) for folder in FOLDERS)
PATH = re.compile(r"(?<![\w/.-])((?:" + _FOLDERS + r")/[A-Za-z0-9_./<>*{},-]*[A-Za-z0-9_>*}])")
MODULE = re.compile(r"(?<![\w/.-])((?:kernelwatch|kernels|maintainers)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
PLACEHOLDER = re.compile(r"[<>*{}]|NNNN|_x\.py$")


def sources() -> list[Path]:
    """The repository's Python files (their docstrings) and the pages of docs/ and maintainers/."""
    code = sorted(p for folder in CODE for p in (ROOT / folder).rglob("*.py"))
    return code + sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "maintainers").rglob("*.md"))


@functools.cache  # a file's two tests, and the count over all files, parse it once in a worker
def texts_of(where: str) -> list[tuple[str, str]]:
    """(where, text) of every docstring of a Python file, or the whole of a page (`where`: its repository path)."""
    path = ROOT / where
    if path.suffix == ".md":
        return [(where, path.read_text(encoding="utf-8"))]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                found.append((f"{where}:{getattr(node, 'lineno', 1)}", text))
    return found


def named_paths(text: str) -> set[str]:
    return {name.rstrip(".") for name in PATH.findall(text) if not PLACEHOLDER.search(name)}


def module_exists(name: str) -> bool:
    """The longest importable prefix of `name` is a module, and the rest names attributes in it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            if importlib.util.find_spec(".".join(parts[:cut])) is None:
                continue
            found = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, ValueError):
            continue
        for attribute in parts[cut:]:
            if attribute in getattr(found, "__annotations__", {}):  # a dataclass field without a default
                return True
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def named_modules(text: str) -> set[str]:
    """Dotted names, but a placeholder (an upper-case part: maintainers.checks.NAME) and a file name (kernels.cu)."""
    names = {name.rstrip(".") for name in MODULE.findall(text)}
    return {name for name in names if not any(part.isupper() for part in name.split("."))
            and not name.endswith((".cu", ".cuh", ".py", ".md", ".json", ".toml"))}


# the files, not their texts: each test parses its own file, so that collecting (in every worker) parses none
FILES = [str(path.relative_to(ROOT)) for path in sources()]


def test_the_documents_are_found_and_name_paths_and_modules():
    documents = [document for file in FILES for document in texts_of(file)]
    assert len(documents) > 300
    assert sum(len(named_paths(text)) for _, text in documents) > 100


@pytest.mark.parametrize("file", FILES)
def test_every_path_named_exists(file):
    missing = sorted({(where, p) for where, text in texts_of(file) for p in named_paths(text) if not (ROOT / p).exists()})
    assert not missing, f"paths that are not in the repository: {missing}"


@pytest.mark.parametrize("file", FILES)
def test_every_module_named_exists(file):
    missing = sorted({(where, m) for where, text in texts_of(file) for m in named_modules(text) if not module_exists(m)})
    assert not missing, f"modules that do not exist: {missing}"


def test_a_path_that_is_gone_and_a_placeholder_are_told_apart():
    assert named_paths("see src/kernelwatch/verdict/noise.py and src/kernelwatch/gone.py") == {"src/kernelwatch/verdict/noise.py",
                                                                             "src/kernelwatch/gone.py"}
    assert named_paths("baselines/<gpu>/NNNN_x.json and tests/test_plugin_*.py") == set()
    assert not module_exists("kernelwatch.comparison.judge_record") and module_exists("kernelwatch.verdict.noise.NoiseFloors")
