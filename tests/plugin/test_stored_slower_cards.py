"""The cause card of a case slower than its stored reference (src/kernelwatch/plugin/regression.py: card_against_stored):
the static half against the project's kernel library (this repository's kernels) at the reference run's commit,
checked out once per commit; a project that names no kernel library gets a card that says so."""

from __future__ import annotations

import json
import shutil
import tempfile
import types
from pathlib import Path

import pytest

# imported before any test here patches kernelwatch.cause.sides.case_card: stored.py binds case_card when it is
# first imported, and card_against_stored imports it, so a fake patched in then would outlive its test
import kernelwatch.cause.stored  # noqa: F401
from kernelwatch.plugin.regression import card_against_stored
from kernelwatch.storage.stored_runs import StoredRuns
from kernelwatch.verdict.labels import SLOWER, ReferenceRun, Verdict
from kernelwatch.verdict.record import CaseRecord
from tests.support.git_repos import git
from tests.support.suite_states import state_with

ROOT = Path(__file__).resolve().parents[2]
CASE = "suites/test_perf_matmul.py::test_matmul_time[1024x1024x1024-warptile_128x256]"


class Case:
    """A prepared warptile_128x256 1024³ as the kernels package `package` would build it, without a GPU."""

    m = n = k = 1024

    def __init__(self, package):
        self.package = package

    def build(self):
        kernel = self.package.MATMUL_KERNELS["warptile_128x256"]
        build_type = self.package.compile.KernelBuild
        return build_type(kernel.source, kernel.function, kernel.defines + (("ALIGNED", 1),),
                          f"grid=(4, 8, 1) block={kernel.threads} shared={kernel.shared_bytes} pitched=False")

    def same_case_in(self, package):
        return Case(package)


@pytest.fixture
def reference_repo(tmp_path, monkeypatch):
    """A git repository whose one commit holds the suite's kernels with 8-deep k tiles for warptile_128x256
    (this checkout's have 16): (repo, commit)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "kernels", repo / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    registry = repo / "kernels" / "registry.py"
    text = registry.read_text()
    assert "rm=2, rn=4, bk=16)," in text
    registry.write_text(text.replace("rm=2, rn=4, bk=16),", "rm=2, rn=4, bk=8),"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "8-deep k tiles")
    return repo, git(repo, "rev-parse", "HEAD")


class Store:
    """The history store's export of run 7: the reference run, recorded under another driver."""

    def export_run(self, run_id):
        assert run_id == 7
        return {"machine_info": {"gpu": {"driver": "570.86.15", "cupy": "14.2.0", "uuid": "GPU-a"},
                                 "python_version": "3.12.3"}}


def head_library():
    import kernels
    from kernelwatch.ab.library import Library

    return Library("kernels", kernels, "kernels")


def state_in(repo, store=None, library=True):
    gpu = types.SimpleNamespace(compute_capability="9.0",
                                as_dict=lambda: {"driver": "580.159.04", "cupy": "14.2.0", "uuid": "GPU-a"})
    return state_with(repo=repo, cards={}, reference_packages=None, gpu=gpu, store=store, baseline=None,
                      library=head_library() if library else None)


def slower(commit: str | None, sass: str = "base-sass") -> Verdict:
    return Verdict(CASE, SLOWER, 1.0, 1.1, 1.1, 0.015, "10% slower",
                   references=(ReferenceRun("history run 7", "2026-12-02T00:00:00", commit, sass),))


