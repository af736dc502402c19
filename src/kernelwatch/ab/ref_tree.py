"""The base side of a pull-request comparison: another git ref's tree, checked out beside the user's.

`RefTree(repo_root, ref)` is a context manager. On entering it resolves `ref` to a commit and
adds a detached git worktree of that commit in a temporary directory (the user's checkout,
index and uncommitted changes are not touched). `load_package(path, alias)` then imports the
package at `path` of that tree (the project's kernel library, src/kernelwatch/ab/library.py)
under another name, so base and head kernels live side by side in one process. On exit the
worktree is removed and pruned, also after an error inside the with-block.

The base modules read their CUDA sources from the worktree when they compile, so use them
inside the with-block only; on exit they are dropped from `sys.modules`.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


class RefError(Exception):
    """A git ref that cannot serve as the base: unknown, not in a repository, or without the package asked for."""


def _git(repo_root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo_root), *args], capture_output=True, text=True, check=False)


def resolve_ref(repo_root: Path, ref: str) -> str:
    """The commit `ref` names in the repository at `repo_root`; RefError when it names none."""
    if _git(repo_root, "rev-parse", "--git-dir").returncode != 0:
        raise RefError(f"{repo_root} is not a git repository")
    resolved = _git(repo_root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if resolved.returncode != 0:
        raise RefError(f"unknown git ref {ref!r} in {repo_root}")
    return resolved.stdout.strip()


def _forget_modules(alias: str) -> None:
    """Drop a package imported under `alias`, and its submodules, from sys.modules."""
    for module in [m for m in sys.modules if m == alias or m.startswith(alias + ".")]:
        del sys.modules[module]


class RefTree:
    """A temporary, detached git worktree of `ref` in the repository at `repo_root`.

    Attributes, set on entering: `sha` (the full commit id) and `path` (the worktree's root).
    """

    def __init__(self, repo_root: Path, ref: str):
        if not isinstance(ref, str) or not ref.strip() or ref.startswith("-"):
            raise RefError(f"not a git ref: {ref!r}")
        self.repo_root = Path(repo_root)
        self.ref = ref
        self.sha: str | None = None
        self.path: Path | None = None
        self._aliases: list[str] = []

    def __enter__(self) -> RefTree:
        if self.path is not None:
            raise RuntimeError(f"the worktree of {self.ref!r} is already checked out at {self.path}")
        self.sha = resolve_ref(self.repo_root, self.ref)
        # the directory's unique name also names git's record of the worktree
        self.path = Path(tempfile.mkdtemp(prefix="kernelwatch-base-"))
        try:
            # hooks are the user's, for their own checkouts; this one is a read-only copy
            added = _git(self.repo_root, "-c", "core.hooksPath=/dev/null", "worktree", "add", "--detach",
                         str(self.path), self.sha)
            if added.returncode != 0:
                raise RefError(f"git could not check out {self.ref!r} ({self.sha[:12]}): {added.stderr.strip()}")
        except BaseException:
            self._remove()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self._remove()

    def _remove(self) -> None:
        for alias in self._aliases:
            _forget_modules(alias)
        self._aliases.clear()
        if self.path is None:
            return
        _git(self.repo_root, "worktree", "remove", "--force", str(self.path))
        _git(self.repo_root, "worktree", "prune")
        shutil.rmtree(self.path, ignore_errors=True)
        self.path = None

    def load_package(self, path: str, alias: str):
        """Import the package at `path` of this tree (its folder relative to the top, "kernels" or
        "python/mylib"; a module's file, "mylib.py") as `alias` and return it.

        The package's relative imports resolve inside the alias (`alias.registry`, ...); an
        already imported package of the same name (the head's) is not touched.
        Raises RefError when the tree has no such package or it fails to import.
        """
        if self.path is None:
            raise RuntimeError("RefTree.load_package needs the tree checked out: call it inside the with-block")
        if alias == Path(path).name.removesuffix(".py") or (alias in sys.modules and alias not in self._aliases):
            raise ValueError(f"alias {alias!r} would shadow an imported or head package; choose another name")
        target = self.path / path
        if not (target / "__init__.py").is_file() and not (target.suffix == ".py" and target.is_file()):
            raise RefError(f"{self.ref!r} ({self.sha[:12]}) has no package at {path}")
        if alias not in self._aliases:
            self._aliases.append(alias)
        try:
            return import_package_as(target, alias)
        except Exception as error:
            raise RefError(f"{path} of {self.ref!r} ({self.sha[:12]}) does not import: {error!r}") from error


def import_package_as(package_dir: Path, alias: str):
    """Import the package in `package_dir` (or the module in a .py file) under the module name `alias` and
    return it.

    Its relative imports resolve inside the alias (`alias.registry`, ...), so a package of
    the same name imported before (the head's) is not touched. A package
    imported under `alias` before is replaced; one that fails to import leaves nothing
    under `alias` and raises what it raised.
    """
    _forget_modules(alias)
    package_dir = Path(package_dir)
    if package_dir.suffix == ".py":
        spec = importlib.util.spec_from_file_location(alias, package_dir)
    else:
        spec = importlib.util.spec_from_file_location(alias, package_dir / "__init__.py",
                                                      submodule_search_locations=[str(package_dir)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        _forget_modules(alias)
        raise
    return module
