"""The code one pytest process times, and where its slowdowns are traced back to.

The checkout and its head (whose git history gives a slower case's window of commits,
src/kernelwatch/ab/commits.py), the project's kernel library, the comparison against a git ref
under `--kernelwatch-compare-ref`, and the kernel library at the reference runs' commits that
the cause cards build from (src/kernelwatch/cause/stored.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the annotations only: these import CuPy or git worktrees when used
    from kernelwatch.ab.against_ref import RefComparison
    from kernelwatch.ab.commits import CommitWindow
    from kernelwatch.ab.library import Library
    from kernelwatch.cause.stored import PackagesAtCommits


@dataclass(eq=False)
class CodeUnderTest:
    """The checkout, its kernel library, and what its timings are traced back to."""

    repo: Path | None = None  # the checkout the run is in
    # (commit, dirty) of that checkout, read once (kernelwatch.ab.commits.head_of)
    head: tuple[str | None, bool] | None = None
    windows: dict[str, CommitWindow] = field(default_factory=dict)  # a reference commit -> its window up to `head`
    # the project's kernel library (the kernelwatch_kernels ini key), imported where a GPU is; None where the
    # project names none: no machine-code identity, cause cards nor --kernelwatch-compare-ref
    library: Library | None = None
    ref: RefComparison | None = None  # under --kernelwatch-compare-ref
    # the kernel library at the reference runs' commits, checked out for the cause cards
    reference_packages: PackagesAtCommits | None = None
    diagnose: bool = False  # --kernelwatch-diagnose: a slower case's cause card has its dynamic half (ncu) too

    def close(self) -> None:
        """Remove the worktrees checked out for the ref comparison and the cards."""
        if self.ref is not None:
            self.ref.close()
        if self.reference_packages is not None:
            self.reference_packages.close()