@pytest.mark.slow  # a git worktree and four static builds: CI's second pass (tox -e unit -- -m slow)
def test_a_slower_case_is_carded_against_the_build_at_its_reference_runs_commit(reference_repo):
    import kernels

    repo, commit = reference_repo
    state = state_in(repo, Store())
    record = CaseRecord(case=CASE, median_s=1e-4, sass="head-sass")
    card_against_stored(state, record, slower(commit), Case(kernels))
    lines = state.findings.cards[CASE]
    assert lines[0] == f"#### Why `{CASE}` is slower"
    assert lines[2] == f"Against the build at commit {commit[:12]}, the newest reference run's (history run 7)."
    # the reference's 8-deep k loop has half the FFMAs of this checkout's 16-deep one in the code
    # the reference's 8-deep k tiles: half the shared memory (4 x 2 x bk x (128 + 4 + 256) bytes) and half
    # the FFMAs in the code of this checkout's 16-deep ones
    assert "| dynamic shared memory (bytes) | 24832 | **49664** |" in lines
    import platform
    python = "" if platform.python_version() == "3.12.3" else f"; Python 3.12.3 -> {platform.python_version()}"
    assert lines[-2] == f"Environment differences: driver 570.86.15 -> 580.159.04{python}"
    ffma = next(line for line in lines if line.startswith("| SASS FFMA |"))
    base, head = (int(value.strip(" *")) for value in ffma.split("|")[2:4])
    assert abs(head - 2 * base) <= 2
    assert len(state.code.reference_packages.paths()) == 1  # checked out once; a second case reuses it
    card_against_stored(state, CaseRecord(case=CASE + "x", median_s=1e-4, sass="head-sass"), slower(commit), Case(kernels))
    checked_out = state.code.reference_packages.paths()
    assert len(checked_out) == 1 and CASE + "x" in state.findings.cards and checked_out[0].is_dir()
    state.code.close()
    assert state.code.reference_packages.paths() == [] and not checked_out[0].exists()


def test_the_same_machine_code_as_the_reference_says_the_cause_is_not_in_the_code(reference_repo):
    repo, commit = reference_repo
    state = state_in(repo, Store())
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="same"), slower(commit, sass="same"),
                        object())
    assert "the cause is not in this kernel's code" in state.findings.cards[CASE][2]
    assert "; what differs from that run: driver 570.86.15 -> 580.159.04" in state.findings.cards[CASE][2]
    # the reference's hash as read back from the store (an equal string, not the same object): the same code
    stored_sass = json.loads(json.dumps({"sass": "same"}))["sass"]
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="same"), slower(commit, sass=stored_sass),
                        object())
    assert "the cause is not in this kernel's code" in state.findings.cards[CASE][2]
    bare = state_in(repo)  # no store to read the reference's environment from: the card still made, without it
    card_against_stored(bare, CaseRecord(case=CASE, median_s=1e-4, sass="same"), slower(commit, "same"), object())
    assert bare.findings.cards[CASE][2].endswith("no commit of the window made it.")
    assert state.code.reference_packages is None  # nothing checked out


def test_the_same_machine_code_card_names_the_reference_runs_short_commit_or_says_it_is_unknown(reference_repo):
    repo, commit = reference_repo
    state = state_in(repo)
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="same"), slower(commit, "same"), object())
    assert f"of the newest reference run (history run 7, commit {commit[:12]}): the cause" in state.findings.cards[CASE][2]
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="same"), slower(None, "same"), object())
    assert "of the newest reference run (history run 7, commit unknown): the cause" in state.findings.cards[CASE][2]


def test_a_reference_without_a_commit_or_one_git_lacks_is_a_card_that_says_why(reference_repo):
    import kernels

    repo, _ = reference_repo
    state = state_in(repo)
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="h"), slower(None), Case(kernels))
    assert state.findings.cards[CASE][2] == "No card: the reference run history run 7 names no commit"
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="h"), slower("0" * 40), Case(kernels))
    assert state.findings.cards[CASE][2].startswith("No card: ")
    # other machine code than the reference's, whichever way the two hashes sort: a card of the code, not the
    # card that says the cause is not in it
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="a-sass"), slower(None), Case(kernels))
    assert state.findings.cards[CASE][2] == "No card: the reference run history run 7 names no commit"
    card_against_stored(state, CaseRecord(case="plain", median_s=1e-4), slower("0" * 40), None)  # a plain run
    assert "plain" not in state.findings.cards


