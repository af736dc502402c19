"""RefComparison.compare on the CPU: fake prepared cases, a fake base library and a timer that
replays samples recorded on the H200. No git worktree is made: RefTree is replaced. The head's
library is this repository's kernels package."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import kernels
import kernels.compile
import kernelwatch.ab.against_ref as ab_compare
import kernelwatch.ab.library as ab_library
from kernels.compile import KernelBuild
from kernelwatch.ab.library import Library, LibraryError
from kernelwatch.timing.profile import Profile
from kernelwatch.timing.timer import Measurement
from kernelwatch.verdict.labels import ACCEPTED, NEW, REMOVED, SAME, SLOWER, UNCHANGED
from kernelwatch.verdict.record import TIMER_CUPTI
from tests.support.sample_sets import ADD_8192_VEC4, recorded

CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-naive]"
REF = "main"
PROFILE = Profile("quick")
HEAD = Library("kernels", kernels, "kernels")

NAIVE = KernelBuild("matmul_01_naive.cu", "matmul_naive", (), "grid=(64, 64, 1) block=(16, 16) shared=0")


def detectable(median_s: float) -> float:
    return max(0.015, 0.3e-6 / median_s)  # the same-GPU floors, as kernelwatch.plugin.timed_case passes them


def recorded_pairs(slowdown: float = 1.0) -> tuple[list[float], list[float]]:
    """Base and head samples: the two halves of a recorded H200 run (110 samples of one add), the
    head's scaled by `slowdown`."""
    samples = recorded(ADD_8192_VEC4)
    half = len(samples) // 2
    return samples[:half], list(np.array(samples[half:2 * half]) * slowdown)


@dataclass
class FakeCase:
    """A prepared case as a kernel library makes one: run, build, same_case_in."""

    kernel: str
    described: KernelBuild | None

    def run(self, stream) -> None:
        raise AssertionError("the fake timer never runs a case")

    def build(self) -> KernelBuild | None:
        return self.described

    def same_case_in(self, package) -> FakeCase:
        return package.prepare(self.kernel)


class BaseCompile:
    """REF's sources: the head's, with `edits` (old -> new text) applied to them."""

    def __init__(self, edits: dict[str, str] | None = None):
        self.edits = edits or {}

    def source_of(self, build: KernelBuild) -> tuple[str, tuple[str, ...]]:
        text, options = kernels.source_of(build)
        for old, new in self.edits.items():
            assert old in text, f"{old!r} is not in {build.source}: the edit would change nothing"
            text = text.replace(old, new)
        return text, options


class BasePackage:
    """REF's kernel library: prepares the kernels of its registry, raises like the launchers otherwise."""

    def __init__(self, builds: dict[str, KernelBuild | None], compile_module: BaseCompile | None = None,
                 failure: Exception | None = None):
        self.builds = builds
        self.source_of = (compile_module or BaseCompile()).source_of
        self.failure = failure
        self.prepared: list[FakeCase] = []
        self.kernel_names = lambda: list(self.builds)
        self.__name__ = "kernelwatch_base_kernels"

    def prepare(self, kernel: str) -> FakeCase:
        if self.failure is not None:
            raise self.failure
        if kernel not in self.builds:
            raise ValueError(f"unknown matmul kernel {kernel!r}; known: {', '.join(self.builds)}")
        self.prepared.append(FakeCase(kernel, self.builds[kernel]))
        return self.prepared[-1]


class ReplayTimer:
    """Stands in for GpuTimer: returns given samples and notes what it was asked to time."""

    def __init__(self, base: list[float], head: list[float]):
        self.base, self.head = base, head
        self.calls: list[tuple] = []

    def measure(self, run, profile, flush=True, case=""):
        self.calls.append(("measure", run, case))
        return Measurement(list(self.head), "noise", timer=TIMER_CUPTI)

    def measure_interleaved(self, run_a, run_b, profile, flush=True, case=""):
        self.calls.append(("interleaved", run_a, run_b, case))
        return (Measurement(list(self.base), "noise", timer=TIMER_CUPTI, launched_kernels=("base_k",)),
                Measurement(list(self.head), "noise", timer=TIMER_CUPTI, launched_kernels=("head_k",)))


