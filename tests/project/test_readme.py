"""README.md is for users: short, and every file, option, tox environment and module it names exists.

What counts as a name:
- a repository path: a word in a code span, a code block or a link target that contains a slash or ends
  in a file extension, read from the repository root. Placeholders are written in angle brackets
  (`<old.json>`), and the value after an option that takes one (`--kernelwatch-compare-ref origin/main`) is not a path;
- an option: every `--word` anywhere in the README but inside `$(...)`, checked against
  `python -m pytest --help` run from the repository root (the suite's plugin, pytest, pytest-benchmark, xdist);
- a tox environment: `tox -e NAME`, checked against the sections of tox.ini with their {a,b} factors expanded;
- a module: `python -m NAME` or `python3 -m NAME`, checked with importlib.util.find_spec.
"""

from __future__ import annotations

import configparser
import functools
import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path

from tests.support.readme import code_pieces

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 150

# paths a run writes, which a fresh checkout does not hold
WRITTEN_BY_A_RUN = {"reports/benchmark-report.md", ".venv/bin/python", ".venv/bin/tox"}  # the set-up line makes .venv
EXTENSIONS = (".py", ".md", ".cu", ".cuh", ".ini", ".toml", ".txt", ".json", ".yml", ".yaml", ".sh", ".png", ".cfg")


def readme_text() -> str:
    return README.read_text(encoding="utf-8")


def link_targets(text: str) -> list[str]:
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]


def looks_like_path(token: str) -> bool:
    if not re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*", token) or ".." in token:
        return False
    return "/" in token or token.endswith(EXTENSIONS)


def named_paths(text: str) -> set[str]:
    paths = {t.split("#", 1)[0] for t in link_targets(text)}
    takes_value = options_with_a_value()
    for piece in code_pieces(text):
        previous = ""
        for token in piece.split():
            token = token.strip(",;:()\"'")
            if looks_like_path(token) and previous not in takes_value:
                paths.add(token)
            previous = token
    return paths


def named_options(text: str) -> set[str]:
    without_other_programs = re.sub(r"\$\([^)]*\)", "", text)  # $(git rev-parse --short HEAD) is git's
    # the set-up line's own: python3 -m venv --without-pip, and pip's --python (the venv's interpreter)
    without_other_programs = re.sub(r"python3 -m (venv|pip) [^&`]*", "", without_other_programs)
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", without_other_programs))


def named_tox_environments(text: str) -> set[str]:
    return {env for group in re.findall(r"\btox\s+-e\s+([\w.,-]+)", text) for env in group.split(",") if env}


def named_modules(text: str) -> set[str]:
    return set(re.findall(r"\bpython3?\s+-m\s+([A-Za-z_][\w.]*\w)", text))


@functools.cache
def pytest_help_options() -> dict[str, bool]:
    """Every long option of `pytest --help` in this repository (the plugin's and the installed plugins'),
    and whether it takes a value (`--kernelwatch-compare-ref=REF`)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"`pytest --help` failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    options = {}
    for line in done.stdout.splitlines():
        if match := re.match(r"^ {1,4}(-\S.*?)(?: {2,}|$)", line):  # the option column of a help entry
            for option, value in re.findall(r"(--[a-z][\w-]*)(=?)", match.group(1)):
                options[option] = bool(value)
    return options


def console_script_options() -> set[str]:
    """Every option of the `kernelwatch` console script's commands (compare and the history commands)."""
    from kernelwatch.cli import parser

    found = set()
    for action in parser()._subparsers._group_actions[0].choices.values():
        found |= {flag for sub in action._actions for flag in sub.option_strings if flag.startswith("--")}
    return found


def registered_options() -> set[str]:
    return set(pytest_help_options()) | console_script_options()


def options_with_a_value() -> set[str]:
    return {option for option, takes_value in pytest_help_options().items() if takes_value}


def tox_environments() -> set[str]:
    """Names of tox.ini's environments: env_list plus every [testenv:...] section, factors expanded."""
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(ROOT / "tox.ini", encoding="utf-8")
    names = set(re.split(r"[\s,]+", ini.get("tox", "env_list", fallback="").strip())) - {""}
    for section in ini.sections():
        if section.startswith("testenv:"):
            parts = re.split(r"(\{[^}]*\})", section.removeprefix("testenv:"))
            choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
            names.update("".join(c.strip() for c in combo) for combo in itertools.product(*choices))
    return names


def module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def test_readme_is_at_most_150_lines():
    lines = len(readme_text().splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines; at most {MAX_LINES} (the method belongs in docs/)"


def test_readme_names_only_paths_that_exist():
    paths = named_paths(readme_text())
    assert {"kernels/registry.py", "docs/method.md"} <= paths, f"the path parser found only {sorted(paths)}"
    missing = sorted(p for p in paths - WRITTEN_BY_A_RUN if not (ROOT / p).exists())
    assert not missing, "README.md names paths that are not in the repository: " + ", ".join(missing)


def test_readme_names_only_options_that_exist():
    options = named_options(readme_text())
    assert "--benchmark-compare" in options, f"the option parser found only {sorted(options)}"
    registered = registered_options()
    assert {"--kernelwatch-profile", "--benchmark-save", "--numprocesses"} <= registered, "could not read `pytest --help`"
    missing = sorted(options - registered)
    assert not missing, ("README.md names options that neither the plugin nor pytest, pytest-benchmark, pytest-xdist "
                         "or the kernelwatch command registers: " + ", ".join(missing))


def test_readme_names_only_tox_environments_of_tox_ini():
    named = named_tox_environments(readme_text())
    assert {"bench-cuda13", "unit"} <= named, f"the tox parser found only {sorted(named)}"
    missing = sorted(named - tox_environments())
    assert not missing, "README.md names tox environments that tox.ini does not define: " + ", ".join(missing)


def test_readme_names_only_importable_modules():
    named = named_modules(readme_text())
    assert "pip" in named, f"the module parser found only {sorted(named)}"
    missing = sorted(m for m in named if not module_exists(m))
    assert not missing, "README.md runs `python -m` on modules that cannot be found: " + ", ".join(missing)


def test_ci_runs_the_readmes_test_command_as_it_stands():
    fenced = re.search(r"## Two commands.*?```sh\n(.*?)```", readme_text(), re.S).group(1).strip().splitlines()
    main_job, tests = fenced
    assert main_job.endswith("tox -e bench-cuda13") and tests.endswith("tox -e unit")
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"\n{tests} -- " in ci  # the same line, pytest options after --
    assert main_job.rsplit("&&", 1)[0] == tests.rsplit("&&", 1)[0]  # one set-up for both
