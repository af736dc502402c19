"""Every command that README.md, docs/*.md, maintainers/README.md and the workflows name exists and runs.

What counts as a named command:
- `kernelwatch COMMAND` in a code span, a code block or a workflow: a command of the console script
  (src/kernelwatch/cli.py);
- `python -m MODULE [WORD]` (or python3, or a virtual environment's python): a module that can be found; WORD, the
  word after it where it is a plain lower-case word, is its subcommand or first argument;
- a maintainers' tool named by its path (`maintainers/device/run_gpu_suites.sh`, `maintainers/checks/cause_check.py`):
  a file that is there (support/ holds modules, not tools).

Each must exist (the fast tests) and its --help exit 0 (the slow one): `kernelwatch COMMAND --help`,
`python -m MODULE [WORD] --help` (argparse refuses a subcommand it does not know before it reads --help),
`bash SCRIPT --help`, `python -m maintainers.FOLDER.TOOL --help`.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.readme import code_pieces

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "maintainers" / "README.md"]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
KERNELWATCH = Path(sys.executable).with_name("kernelwatch")  # the console script of the environment that runs the tests

CONSOLE = re.compile(r"(?<![\w./:$-])kernelwatch\s+([a-z][a-z-]*)\b(?![./])")
MODULE = re.compile(r"\bpython3?\"?\s+-m\s+([A-Za-z_][\w.]*\w)(?![\w.<])(?:\s+([a-z][a-z_-]*)(?=\s|$|[`'\"]))?")
TOOL_PATH = re.compile(r"(?<![\w./-])(maintainers/[\w/.-]+\.(?:sh|py))\b")


@dataclass(frozen=True)
class Named:
    where: str  # the file that names it
    kind: str  # "console", "module" or "tool"
    name: str  # the console script's command, the module, or the tool's path
    word: str = ""  # a module's subcommand or first argument

    def __str__(self) -> str:
        said = {"console": f"kernelwatch {self.name}", "module": f"python -m {self.name} {self.word}".strip(),
                "tool": self.name}[self.kind]
        return f"{self.where}: {said}"

    def help_command(self) -> list[str]:
        if self.kind == "console":
            return [str(KERNELWATCH), self.name, "--help"]
        if self.kind == "module":
            return [sys.executable, "-m", self.name, *([self.word] if self.word else []), "--help"]
        if self.name.endswith(".sh"):
            return ["bash", self.name, "--help"]
        return [sys.executable, "-m", self.name.removesuffix(".py").replace("/", "."), "--help"]


def named_in(where: str, text: str, code: list[str]) -> set[Named]:
    """The commands a file names: `code` is what of `text` is code (a page's spans and blocks, a workflow whole)."""
    found = {Named(where, "console", command) for piece in code for command in CONSOLE.findall(piece)}
    found |= {Named(where, "module", module, word) for piece in code for module, word in MODULE.findall(piece)}
    found |= {Named(where, "tool", path) for path in TOOL_PATH.findall(text)
              if not path.startswith("maintainers/support/")}
    return found


def named_commands() -> list[Named]:
    found: set[Named] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found |= named_in(str(page.relative_to(ROOT)), text, code_pieces(text))
    for workflow in WORKFLOWS:
        text = workflow.read_text(encoding="utf-8")
        found |= named_in(str(workflow.relative_to(ROOT)), text, [" ".join(text.split())])
    return sorted(found, key=str)


def console_commands() -> set[str]:
    from kernelwatch.cli import parser

    return set(parser()._subparsers._group_actions[0].choices)


def missing(named: Named) -> bool:
    if named.kind == "console":
        return named.name not in console_commands()
    if named.kind == "tool":
        return not (ROOT / named.name).is_file()
    try:
        return importlib.util.find_spec(named.name) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


def fails_to_run(named: Named) -> str | None:
    """Why `--help` of a named command did not exit 0, or None."""
    result = subprocess.run(named.help_command(), capture_output=True, text=True, cwd=ROOT, timeout=120)
    return None if result.returncode == 0 else f"exit {result.returncode}: {(result.stderr or result.stdout).strip()[-300:]}"


NAMED = named_commands()


def test_the_commands_are_found_in_every_kind_of_file_and_form():
    kinds = {(Path(n.where).suffix, n.kind) for n in NAMED}
    assert {(".md", "console"), (".md", "module"), (".md", "tool"), (".yml", "module")} <= kinds
    said = {str(n).split(": ", 1)[1] for n in NAMED}
    assert {"kernelwatch plot", "python -m kernelwatch.history changes", "maintainers/device/run_gpu_suites.sh",
            "python -m maintainers.mutation.replay export"} <= said


@pytest.mark.parametrize("named", NAMED, ids=str)
def test_every_named_command_exists(named):
    assert not missing(named), f"{named} names nothing that exists"


@pytest.mark.slow  # one process per command: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("named", NAMED, ids=str)
def test_every_named_command_runs_its_help(named):
    why = fails_to_run(named)
    assert why is None, f"{named}: --help failed ({why})"


SAMPLE = """Run `kernelwatch frobnicate runs/` and `kernelwatch plot baselines/x`, then
`python -m kernelwatch.no_such_module`, `python3 -m kernelwatch.history frobnicate` and
`bash maintainers/device/no_such_step.sh`; the prose word kernelwatch judges nothing, and neither does a
placeholder (`python -m maintainers.<folder>.<name>`, `bash maintainers/<folder>/<name>.sh`).
"""


@pytest.mark.slow  # runs the commands of a sample text: `tox -e unit` leaves it out, CI's slow pass runs it
def test_a_made_up_command_in_a_sample_text_is_reported():
    named = named_in("sample.md", SAMPLE, code_pieces(SAMPLE))
    assert {str(n).split(": ", 1)[1] for n in named} == {
        "kernelwatch frobnicate", "kernelwatch plot", "python -m kernelwatch.no_such_module",
        "python -m kernelwatch.history frobnicate", "maintainers/device/no_such_step.sh"}
    assert {str(n).split(": ", 1)[1] for n in named if missing(n)} == {
        "kernelwatch frobnicate", "python -m kernelwatch.no_such_module", "maintainers/device/no_such_step.sh"}
    # the module is there, its subcommand is not: only running it tells
    (unknown,) = [n for n in named if n.word == "frobnicate"]
    assert "invalid choice: 'frobnicate'" in fails_to_run(unknown)
    (known,) = [n for n in named if n.kind == "console" and n.name == "plot"]
    assert fails_to_run(known) is None