def test_a_project_that_names_no_kernel_library_gets_a_card_that_says_so_in_one_line(reference_repo):
    import kernels

    repo, commit = reference_repo
    state = state_in(repo, library=False)
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4), slower(commit), Case(kernels))
    assert state.findings.cards[CASE] == [f"#### Why `{CASE}` is slower", "",
                                 "No card: the project names no kernel library (the ini key kernelwatch_kernels; "
                                 "docs/kernel-library.md)", ""]
    assert state.code.reference_packages is None  # nothing checked out


def test_environment_pairs_name_each_field_of_both_runs_and_a_question_mark_where_one_is_missing():
    from kernelwatch.cause.stored import environment_pairs

    old = {"python_version": "3.11.9", "gpu": {"host": "h1", "uuid": "GPU-a", "driver": "580.1", "cupy": "14.2",
                                               "sm_clock_max_mhz": 1980, "power_limit_w": 700.0}}
    new = {"gpu": {"host": "h1", "uuid": "GPU-b", "driver": "580.2", "cuda_runtime": "13.0", "nvrtc": "13.0",
                   "power_limit_w": 600.0}}
    assert environment_pairs(old, new) == {
        "host": ("h1", "h1"), "GPU": ("GPU-a", "GPU-b"), "driver": ("580.1", "580.2"), "CUDA runtime": ("?", "13.0"),
        "CUDA driver API": ("?", "?"), "NVRTC": ("?", "13.0"), "CuPy": ("14.2", "?"),
        "SM clock max (MHz)": ("1980", "?"), "memory clock max (MHz)": ("?", "?"),
        "power limit (W)": ("700.0", "600.0"), "Python": ("3.11.9", "?")}
    assert set(environment_pairs(None, {"gpu": None}).values()) == {("?", "?")}


def test_a_stored_card_without_a_package_a_shape_or_build_for_says_why_in_the_card(monkeypatch):
    import sys
    import types

    import kernels
    from kernelwatch.ab.ref_tree import RefError
    from kernelwatch.cause.stored import PackagesAtCommits, stored_card

    with pytest.raises(RefError, match=r"^the stored run names no commit$"):
        PackagesAtCommits(Path("."), "kernels").package("")

    class Packages:
        def __init__(self, package):
            self.found = package

        def package(self, commit):
            if isinstance(self.found, Exception):
                raise self.found
            return self.found

    refused = stored_card("c", "tiled", "8x8x8", "a" * 40, "b" * 40, "sm_90", Packages(RefError("no such commit")))
    assert refused == ["#### Why `c` is slower", "", "No card: no such commit", ""]
    shapeless = stored_card("c", "tiled16", "8x8", "a" * 40, "b" * 40, "sm_90", Packages(kernels))
    assert shapeless[2] == "No card: the case's shape '8x8' is no matrix product's MxNxK"  # the library's words
    unknown = stored_card("c", "tiled", "8x8x8", "a" * 40, "b" * 40, "sm_90", Packages(kernels))
    assert unknown[2] == "No card: unknown kernel 'tiled': neither a matrix product's nor an add's"
    old = types.ModuleType("kernels_before_build_for")  # a library older than the protocol
    monkeypatch.setitem(sys.modules, "kernels_before_build_for", old)
    early = stored_card("c", "tiled", "8x8x8", "a" * 40, "b" * 40, "sm_90", Packages(old))
    assert early[2] == ("No card: its kernel library (kernels_before_build_for) has no build_for "
                        "(docs/kernel-library.md: older than the protocol, or not the library)")


def _ab_state(builds, *, diagnose=False, compute_capability="9.0", launched=None):
    import types

    import kernels

    ref = types.SimpleNamespace(builds=builds, base=kernels, launched=launched or {}, cards={}, library=head_library())
    return state_with(ref=ref, diagnose=diagnose, gpu=types.SimpleNamespace(compute_capability=compute_capability))


def test_a_slower_library_case_of_an_ab_is_carded_by_the_kernels_each_side_launched():
    from kernelwatch.plugin.regression import explain_slower

    state = _ab_state({"c": (None, None)}, launched={"c": (("gemm_a",), ("gemm_b",))})
    explain_slower(state, "c", object())
    assert state.code.ref.cards["c"][4] == ("1. **library kernel**: the library launched `gemm_a` on the base and "
                                       "`gemm_b` on the head: it chose other kernels")
    none = _ab_state({})
    explain_slower(none, "c", object())
    assert none.code.ref.cards == {}


