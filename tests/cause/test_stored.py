"""src/kernelwatch/cause/stored.py's PackagesAtCommits on the CPU, a stand-in for git's worktrees: each commit checked
out once, its kernel library imported from the library's path under an alias naming the commit, a commit that cannot
be read an error."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from kernelwatch.ab.ref_tree import RefError
from kernelwatch.cause import stored


class FakeTree:
    """A RefTree that resolves a commit to itself and checks it out nowhere; "bad..." commits cannot be."""

    made: list[FakeTree] = []

    def __init__(self, repo_root: Path, ref: str):
        self.ref, self.sha, self.path, self.exited = ref, None, None, False
        FakeTree.made.append(self)

    def __enter__(self):
        if self.ref.startswith("bad"):
            raise RefError(f"git could not check out {self.ref!r}")
        self.sha, self.path = self.ref, Path("/worktrees") / self.ref
        return self

    def __exit__(self, *exc_info):
        self.exited = True

    def load_package(self, path: str, alias: str):
        self.loaded = path
        return types.ModuleType(alias)


@pytest.fixture
def packages(monkeypatch):
    FakeTree.made = []
    monkeypatch.setattr(stored, "RefTree", FakeTree)
    return stored.PackagesAtCommits(Path("."), "python/mylib")


def test_each_commits_package_is_imported_once_under_an_alias_naming_its_short_commit(packages):
    old, new = "0123456789ab" + "c" * 28, "fedcba987654" + "d" * 28
    assert packages.package(old) is packages.package(old)
    assert packages.package(old).__name__ == "kernelwatch_commit_0123456789ab"
    assert packages.package(new).__name__ == "kernelwatch_commit_fedcba987654"  # as a card names them: 12 digits
    assert len(FakeTree.made) == 2 and packages.paths() == [Path("/worktrees") / old, Path("/worktrees") / new]
    assert [tree.loaded for tree in FakeTree.made] == ["python/mylib"] * 2  # the library's path in each tree
    packages.close()
    assert all(tree.exited for tree in FakeTree.made) and packages.paths() == []


def test_a_commit_that_cannot_be_checked_out_is_the_same_error_each_time_it_is_asked_for(packages):
    for _ in range(2):
        with pytest.raises(RefError, match="could not check out 'bad1'"):
            packages.package("bad1")
    (tree,) = FakeTree.made
    assert tree.exited and packages.paths() == []