class FakeRefTree:
    """RefTree without git: 'checks out' nothing and loads the given base package."""

    sha = "0123456789abcdef0123456789abcdef01234567"

    def __init__(self, package):
        self.package = package
        self.open = False

    def __enter__(self):
        self.open = True
        return self

    def __exit__(self, *exc_info):
        self.open = False

    def load_package(self, path: str, alias: str):
        assert self.open, "the base package is loaded inside the with-block only"
        assert path == HEAD.path, "REF's library is loaded from the head's path"
        return self.package


@pytest.fixture
def comparison(monkeypatch):
    """make(base_package, **options): a RefComparison against a fake REF holding that package."""

    def make(package: BasePackage, **options) -> ab_compare.RefComparison:
        monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: FakeRefTree(package))
        return ab_compare.RefComparison(Path("/nonexistent/repository"), REF, arch="sm_90", library=HEAD, **options)

    return make


def compare(ref_comparison, head_case: FakeCase, timer: ReplayTimer):
    return ref_comparison.compare(CASE, head_case, timer, PROFILE, True, detectable)


def test_identical_machine_code_and_launch_is_unchanged_and_not_timed(comparison):
    ref = comparison(BasePackage({"naive": NAIVE}))
    timer = ReplayTimer(*recorded_pairs())
    verdict, head = compare(ref, FakeCase("naive", NAIVE), timer)
    assert (verdict.label, head) == (UNCHANGED, None)
    assert timer.calls == []
    assert ref.verdicts == [verdict] and not verdict.fails


def test_library_calls_on_both_sides_are_unchanged_and_not_timed(comparison):
    ref = comparison(BasePackage({"cublas": None}))
    timer = ReplayTimer(*recorded_pairs())
    verdict, head = compare(ref, FakeCase("cublas", None), timer)
    assert (verdict.label, head, timer.calls) == (UNCHANGED, None, [])


def test_changed_code_is_timed_interleaved_base_first_and_a_five_percent_slowdown_is_slower(comparison):
    # the base's loop multiplies in the other order: other machine code for the same launch
    base_compile = BaseCompile({"A[row * lda + k] * B[k * ldb + col]": "B[k * ldb + col] * A[row * lda + k]"})
    base = BasePackage({"naive": NAIVE}, base_compile)
    ref = comparison(base)
    timer = ReplayTimer(*recorded_pairs(slowdown=1.05))
    head_case = FakeCase("naive", NAIVE)
    verdict, head = compare(ref, head_case, timer)
    assert verdict.label == SLOWER and verdict.fails
    assert verdict.ratio == pytest.approx(1.05, rel=0.01) and verdict.ci_low > 1
    assert "timed anyway" not in verdict.reason
    (kind, run_base, run_head, case), = timer.calls
    assert (kind, case) == ("interleaved", CASE)
    assert run_base.__self__ is base.prepared[0] and run_head.__self__ is head_case
    assert head.samples == timer.head
    assert ref.launched[CASE] == (("base_k",), ("head_k",))  # what the cause card names for a library's case


def test_an_accepted_slowdown_is_labelled_accepted_and_does_not_fail(comparison):
    base_compile = BaseCompile({"float sum = 0.0f;": "float sum = -0.0f;"})
    ref = comparison(BasePackage({"naive": NAIVE}, base_compile), accepted="label accept-slowdown")
    verdict, _ = compare(ref, FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs(slowdown=1.05)))
    assert verdict.label == ACCEPTED and not verdict.fails and "accepted: label accept-slowdown" in verdict.reason
    assert verdict.ratio == pytest.approx(1.05, rel=0.01) and verdict.ci_low > 1  # slower, measured as such


def test_a_changed_launch_alone_is_timed_and_an_unchanged_speed_is_same(comparison):
    wider = KernelBuild(NAIVE.source, NAIVE.function, NAIVE.defines, "grid=(32, 64, 1) block=(32, 16) shared=0")
    ref = comparison(BasePackage({"naive": wider}))
    timer = ReplayTimer(*recorded_pairs())
    verdict, head = compare(ref, FakeCase("naive", NAIVE), timer)
    assert verdict.label == SAME and not verdict.fails
    assert [call[0] for call in timer.calls] == ["interleaved"] and head is not None
    assert "timed anyway" not in verdict.reason


