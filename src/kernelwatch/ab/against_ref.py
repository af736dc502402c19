"""Same-run comparison of the working tree with a git ref: `pytest suites/ --kernelwatch-compare-ref REF`.

What a pull request needs to know is whether it made a kernel slower than the
code it replaces, on this GPU, now. With `--kernelwatch-compare-ref REF`:

* REF's tree is checked out into a temporary git worktree (the checkout is
  left alone; uncommitted changes are fine: head is the working tree), and
  REF's `kernels` package is imported beside the current one
  (src/kernelwatch/ab/ref_tree.py).
* Every timed case is prepared on both sides with the same inputs
  (`prepared.same_case_in(package)`). A kernel whose machine code and launch
  configuration are identical on both sides is "unchanged" and is
  not timed (src/kernelwatch/ab/identity.py), unless `--kernelwatch-compare-ref-all`.
* Otherwise base and head are timed interleaved, A B A B ..., on one GPU with
  the same inputs and cache state, and judged on the ratio of medians with a
  bootstrap confidence interval over the pairs (src/kernelwatch/verdict/paired.py). A slower
  case fails its own test unless the slowdown was accepted
  (`--kernelwatch-accept-slowdown REASON`: a pull-request label or commit trailer), when
  its label is "accepted".
* Kernels that exist on one side only are reported as new or removed: a case
  whose kernel REF's registry does not know ("unknown ... kernel", a
  ValueError of its launchers) is new; any other error preparing the base
  side is an error of the run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from kernelwatch.ab.identity import build_identity
from kernelwatch.ab.ref_tree import RefTree
from kernelwatch.verdict.labels import ACCEPTED, SLOWER, Verdict
from kernelwatch.verdict.paired import judge_paired, new, removed, unchanged

BASE_ALIAS = "kernel_suite_base_kernels"


NO_BUILD_INFO = object()


def build_of(prepared):
    """`prepared.build()`, or NO_BUILD_INFO for cases of kernels packages older than build()."""
    build = getattr(prepared, "build", None)
    return build() if build is not None else NO_BUILD_INFO


def case_identity(package, build, arch: str) -> str:
    """Identity of one side's build of a case: machine code plus launch.

    `build` is what `prepared.build()` returns (kernels.compile.KernelBuild):
    None for library calls (cuBLAS, CuPy's add: the same library on both
    sides), else the source, function, defines and launch text. The source is
    read through `package`, so each side compiles its own files.
    """
    if build is None:
        return "library"
    compile_module = package.compile
    text = compile_module.load_source(build.source)
    options = (*compile_module.BASE_OPTIONS, *compile_module.define_options(build.defines))
    code = build_identity(text, options, arch, name=build.source, function=build.function)
    return f"{code}:{hashlib.sha256(build.launch.encode()).hexdigest()[:16]}"


@dataclass
class RefComparison:
    """The base side of a `--kernelwatch-compare-ref` run and its verdicts."""

    repo_root: Path
    ref: str
    arch: str  # e.g. "sm_90": the GPU the run is on
    time_identical: bool = False
    accepted: str | None = None  # why slower cases are accepted (a label or commit trailer said so)
    verdicts: list[Verdict] = field(default_factory=list)
    builds: dict = field(default_factory=dict)  # case -> (base build, head build) of every case timed
    cards: dict = field(default_factory=dict)  # case -> the cause card (markdown lines) of a slower case
    timed_base: dict = field(default_factory=dict)  # case -> (base's run, its median) of every case timed
    launched: dict = field(default_factory=dict)  # case -> (base's, head's kernels as CUPTI saw them) of every case timed

    def __post_init__(self):
        self.tree = RefTree(self.repo_root, self.ref)
        self.tree.__enter__()
        try:
            self.base = self.tree.load_package(alias=BASE_ALIAS)
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
        import kernels as head_package

        base_build, head_build = build_of(base_prepared), build_of(prepared)
        # a side that cannot describe its build is always timed
        same = NO_BUILD_INFO not in (base_build, head_build) and (
            case_identity(self.base, base_build, self.arch) == case_identity(head_package, head_build, self.arch))
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

    def removed_kernels(self, head_package) -> list[Verdict]:
        """Registry entries of REF that the working tree no longer has."""
        gone = []
        for registry in ("MATMUL_KERNELS", "ELEMENTWISE_KERNELS"):
            for name in sorted(set(getattr(self.base, registry, {})) - set(getattr(head_package, registry, {}))):
                gone.append(self._keep(removed(f"{registry}[{name}]")))
        return gone
