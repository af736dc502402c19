"""Same-run comparison of the working tree with a git ref: `pytest suites/ --kernelwatch-compare-ref REF`.

What a pull request needs to know is whether it made a kernel slower than the
code it replaces, on this GPU, now. With `--kernelwatch-compare-ref REF`:

* REF's tree is checked out into a temporary git worktree (the checkout is
  left alone; uncommitted changes are fine: head is the working tree), and
  REF's version of the project's kernel library is imported beside the current
  one (src/kernelwatch/ab/ref_tree.py, src/kernelwatch/ab/library.py).
* Every timed case is prepared on both sides with the same inputs
  (`prepared.same_case_in(library)`). A kernel whose machine code and launch
  configuration are identical on both sides is "unchanged" and is
  not timed (src/kernelwatch/ab/identity.py), unless `--kernelwatch-compare-ref-all`.
* Otherwise base and head are timed interleaved, A B A B ..., on one GPU with
  the same inputs and cache state, and judged on the ratio of medians with a
  bootstrap confidence interval over the pairs (src/kernelwatch/verdict/paired.py). A slower
  case fails its own test unless the slowdown was accepted
  (`--kernelwatch-accept-slowdown REASON`: a pull-request label or commit trailer), when
  its label is "accepted".
* Kernels that exist on one side only are reported as new or removed: a case
  whose kernel REF's library does not know ("unknown ... kernel", a
  ValueError of `same_case_in`) is new; any other error preparing the base
  side is an error of the run. A kernel REF's `kernel_names()` has and the
  head's lacks is removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from kernelwatch.ab.library import Library, LibraryError, case_identity, kernel_names
from kernelwatch.ab.ref_tree import RefTree
from kernelwatch.verdict.labels import ACCEPTED, SLOWER, Verdict
from kernelwatch.verdict.paired import judge_paired, new, removed, unchanged

BASE_ALIAS = "kernelwatch_base_kernels"


NO_BUILD_INFO = object()


def build_of(prepared):
    """`prepared.build()`, or NO_BUILD_INFO for a case that cannot describe its build (no build())."""
    build = getattr(prepared, "build", None)
    return build() if build is not None else NO_BUILD_INFO


def identity_of(package, build, arch: str):
    """`case_identity`, or NO_BUILD_INFO where the side's library cannot give its source (older than source_of)."""
    try:
        return case_identity(package, build, arch)
    except LibraryError:
        return NO_BUILD_INFO


@dataclass
class RefComparison:
    """The base side of a `--kernelwatch-compare-ref` run and its verdicts."""

    repo_root: Path
    ref: str
    arch: str  # e.g. "sm_90": the GPU the run is on
    library: Library  # the head's kernel library; REF's is `base`, loaded from the same path of REF's tree
    time_identical: bool = False
    accepted: str | None = None  # why slower cases are accepted (a label or commit trailer said so)
    verdicts: list[Verdict] = field(default_factory=list)
    builds: dict = field(default_factory=dict)  # case -> (base build, head build) of every case timed
    cards: dict = field(default_factory=dict)  # case -> the cause card (markdown lines) of a slower case
    timed_base: dict = field(default_factory=dict)  # case -> (base's run, its median) of every case timed
    launched: dict = field(default_factory=dict)  # case -> (base's, head's kernels as CUPTI saw them) of every case timed

    def __post_init__(self):
        path = self.library.located()  # LibraryError (before anything is checked out) where it lies in no repository
        self.tree = RefTree(self.repo_root, self.ref)
        self.tree.__enter__()
        try:
            self.base = self.tree.load_package(path, alias=BASE_ALIAS)
        except BaseException:
            self.tree.__exit__(None, None, None)
            raise

    def close(self) -> None:
        self.tree.__exit__(None, None, None)

    @property
    def reference(self) -> str:
        """The ref as a verdict names it: "origin/main (0123456789)"."""
        return f"{self.ref} ({self.tree.sha[:10]})"

    def _keep(self, verdict: Verdict) -> Verdict:
        """Name the reference, apply --kernelwatch-accept-slowdown, and keep the verdict for the report."""
        verdict = replace(verdict, reference=self.reference)
        if verdict.label == SLOWER and self.accepted is not None:
            verdict = replace(verdict, label=ACCEPTED, reason=f"{verdict.reason}; accepted: {self.accepted}")
        self.verdicts.append(verdict)
        return verdict

    def compare(self, case: str, prepared, timer, profile, flush: bool, detectable) -> tuple[Verdict, object]:
        """Judge one case; returns its verdict and head's measurement (None when not timed).

        `detectable(median_s)` gives the smallest change worth flagging for a case of that median.
        """
        try:
            base_prepared = prepared.same_case_in(self.base)
        except ValueError as error:
            # new only when REF's registry lacks the kernel ("unknown matmul kernel 'x'; known: ...");
            # any other error on the base side is a bug, never a "new" kernel
            if not str(error).startswith("unknown"):
                raise
            measurement = timer.measure(prepared.run, profile, flush=flush, case=case)
            return self._keep(replace(new(case, measurement.samples), reason=f"not in {self.ref}: {error}")), measurement
        base_build, head_build = build_of(base_prepared), build_of(prepared)
        # a side that cannot describe its build (no build(), a library older than source_of) is always timed
        same = False
        if NO_BUILD_INFO not in (base_build, head_build):
            base_code = identity_of(self.base, base_build, self.arch)
            same = base_code is not NO_BUILD_INFO and base_code == case_identity(self.library.package, head_build,
                                                                                 self.arch)
        if same and not self.time_identical:
            return self._keep(unchanged(case)), None
        self.builds[case] = (base_build, head_build)
        base_m, head_m = timer.measure_interleaved(base_prepared.run, prepared.run, profile, flush=flush, case=case)
        self.timed_base[case] = (base_prepared.run, base_m.median)
        self.launched[case] = (base_m.launched_kernels, head_m.launched_kernels)
        verdict = judge_paired(case, base_m.samples, head_m.samples, detectable=detectable(base_m.median))
        if same:
            verdict = replace(verdict, reason=verdict.reason + " (same SASS, timed anyway)")
        return self._keep(verdict), head_m

    def removed_kernels(self) -> list[Verdict]:
        """The kernels REF's library names (`kernel_names()`) that the working tree's no longer has; LibraryError
        where REF's library cannot name its kernels (older than kernel_names)."""
        gone = sorted(kernel_names(self.base) - kernel_names(self.library.package))
        return [self._keep(removed(name)) for name in gone]
