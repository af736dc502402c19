"""Citations of the method and the lab notes: every anchor of docs/method.md and every file of notes/ that a file of
the repository cites exists, and no file cites the single notes file that notes/ replaced.

A citation is docs/method.md or a markdown file of notes/, named from the repository root, optionally after `../`
(a link from docs/ or notes/), optionally followed by `#` and an anchor. An anchor exists where the file has a
heading whose GitHub anchor it is (lower case, the heading's text without punctuation, spaces as hyphens, `-1`,
`-2` after repeats) or an explicit `<a id="...">`. A markdown file's links to its own anchors (`](#anchor)`) are
checked the same way. The dated notes files are the lab's record as written: they may name the old file; nothing
else may.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OLD_NOTES = "NOTES" + ".md"  # spelled apart, as the examples below are, so that this file cites nothing
METHOD = "docs/" + "method.md"
NOTES = "notes" + "/"
TEXT_SUFFIXES = {".py", ".md", ".sh", ".yml", ".yaml", ".ini", ".toml", ".txt", ".cfg", ".cu", ".cuh", ""}
CITATION = re.compile(r"(?<![\w/.-])(?:\.\./)?(docs/method\.md|notes/[\w.-]+\.md)(?:#([^\s)\]`'\",;]+))?")
OWN_ANCHOR = re.compile(r"\]\(#([^)\s]+)\)")
EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")


def repository_files(root: Path) -> list[Path]:
    """The text files git tracks under root (every file below it where root is no git checkout)."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
        paths = [root / name for name in listed.splitlines()]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in root.rglob("*") if p.is_file() and not {".git", ".tox", ".venv"} & set(p.parts)]
    return [p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file()]


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text: links read as their text, then lower case, every character but a
    letter, a mark, a digit, `_`, `-` or a space dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """Every anchor of a markdown file: its headings' (outside code blocks, repeats numbered) and its <a id>s."""
    found, seen, fenced = set(), {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        found.update(EXPLICIT.findall(line))
        if not fenced and (match := HEADING.fullmatch(line)):
            anchor = github_anchor(match.group(2))
            repeat = seen.get(anchor, 0)
            seen[anchor] = repeat + 1
            found.add(f"{anchor}-{repeat}" if repeat else anchor)
    return found


def broken_citations(root: Path, files: list[Path]) -> list[str]:
    """'file:line: citation (why)' for each citation whose file or anchor is not there."""
    anchors: dict[Path, set[str] | None] = {}

    def known(target: Path) -> set[str] | None:
        if target not in anchors:
            anchors[target] = anchors_of(target) if target.is_file() else None
        return anchors[target]

    broken = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            cited = [(root / name, anchor) for name, anchor in CITATION.findall(line)]
            if path.suffix == ".md":
                cited += [(path, anchor) for anchor in OWN_ANCHOR.findall(line)]
            for target, anchor in cited:
                anchor = anchor.rstrip(".:")
                there = known(target)
                where = f"{path.relative_to(root)}:{number}: {target.relative_to(root)}{'#' + anchor if anchor else ''}"
                if there is None:
                    broken.append(f"{where} (no such file)")
                elif anchor and anchor not in there:
                    broken.append(f"{where} (no such anchor)")
    return broken


def old_notes_mentions(root: Path, files: list[Path]) -> list[str]:
    """'file:line' for each line outside the dated notes that names the old single notes file."""
    found = []
    for path in files:
        relative = path.relative_to(root)
        if relative.parts[0] == "notes":
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        found += [f"{relative}:{number}" for number, line in enumerate(lines, 1) if OLD_NOTES in line]
    return found


def test_every_cited_method_anchor_and_notes_file_exists():
    files = repository_files(ROOT)
    cited = sum(len(CITATION.findall(p.read_text(encoding="utf-8", errors="replace"))) for p in files)
    assert cited >= 40, f"only {cited} citations found: the pattern no longer reads them"
    broken = broken_citations(ROOT, files)
    assert not broken, "citations of nothing:\n" + "\n".join(broken)


def test_no_file_cites_the_old_single_notes_file():
    named = old_notes_mentions(ROOT, repository_files(ROOT))
    assert not named, f"{OLD_NOTES} is gone (notes/ by date, docs/method.md's anchors): named at " + ", ".join(named)


def test_the_notes_index_lists_every_dated_notes_file():
    index = (ROOT / "notes" / "README.md").read_text(encoding="utf-8")
    dated = sorted(p.name for p in (ROOT / "notes").glob("2*.md"))
    assert dated, "notes/ holds no dated file"
    listed = re.findall(r"^- \[(\S+\.md)\]\(\1\)", index, flags=re.M)
    assert listed == sorted(dated, reverse=True), f"notes/README.md lists {listed}, newest first; notes/ has {dated}"


@pytest.mark.parametrize(("heading", "anchor"), [
    ("2026-11-30, third session: a pooled reference and a 1.5% same-GPU floor",
     "2026-11-30-third-session-a-pooled-reference-and-a-15-same-gpu-floor"),
    ("Same-run comparison with a git ref (`--compare-ref`, hosts B, C, E and F)",
     "same-run-comparison-with-a-git-ref---compare-ref-hosts-b-c-e-and-f"),
    ("Sensitivity: a calibrated 3% slowdown on the 33 GPU-timed cases, all 50 µs or more",
     "sensitivity-a-calibrated-3-slowdown-on-the-33-gpu-timed-cases-all-50-µs-or-more"),
    ("Energy per launch (`src/kernelwatch/timing/energy.py`)", "energy-per-launch-srckernelwatchtimingenergypy"),
])
def test_a_headings_anchor_is_githubs(heading, anchor):
    assert github_anchor(heading) == anchor


def test_the_checker_finds_a_missing_anchor_a_missing_notes_file_and_the_old_name(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / METHOD).write_text('# Method\n\n## The timer\n\n<a id="kept"></a>\n\n## The timer\n\n'
                                   "See [below](#the-timer-1) and [nowhere](#gone).\n")
    (tmp_path / f"{NOTES}2026-12-01.md").write_text(f"## 2026-12-01, a session\n\nIt cites {OLD_NOTES} as it was.\n")
    good = tmp_path / "good.py"
    good.write_text(f"# {METHOD}#the-timer, {METHOD}#kept, {METHOD}#the-timer-1,\n"
                    f"# {NOTES}2026-12-01.md#2026-12-01-a-session and ../{NOTES}2026-12-01.md.\n")
    bad = tmp_path / "bad.py"
    bad.write_text(f"# {METHOD}#no-such-anchor\n# {NOTES}2026-12-02.md#anything\n# the old {OLD_NOTES}\n")
    files = [good, bad, tmp_path / METHOD, tmp_path / f"{NOTES}2026-12-01.md"]
    assert broken_citations(tmp_path, files) == [
        f"bad.py:1: {METHOD}#no-such-anchor (no such anchor)",
        f"bad.py:2: {NOTES}2026-12-02.md#anything (no such file)",
        f"{METHOD}:9: {METHOD}#gone (no such anchor)",
    ]
    assert old_notes_mentions(tmp_path, files) == ["bad.py:3"]