def test_an_ab_card_that_cannot_be_made_says_why():
    from kernelwatch.plugin.regression import explain_slower

    state = _ab_state({"c": (None, None)}, compute_capability="9")
    explain_slower(state, "c", object())
    assert state.code.ref.cards["c"] == ["#### Why `c` is slower", "", "No card: compute capability must read like '9.0', "
                                    "got '9'", ""]


def test_an_ab_card_gets_a_matrix_products_shape_and_ncu_only_under_diagnose(monkeypatch):
    import shutil
    import types

    import kernelwatch.cause.sides as sides
    from kernelwatch.plugin.regression import explain_slower

    seen = []
    monkeypatch.setattr(sides, "case_card", lambda case, base, head, arch, *, ncu, launched: seen.append(
        (base.build, head.build, base.shape, head.shape, arch, ncu, launched)) or ["card"])
    monkeypatch.setattr(shutil, "which", lambda name: "/opt/nsight/ncu" if name == "ncu" else None)
    product = types.SimpleNamespace(m=8, n=4, k=16)
    explain_slower(_ab_state({"c": ("b", "h")}, diagnose=True, launched={"c": "L"}), "c", product)
    explain_slower(_ab_state({"c": ("b", "h")}), "c", types.SimpleNamespace(m=8, n=4))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    explain_slower(_ab_state({"c": ("b", "h")}, diagnose=True), "c", product)
    # the base side with the ref's build, the head side with this checkout's
    assert seen == [("b", "h", "8x4x16", "8x4x16", "sm_90", "/opt/nsight/ncu", "L"),
                    ("b", "h", None, None, "sm_90", None, None), ("b", "h", "8x4x16", "8x4x16", "sm_90", "ncu", None)]


def test_a_reference_runs_machine_info_comes_from_the_store_or_the_baselines_folder_and_is_empty_otherwise(tmp_path):
    import json
    import types

    from kernelwatch.plugin.regression import _reference_machine_info
    from kernelwatch.storage.history import HistoryError

    class Store:
        def export_run(self, number):
            if number == 9:
                raise HistoryError("no run 9")
            return {"machine_info": {"run": number}} if number == 7 else {}

    stored = StoredRuns(store=Store(), baseline=None)
    assert _reference_machine_info(stored, ReferenceRun("history run 7")) == {"run": 7}
    assert _reference_machine_info(stored, ReferenceRun("history run 8")) == {}
    assert _reference_machine_info(stored, ReferenceRun("history run 9")) == {}
    assert _reference_machine_info(stored, ReferenceRun("baseline.json")) == {}  # no baseline
    (tmp_path / "old.json").write_text(json.dumps({"machine_info": {"host": "h"}}))
    (tmp_path / "bad.json").write_text("{")
    baseline = StoredRuns(store=None, baseline=types.SimpleNamespace(path=tmp_path / "baseline.json"))
    assert _reference_machine_info(baseline, ReferenceRun("old.json")) == {"host": "h"}
    assert _reference_machine_info(baseline, ReferenceRun("bad.json")) == {}
    assert _reference_machine_info(baseline, ReferenceRun("missing.json")) == {}
    assert _reference_machine_info(baseline, ReferenceRun("history run 7")) == {}  # no store: the folder's
    both = StoredRuns(store=Store(), baseline=baseline.baseline)  # --kernelwatch-history beside a baseline
    assert _reference_machine_info(both, ReferenceRun("old.json")) == {"host": "h"}
    assert _reference_machine_info(both, ReferenceRun("history run 7")) == {"run": 7}


