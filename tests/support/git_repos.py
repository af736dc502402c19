"""Git repositories that tests make: one identity, no signing."""

from __future__ import annotations

import subprocess

IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def git(repo, *args) -> str:
    """`git -C repo ARGS...` with the tests' identity; its output, stripped. Raises CalledProcessError on failure."""
    return subprocess.run(["git", "-C", str(repo), *IDENTITY, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def git_init(folder) -> None:
    """`folder` as a git repository with one commit of what it holds."""
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "the suite")


def commit(folder, number: int, message: str | None = None) -> str:
    """A commit of its own for change `number` (a line in notes.txt), `message` its message; its hash."""
    (folder / "notes.txt").write_text(f"change {number}\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", message or f"change {number}")
    return git(folder, "rev-parse", "HEAD")