def test_a_kernel_unknown_to_the_base_registry_is_new_and_timed_alone(comparison):
    ref = comparison(BasePackage({"tiled16": NAIVE}))
    timer = ReplayTimer(*recorded_pairs())
    head_case = FakeCase("naive", NAIVE)
    verdict, head = compare(ref, head_case, timer)
    assert verdict.label == NEW and not verdict.fails
    assert verdict.reason.startswith(f"not in {REF}: unknown matmul kernel 'naive'")
    assert timer.calls == [("measure", head_case.run, CASE)]
    assert verdict.current_median == pytest.approx(np.median(timer.head)) and head.samples == timer.head


@pytest.mark.parametrize("bug", [
    ValueError("B must be float32, got float64"),
    KeyError("tile"),
    AttributeError("module 'kernelwatch_base_kernels' has no attribute 'prepare_matmul'"),
    TypeError("prepare_matmul() takes 3 positional arguments but 4 were given"),
], ids=["value-error", "key-error", "attribute-error", "type-error"])
def test_an_error_preparing_the_base_side_propagates_instead_of_calling_the_kernel_new(comparison, bug):
    ref = comparison(BasePackage({"naive": NAIVE}, failure=bug))
    timer = ReplayTimer(*recorded_pairs())
    with pytest.raises(type(bug)) as raised:
        compare(ref, FakeCase("naive", NAIVE), timer)
    assert raised.value is bug
    assert timer.calls == [] and ref.verdicts == []


def test_compare_ref_all_times_identical_builds_and_says_so(comparison):
    ref = comparison(BasePackage({"naive": NAIVE}), time_identical=True)
    timer = ReplayTimer(*recorded_pairs())
    verdict, head = compare(ref, FakeCase("naive", NAIVE), timer)
    assert verdict.label == SAME and head is not None
    assert [call[0] for call in timer.calls] == ["interleaved"]
    assert verdict.reason.endswith("(same SASS, timed anyway)")


def test_a_base_case_that_cannot_describe_its_build_is_always_timed(comparison):
    class OldCase(FakeCase):
        build = None  # a kernels package older than build()

    class OldPackage(BasePackage):
        def prepare(self, kernel):
            return OldCase(kernel, None)

    ref = comparison(OldPackage({"naive": NAIVE}))
    timer = ReplayTimer(*recorded_pairs())
    verdict, _ = compare(ref, FakeCase("naive", NAIVE), timer)
    assert verdict.label == SAME and [call[0] for call in timer.calls] == ["interleaved"]


def test_closing_the_comparison_leaves_the_ref_tree(comparison):
    ref = comparison(BasePackage({}))
    assert ref.tree.open
    ref.close()
    assert not ref.tree.open


RUNS = Path(__file__).resolve().parents[2] / "baselines" / "NVIDIA_H200"


def ref_comparison(monkeypatch, package, **options):
    monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: FakeRefTree(package))
    return ab_compare.RefComparison(Path("/nonexistent/repository"), "main", arch="sm_90", library=HEAD, **options)


def changed_naive():
    return BasePackage({"naive": NAIVE}, BaseCompile({"float sum = 0.0f;": "float sum = -0.0f;"}))


def test_an_ab_verdict_names_the_ref_and_its_short_commit(monkeypatch):
    ref = ref_comparison(monkeypatch, changed_naive())
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert ref.reference == "main (0123456789)" and verdict.reference == "main (0123456789)"


def test_accepting_slowdowns_leaves_a_case_that_is_not_slower_as_it_is(monkeypatch):
    ref = ref_comparison(monkeypatch, changed_naive(), accepted="label accept-slowdown")
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert verdict.label == SAME and "accepted" not in verdict.reason


def test_kernels_the_refs_library_names_and_the_heads_lacks_are_removed(monkeypatch):
    base = BasePackage({"naive": NAIVE, "gone": NAIVE, "add": None})
    head = SimpleNamespace(kernel_names=lambda: ["naive", "added", "add"])
    ref = ref_comparison(monkeypatch, base)
    ref.library = Library("kernels", head, "kernels")
    gone = ref.removed_kernels()
    assert [(v.case, v.label) for v in gone] == [("gone", REMOVED)]
    assert ref.verdicts == gone


def test_a_ref_whose_library_cannot_name_its_kernels_says_so(monkeypatch):
    base = BasePackage({"naive": NAIVE})
    del base.kernel_names  # a library older than kernel_names()
    ref = ref_comparison(monkeypatch, base)
    with pytest.raises(LibraryError, match=r"its kernel library \(kernelwatch_base_kernels\) has no kernel_names"):
        ref.removed_kernels()
    assert ref.verdicts == []