def test_a_host_routines_phase_card_lists_what_differs_from_its_newest_reference_runs_machine():
    from kernelwatch.plugin.regression import card_of_phases
    from kernelwatch.verdict.phases import phase_fields

    routine = "suites/test_perf_matmul.py::test_matmul_host_routine_time[tiled16-pinned]"
    reference = ReferenceRun("history run 7", "2026-12-02T00:00:00", "0" * 40, None)
    slower_kernel = Verdict(f"{routine} kernel", SLOWER, 1e-4, 1.1e-4, 1.1, 0.015, "10% slower", references=(reference,))
    record = CaseRecord(case=routine, median_s=5e-4, phases={"kernel": [1.1e-4]},
                        phase_verdicts=[phase_fields("kernel", slower_kernel)])
    state = state_in(None, Store())
    card_of_phases(state, record)
    assert any(line.startswith("Environment differences: driver 570.86.15 -> 580.159.04") for line in state.findings.cards[routine])


class Stores:
    """A history store whose run N was recorded under driver 57N.0 (and this Python)."""

    def export_run(self, run_id):
        import platform

        return {"machine_info": {"gpu": {"driver": f"57{run_id}.0", "cupy": "14.2.0", "uuid": "GPU-a"},
                                 "python_version": platform.python_version()}}


def test_a_host_routines_phase_card_is_against_the_references_of_its_first_followed_phase():
    from kernelwatch.plugin.regression import card_of_phases
    from kernelwatch.verdict.labels import ACCEPTED, SAME
    from kernelwatch.verdict.phases import phase_fields

    routine = "suites/test_perf_matmul.py::test_matmul_host_routine_time[tiled16-pinned]"
    runs = {n: ReferenceRun(f"history run {n}", f"2026-12-0{n - 3}T00:00:00", f"{n}" * 40) for n in (4, 5, 6)}

    def phase(name, label, *numbers):
        return phase_fields(name, Verdict(f"{routine} {name}", label, 1e-4, 1.1e-4, 1.1, 0.015, "10% slower",
                                          references=tuple(runs[n] for n in numbers)))

    record = CaseRecord(case=routine, median_s=5e-4, phases={"kernel": [1.1e-4]}, phase_verdicts=[
        phase("host", SAME, 4), phase("kernel", SLOWER, 5, 6), phase("copy", ACCEPTED, 4)])
    state = state_in(None, Stores())
    card_of_phases(state, record)
    card = state.findings.cards[routine]
    assert any(line.startswith("Phase by phase against history run 5, history run 6 (newest: 2026-12-03 00:00 UTC, "
                               f"commit {'6' * 12});") for line in card)
    assert "Environment differences: driver 576.0 -> 580.159.04" in card  # the newest of those runs' driver


def test_a_card_against_the_reference_build_puts_its_commit_above_the_card_and_passes_the_cases_shape(monkeypatch):
    import kernelwatch.cause.sides as sides

    seen = []

    def case_card(case, base, head, arch, *, environment):
        seen.append((base.package, base.build, base.shape, head.build, head.shape, arch))
        return [f"#### Why `{case}` is slower", "", "the body", ""]

    class Prepared(types.SimpleNamespace):
        def build(self):
            return f"{self.name} build"

        def same_case_in(self, package):
            return Prepared(name=f"{package} case")

    class Packages:
        def package(self, commit):
            return f"package at {commit[:4]}"

    monkeypatch.setattr(sides, "case_card", case_card)
    state = state_in(None)
    state.code.reference_packages = Packages()
    card_against_stored(state, CaseRecord(case=CASE, median_s=1e-4, sass="head-sass"), slower("ab" * 20),
                        Prepared(name="head", m=8, n=4, k=16))
    assert state.findings.cards[CASE] == [f"#### Why `{CASE}` is slower", "",
                                 f"Against the build at commit {'ab' * 6}, the newest reference run's (history run 7).",
                                 "", "the body", ""]
    card_against_stored(state, CaseRecord(case="plain", median_s=1e-4, sass="head-sass"), slower("ab" * 20),
                        Prepared(name="head", m=8, n=4))  # not a matrix product's MxNxK: no shape
    assert seen == [("package at abab", "package at abab case build", "8x4x16", "head build", "8x4x16", "sm_90"),
                    ("package at abab", "package at abab case build", None, "head build", None, "sm_90")]
