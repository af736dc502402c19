"""Cause cards from stored runs: the project's kernel library at a stored run's commit, and the card of a case
slower between two stored runs.

A stored run names its commit. `PackagesAtCommits` checks each commit out once (a
temporary git worktree, as `--kernelwatch-compare-ref` makes its base) and imports the kernel
library at its path there (src/kernelwatch/ab/library.py) under an alias of its own; `close()`
removes them. The nightly's card (src/kernelwatch/plugin/regression.py) builds the reference
side from it; `stored_card` builds both sides, for `python -m kernelwatch.compare`, from the
case's kernel and shape alone (the library's `build_for`: no GPU), so the card has its static half.
`environment_pairs` pairs what two runs recorded of where they ran (their machine_info);
a card lists the fields that differ. A run records no power limit nor NVRTC version.
"""

from __future__ import annotations

from pathlib import Path

from kernelwatch.ab.library import LibraryError, build_for
from kernelwatch.ab.ref_tree import RefError, RefTree
from kernelwatch.cause.card import no_card
from kernelwatch.cause.sides import Side, case_card

# (the card's name, the key of machine_info's GPU part) of each field of a run's environment
ENVIRONMENT = (("host", "host"), ("GPU", "uuid"), ("driver", "driver"), ("CUDA runtime", "cuda_runtime"),
               ("CUDA driver API", "cuda_driver_api"), ("NVRTC", "nvrtc"), ("CuPy", "cupy"),
               ("SM clock max (MHz)", "sm_clock_max_mhz"), ("memory clock max (MHz)", "memory_clock_max_mhz"),
               ("power limit (W)", "power_limit_w"))


def environment_pairs(old: dict, new: dict) -> dict[str, tuple[str, str]]:
    """Each environment field of two runs' machine_info (pytest-benchmark's, with the suite's `gpu`):
    name -> (old, new), "?" where a run did not record it."""
    gpus = [(info or {}).get("gpu") or {} for info in (old, new)]
    pairs = {name: tuple(str(gpu.get(key, "?")) for gpu in gpus) for name, key in ENVIRONMENT}
    pairs["Python"] = tuple(str((info or {}).get("python_version", "?")) for info in (old, new))
    return pairs


class PackagesAtCommits:
    """The kernel library (at `path` of the repository, ab/library.py's Library.path) of each commit asked for,
    checked out once; RefError where it cannot be."""

    def __init__(self, repo_root: Path, path: str):
        self.repo_root = Path(repo_root)
        self.path = path
        self._found: dict[str, object] = {}  # commit -> (tree, package) or the RefError it gave

    def package(self, commit: str):
        if not commit:
            raise RefError("the stored run names no commit")
        if commit not in self._found:
            tree = RefTree(self.repo_root, commit)
            try:
                tree.__enter__()
                self._found[commit] = (tree, tree.load_package(self.path, alias=f"kernelwatch_commit_{tree.sha[:12]}"))
            except RefError as error:
                tree.__exit__(None, None, None)
                self._found[commit] = error
        found = self._found[commit]
        if isinstance(found, Exception):
            raise found
        return found[1]

    def paths(self) -> list[Path]:
        return [found[0].path for found in self._found.values() if not isinstance(found, Exception)]

    def close(self) -> None:
        for found in self._found.values():
            if not isinstance(found, Exception):
                found[0].__exit__(None, None, None)
        self._found.clear()


def stored_card(case: str, kernel: str, shape: str, old_commit: str, new_commit: str, arch: str,
                packages: PackagesAtCommits, environment: dict | None = None) -> list[str]:
    """The card of a case (its kernel at its shape) slower in the run at `new_commit` than in the one at
    `old_commit`."""
    try:
        old, new = packages.package(old_commit), packages.package(new_commit)
        lines = case_card(case, Side(old, build_for(old, kernel, shape), shape),
                          Side(new, build_for(new, kernel, shape), shape), arch, environment=environment)
    except (RefError, LibraryError, RuntimeError, ValueError, OSError) as error:
        return no_card(case, error)
    lines[2:2] = [f"The builds at commits {old_commit[:12]} (old) and {new_commit[:12]} (new), static half.", ""]
    return lines