def test_a_ref_whose_library_cannot_give_its_source_times_every_case(monkeypatch):
    base = BasePackage({"naive": NAIVE})
    del base.source_of  # a library older than source_of: its builds' machine code cannot be known
    ref = ref_comparison(monkeypatch, base)
    timer = ReplayTimer(*recorded_pairs())
    verdict, head = ref.compare(CASE, FakeCase("naive", NAIVE), timer, PROFILE, True, detectable)
    assert verdict.label == SAME and [call[0] for call in timer.calls] == ["interleaved"] and head is not None


def test_a_head_library_in_no_repository_is_refused_before_anything_is_checked_out(monkeypatch):
    entered = []
    monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: entered.append(ref))
    nowhere = Library("kernels", kernels, None, "/opt/x is in no git repository: no commit's version ...")
    with pytest.raises(LibraryError, match="is in no git repository"):
        ab_compare.RefComparison(Path("/opt/x"), "main", arch="sm_90", library=nowhere)
    assert entered == []


def test_an_unchanged_case_stays_unchanged_when_slowdowns_are_accepted(monkeypatch):
    ref = ref_comparison(monkeypatch, BasePackage({"naive": NAIVE}), accepted="label accept-slowdown")
    verdict, _ = ref.compare("c", FakeCase("naive", NAIVE), ReplayTimer(*recorded_pairs()), None, True,
                             lambda median: 0.015)
    assert verdict.label == "unchanged" and "accepted" not in verdict.reason


def test_the_launch_part_of_a_case_identity_is_the_one_stored_runs_were_pooled_by(monkeypatch):
    """A record's `sass` is case_identity: machine code, then the first 16 hex digits of the launch
    text's SHA-256. Run 0005 stored it for the naive 1024^3 matmul (32 x 32 blocks of 32 x 32 threads);
    a change of the launch digest splits every stored history."""
    stored_sass = next(bench["extra_info"]["sass"] for bench in json.loads((RUNS / "0005_h200-5fcc19b.json").read_text())
                       ["benchmarks"] if bench["fullname"].endswith("test_matmul_time[1024x1024x1024-naive]"))
    monkeypatch.setattr(ab_library, "build_identity", lambda *args, **kwargs: "code")
    package = SimpleNamespace(source_of=lambda build: ("", ()))
    build = dataclasses.replace(NAIVE, launch="grid=(32, 32, 1) block=(32, 32) shared=0 pitched=False")
    assert ab_library.case_identity(package, build, "sm_90") == "code:" + stored_sass.split(":")[1]
    assert ab_library.case_identity(package, None, "sm_90") == "library"


def test_a_case_identity_compiles_what_the_library_gives_for_the_build():
    """The machine code hashed is NVRTC's build of `source_of`'s text with its options: this repository's
    kernels give the source with its headers spliced in and -std=c++17 plus the build's defines."""
    from kernelwatch.ab.identity import build_identity

    text, options = kernels.source_of(NAIVE)
    expected = build_identity(text, options, "sm_90", name=NAIVE.source, function=NAIVE.function)
    assert ab_library.case_identity(kernels, NAIVE, "sm_90").split(":")[0] == expected
    other = SimpleNamespace(__name__="other", source_of=lambda build: (text.replace("0.0f", "-0.0f"), options))
    assert ab_library.case_identity(other, NAIVE, "sm_90") != ab_library.case_identity(kernels, NAIVE, "sm_90")
    with pytest.raises(LibraryError, match="gave the options as one string"):
        ab_library.case_identity(SimpleNamespace(__name__="bad", source_of=lambda build: (text, "-std=c++17")), NAIVE,
                                 "sm_90")


def test_a_base_package_that_fails_to_load_leaves_no_tree_checked_out(monkeypatch):
    class FailingTree(FakeRefTree):
        def load_package(self, path, alias):
            raise RuntimeError("the base does not import")

    tree = FailingTree(None)
    monkeypatch.setattr(ab_compare, "RefTree", lambda repo_root, ref: tree)
    with pytest.raises(RuntimeError, match="does not import"):
        ab_compare.RefComparison(Path("/nonexistent/repository"), "main", arch="sm_90", library=HEAD)
    assert not tree.open
