"""The window of a slower case: the commits between its newest reference run and this run, read from git.

A verdict against stored runs names the runs it pooled (src/kernelwatch/verdict/labels.py,
`ReferenceRun`), each with the commit it was made at. When a case is slower, the
commits that can have made it so are those after the newest of them, up to the
commit of this run: `window(repo, base, head)` lists them, first parent, oldest
first, with their subjects, and reads every `Accept-Slowdown` trailer of the range
(of any commit in it, not only the first-parent ones: a merged branch's commit
carries its trailer). Where git cannot list them (the reference commit is not in
this checkout: a shallow clone, or a run of another fork) the window says so and
why, and holds no commit. On a GitHub runner (GITHUB_SERVER_URL, GITHUB_REPOSITORY)
it carries the compare link of the range.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelwatch.ab.ref_tree import RefError, resolve_ref
from kernelwatch.verdict.acceptance import TRAILER

__all__ = ["Commit", "CommitWindow", "RefError", "head_of", "resolve_ref", "window"]

SHORT = 12  # characters of a commit id shown


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str = ""


@dataclass(frozen=True)
class CommitWindow:
    """The commits that may have slowed a case: after `base` (excluded), up to `head` (included)."""

    base: str | None  # the newest reference run's commit
    head: str | None  # this run's commit
    commits: tuple[Commit, ...] = ()  # first parent, oldest first
    acceptances: tuple[tuple[str, str], ...] = ()  # (commit, Accept-Slowdown value), oldest first
    unknown: str = ""  # why the commits could not be listed ("" when they were)
    head_dirty: bool = False  # this run's tree had uncommitted changes beside `head`
    link: str | None = None  # the compare page of the range, on GitHub

    @property
    def range_text(self) -> str:
        return f"{(self.base or '?')[:SHORT]}..{(self.head or '?')[:SHORT]}"

    def as_dict(self) -> dict:
        return {"base": self.base, "head": self.head, "commits": [[c.sha, c.subject] for c in self.commits],
                "acceptances": [list(pair) for pair in self.acceptances], "unknown": self.unknown,
                "head_dirty": self.head_dirty, "link": self.link}

    @classmethod
    def from_dict(cls, data: Mapping) -> CommitWindow:
        return cls(data.get("base"), data.get("head"),
                   tuple(Commit(str(sha), str(subject)) for sha, subject in data.get("commits") or ()),
                   tuple((str(sha), str(value)) for sha, value in data.get("acceptances") or ()),
                   str(data.get("unknown") or ""), bool(data.get("head_dirty")), data.get("link"))

    def lines(self, limit: int = 12) -> list[str]:
        """The window in words: its range and count, then its commits (oldest first, at most `limit`)."""
        if limit < 0:
            raise ValueError(f"limit must be 0 or more, got {limit}")
        if self.unknown:
            return [f"commits {self.range_text}: not listed ({self.unknown})"]
        count = len(self.commits)
        head = [f"commits {self.range_text}: {count} commit{'' if count == 1 else 's'} (first parent, oldest first)"
                + (f"; {self.link}" if self.link else "")
                + ("; this run's tree also had uncommitted changes" if self.head_dirty else "")]
        if count <= limit:
            shown = list(self.commits)
        else:  # the oldest and the newest, the newest one more where `limit` is odd
            first, last = limit // 2, limit - limit // 2
            shown = [*self.commits[:first], None, *self.commits[count - last:]]
        return head + [f"  {c.sha[:SHORT]} {c.subject}" if c else f"  ... {count - limit} more" for c in shown]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        words = (done.stderr or "").strip().splitlines()
        raise RefError(f"git {' '.join(args[:2])} failed: {words[-1] if words else f'exit {done.returncode}'}")
    return done.stdout


def head_of(repo: Path) -> tuple[str | None, bool]:
    """This checkout's commit and whether its tracked files differ from it; (None, False) outside git."""
    try:
        sha = _git(Path(repo), "rev-parse", "--verify", "HEAD").strip()
        dirty = bool(_git(Path(repo), "status", "--porcelain", "--untracked-files=no").strip())
    except (RefError, OSError, subprocess.TimeoutExpired):
        return None, False
    return sha, dirty


def _compare_link(base: str, head: str, env: Mapping[str, str]) -> str | None:
    server, repository = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY")
    return f"{server.rstrip('/')}/{repository}/compare/{base}...{head}" if server and repository else None


def window(repo: Path, base: str | None, head: str | None, *, head_dirty: bool = False,
           env: Mapping[str, str] | None = None) -> CommitWindow:
    """The window from `base` to `head` in the checkout at `repo` (module docstring)."""
    env = os.environ if env is None else env
    if not base or not head:
        missing = "the reference runs name no commit" if not base else "this run's commit is not known (no git checkout)"
        return CommitWindow(base, head, unknown=missing, head_dirty=head_dirty)
    repo = Path(repo)
    try:
        base_sha, head_sha = resolve_ref(repo, base), resolve_ref(repo, head)
    except RefError as error:
        return CommitWindow(base, head, unknown=f"{error}: a shallow clone? (actions/checkout with fetch-depth: 0 has "
                                          f"every commit)", head_dirty=head_dirty)
    try:
        # records end in NUL and a record's fields are lines: a subject holds neither, nor does a trailer's value
        # once its continuation lines are unfolded
        listed = _git(repo, "log", "-z", "--first-parent", "--reverse", "--format=%H%n%s", f"{base_sha}..{head_sha}")
        trailers = _git(repo, "log", "-z", "--topo-order", "--reverse",
                        f"--format=%H%n%(trailers:key={TRAILER},valueonly,unfold,separator=%x0a)",
                        f"{base_sha}..{head_sha}")
    except (RefError, OSError, subprocess.TimeoutExpired) as error:
        return CommitWindow(base_sha, head_sha, unknown=str(error), head_dirty=head_dirty)
    commits = tuple(Commit(*record.split("\n", 1)) for record in listed.split("\0") if record)
    acceptances = []
    for record in trailers.split("\0"):
        sha, *values = record.split("\n")
        acceptances += [(sha, value.strip()) for value in values if value.strip()]
    return CommitWindow(base_sha, head_sha, commits, tuple(acceptances), head_dirty=head_dirty,
                  link=_compare_link(base_sha, head_sha, env))
