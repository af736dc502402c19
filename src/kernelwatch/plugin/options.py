"""The suite's command-line options, and reading them into checked values.

Every option is registered here; `threshold_of` and the other readers turn a
raw value into what the run uses, or raise pytest.UsageError (exit 4) naming
the option, when pytest configures the run, on any machine.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from kernelwatch.timing.profile import PROFILES

# Where a project keeps its runs and its report: ini keys (pyproject.toml's [tool.pytest.ini_options] or
# pytest.ini), relative to pytest's rootdir, the project of the tests being run; never this file's folder
INI_BASELINES = "kernelwatch_baselines"
INI_REPORT = "kernelwatch_report"
INI_KERNELS = "kernelwatch_kernels"
INI_ENERGY_CASES = "kernelwatch_energy_cases"
BASELINES_DEFAULT = "baselines"
REPORT_DEFAULT = "reports/benchmark-report.md"


def add_ini_keys(parser) -> None:
    parser.addini(INI_BASELINES, f"folder of the stored runs, one subfolder per GPU model, relative to the rootdir "
                                 f"(default: {BASELINES_DEFAULT})", default=BASELINES_DEFAULT)
    parser.addini(INI_REPORT, f"the markdown report's path, relative to the rootdir (default: {REPORT_DEFAULT}); "
                              f"--kernelwatch-report overrides it", default=REPORT_DEFAULT)
    parser.addini(INI_KERNELS, "the importable package of the project's kernels, for the A/B against a git ref, "
                               "machine-code identity and cause cards (docs/kernel-library.md)", default="")
    parser.addini(INI_ENERGY_CASES, "the cases whose energy the nightly and full profiles measure under "
                                    "--kernelwatch-energy=profile, one a line: test names or node ids, or patterns "
                                    "of them with * and ? (default: none)", type="linelist", default=[])


def baselines_of(config) -> Path:
    """The project's baselines folder: the kernelwatch_baselines ini key under the rootdir."""
    return Path(config.rootpath) / (config.getini(INI_BASELINES) or BASELINES_DEFAULT)


def profile_of(config):
    """--kernelwatch-profile's profile, with the project's energy cases (the kernelwatch_energy_cases ini key)."""
    return PROFILES[config.getoption("kernelwatch_profile")].with_energy_cases(config.getini(INI_ENERGY_CASES))


def report_path_of(config) -> Path:
    """--kernelwatch-report as given (relative to the working directory), else the ini key under the rootdir."""
    given = config.getoption("kernelwatch_report")
    return Path(given) if given else Path(config.rootpath) / (config.getini(INI_REPORT) or REPORT_DEFAULT)


def add_options(parser) -> None:
    group = parser.getgroup("kernelwatch")
    group.addoption("--kernelwatch-profile", choices=sorted(PROFILES), default="nightly",
                    help="sampling and sizes: nightly (to 0.5%% noise), full (the nightly's sampling over every "
                         "size, weekly) or quick (pull requests)")
    group.addoption("--kernelwatch-threshold", default=None,
                    help="smallest slow-down ever flagged against a baseline from this GPU, e.g. 0.02 or 2%% "
                         "(default: $KERNELWATCH_THRESHOLD or 1.5%%); a noisy case's own threshold is larger")
    group.addoption("--kernelwatch-report", metavar="PATH", default=None,
                    help=f"markdown report of the verdicts, written when comparing (default: the {INI_REPORT} ini "
                         f"key, else {REPORT_DEFAULT} under the rootdir)")
    group.addoption("--kernelwatch-require-gpu", action="store_true",
                    default=os.environ.get("KERNELWATCH_REQUIRE_GPU", "") not in ("", "0"),
                    help="fail the run when no usable CUDA GPU is found (default: $KERNELWATCH_REQUIRE_GPU)")
    group.addoption("--kernelwatch-no-memory-pool", action="store_true",
                    help="one cudaMalloc per array (for compute-sanitizer: exact bounds)")
    group.addoption("--kernelwatch-compare-ref", metavar="REF", default=None,
                    help="time every changed kernel against the same case built from git REF, interleaved, in this "
                         "run (a pull request against its base); kernels with the same SASS are not timed")
    group.addoption("--kernelwatch-compare-ref-all", action="store_true",
                    help="with --kernelwatch-compare-ref: time every case, even where both sides have the same SASS")
    group.addoption("--kernelwatch-history", metavar="URL", nargs="?", const="", default=None,
                    help="record this run in the history store and judge each case against this GPU's own history "
                         "where it holds enough runs; URL: a SQLite path or sqlite:///, postgresql:// URL (default: "
                         "$KERNELWATCH_HISTORY, else kernelwatch/history.sqlite in $RUNNER_TOOL_CACHE, "
                         "$XDG_CACHE_HOME or ~/.cache)")
    group.addoption("--kernelwatch-diagnose", action="store_true",
                    help="with --kernelwatch-compare-ref: each slower case's cause card also profiles both sides under Nsight "
                         "Compute (ncu; about 20 s of GPU a case); without it the card has its static half only")
    group.addoption("--kernelwatch-energy", nargs="?", const="all", default="profile", choices=["all", "profile", "none"],
                    help="measure joules per launch after each case's time: all (--kernelwatch-energy alone: every GPU-timed "
                         "case, about 3.5 s of GPU each), profile (the default: the nightly's and the full's energy "
                         f"cases, the {INI_ENERGY_CASES} ini key) or none")
    group.addoption("--kernelwatch-energy-verdict", choices=["fail", "report"], default=None,
                    help="whether a case judged 'more energy' fails its test (fail, the default) or is only reported "
                         "(refused with --kernelwatch-energy=none, which measures no energy)")
    group.addoption("--kernelwatch-accept-slowdown", metavar="REASON", default=None,
                    help="with --kernelwatch-compare-ref: report slower cases as accepted (REASON) instead of failing them")


# a pull-request run (tox -e pr-*, which sets it) is judged against its base: --kernelwatch-compare-ref is required
PULL_REQUEST_ENV = "KERNELWATCH_PULL_REQUEST"
NEEDS_COMPARE_REF = {"kernelwatch_accept_slowdown": "--kernelwatch-accept-slowdown", "kernelwatch_compare_ref_all": "--kernelwatch-compare-ref-all",
                     "kernelwatch_diagnose": "--kernelwatch-diagnose"}


def refuse_flags_without_their_flag(config) -> None:
    """A flag that only means something beside another is refused without it (UsageError, exit 4)."""
    verdict = config.getoption("kernelwatch_energy_verdict")
    if verdict is not None and config.getoption("kernelwatch_energy") == "none":
        raise pytest.UsageError(f"--kernelwatch-energy-verdict {verdict} judges the energy measured, and "
                                f"--kernelwatch-energy=none measures none; drop one of them")
    if config.getoption("kernelwatch_compare_ref") is not None:
        return
    for option, flag in NEEDS_COMPARE_REF.items():
        if config.getoption(option):
            raise pytest.UsageError(f"{flag} works only with --kernelwatch-compare-ref REF (a pull request timed against its "
                                    f"base); add --kernelwatch-compare-ref, or drop {flag}")
    if os.environ.get(PULL_REQUEST_ENV, "") not in ("", "0"):
        raise pytest.UsageError(f"a pull-request run (${PULL_REQUEST_ENV} is set) is timed against its base: pass "
                                f"--kernelwatch-compare-ref REF, e.g. --kernelwatch-compare-ref origin/main")


def unwritable(path: Path) -> str | None:
    """Why a file could not be written at `path` the way reports are (a temporary file in its folder, the
    folder made where missing), or None. The folder is not made: its nearest existing one is tried."""
    path = Path(path).absolute()
    if path.is_dir():
        return "it is a folder; give the name of a file"
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is no folder"
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".kernelwatch-write-check-")
    except OSError as error:
        return f"cannot write in {folder} ({error.strerror or error})"
    os.close(handle)
    os.unlink(probe)
    return None


def refuse_unwritable_outputs(config) -> None:
    """--kernelwatch-report PATH that could not be written is refused now (UsageError, exit 4), before anything
    runs: not found out after the whole run, nor never where the run compares nothing and writes no report."""
    given = config.getoption("kernelwatch_report")
    if given and (why := unwritable(Path(given))):
        raise pytest.UsageError(f"--kernelwatch-report {given} cannot be written: {why}; give a path in a folder "
                                f"that can be written")


def discard_unwritten_json(config) -> None:
    """pytest-benchmark opens --benchmark-json's file when it reads the options: a run refused before it timed
    anything leaves it empty, which reads as a result. An empty regular file is removed; nothing else is touched."""
    handle = getattr(config.option, "benchmark_json", None)
    name = getattr(handle, "name", None)
    if not isinstance(name, str) or name.startswith("<"):  # not given, or "-" (standard output)
        return
    path = Path(name)
    if path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
        handle.close()
        path.unlink()


def refuse_compare_ref_without_a_library(config) -> None:
    """--kernelwatch-compare-ref prepares each case on both sides through the project's kernel library: a project
    that names none is refused (UsageError, exit 4) before git is asked anything."""
    from kernelwatch.ab.library import NOT_NAMED

    if not config.getini(INI_KERNELS).strip():
        raise pytest.UsageError(f"--kernelwatch-compare-ref prepares each case on both sides through the project's kernel "
                                f"library, and {NOT_NAMED}")


def kernel_library_of(config):
    """The project's kernel library (the kernelwatch_kernels ini key), imported now: None where the key names none;
    UsageError (exit 4), in one line, where the package it names does not import or lacks what it must provide."""
    from kernelwatch.ab.library import LibraryError, head_library

    name = config.getini(INI_KERNELS).strip()
    if not name:
        return None
    try:
        return head_library(name, Path(config.rootpath))
    except LibraryError as error:
        raise pytest.UsageError(str(error)) from None


def refuse_requests_without_a_gpu(config, why_not: str) -> None:
    """Timings, verdicts, a baseline, an A/B or a recorded run asked for on a machine with no usable GPU: exit 4, before
    anything runs (where a plain `pytest suites/` skips the GPU tests and passes)."""
    asked = [flag for option, flag in (("benchmark_compare", "--benchmark-compare"),
                                       ("benchmark_save", "--benchmark-save"),
                                       ("benchmark_autosave", "--benchmark-autosave"),
                                       ("benchmark_json", "--benchmark-json"),
                                       ("kernelwatch_compare_ref", "--kernelwatch-compare-ref"), ("kernelwatch_history", "--kernelwatch-history"))
             if getattr(config.option, option, None) not in (None, False, [])]
    if getattr(config.option, "kernelwatch_energy", None) == "all":
        asked.append("--kernelwatch-energy")
    if asked:
        raise pytest.UsageError(f"{', '.join(asked)} asks for what only a GPU can give (timings, verdicts, a "
                                f"baseline, a recorded run), and this machine has no usable CUDA GPU: {why_not}. Run it on the "
                                f"GPU's machine; the same tests without those options check what a CPU can and skip the rest")


def open_history_store(config):
    """The store --kernelwatch-history names, opened (made or migrated) now: a store that cannot be used is refused
    before anything is timed (UsageError, exit 4), not found out after the whole run. None without --kernelwatch-history."""
    from kernelwatch.storage.history import HistoryError, open_store

    url = config.getoption("kernelwatch_history")
    if url is None:
        return None
    try:
        return open_store(url or None)
    except HistoryError as error:
        raise pytest.UsageError(f"--kernelwatch-history: {error}") from None


def floors_of(config):
    """The noise floors the run judges with: --kernelwatch-threshold, else $KERNELWATCH_THRESHOLD, as the same-GPU
    floor (kernelwatch.verdict.threshold.judging_floors, which compare and history changes read too);
    UsageError naming the option or the variable when it is no fraction."""
    from kernelwatch.verdict.threshold import judging_floors

    try:
        return judging_floors(config.getoption("kernelwatch_threshold"), "--kernelwatch-threshold")
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def refuse_conflicts_with_compare_ref(config) -> None:
    """A pull request's run is judged against its base in the same run: it runs in one process, is
    never stored as a baseline, nor judged against a stored one."""
    if getattr(config.option, "numprocesses", None):
        raise pytest.UsageError("--kernelwatch-compare-ref runs in one process: drop -n")
    if getattr(config.option, "benchmark_compare", None):
        raise pytest.UsageError("--kernelwatch-compare-ref compares with a git ref in this run; drop --benchmark-compare")
    conflicts = {
        "benchmark_save": "--benchmark-save: a pull-request run is never saved as a baseline",
        "benchmark_autosave": "--benchmark-autosave: a pull-request run is never saved as a baseline",
        "benchmark_compare_fail": "--benchmark-compare-fail: it judges against a stored baseline, "
                                  "and --kernelwatch-compare-ref judges against the ref",
        "kernelwatch_history": "--kernelwatch-history: a pull-request run is judged against its ref, never recorded as a GPU's history",
    }
    for option, why in conflicts.items():
        if getattr(config.option, option, None):
            raise pytest.UsageError(f"--kernelwatch-compare-ref cannot be combined with {why}; drop one of them")


def check_named_things(config, baselines: Path) -> None:
    """Every option that names a stored run, a git ref or a store, checked when pytest configures
    the run, on any machine (with a GPU or not): UsageError (exit 4) naming the choices.

    --benchmark-compare=N|NAME must name a run of some GPU's folder (the GPU's own folder is
    checked again once the GPU is known); --kernelwatch-compare-ref must name a commit; --kernelwatch-history a URL.
    """
    from kernelwatch.ab.ref_tree import RefError, resolve_ref
    from kernelwatch.storage.history import HistoryError, resolve_url
    from kernelwatch.storage.history.connection import check_folder
    from kernelwatch.storage.runs import BaselineError, resolve_compare

    spec = getattr(config.option, "benchmark_compare", None)
    if spec and spec is not True:  # False, [] (not given) and True (the newest run) name nothing
        folders = sorted(p for p in Path(baselines).glob("*") if p.is_dir()) or [Path(baselines)]
        problems = []
        for folder in folders:
            try:
                resolve_compare(folder, spec)
                break
            except BaselineError as error:
                problems.append(str(error))
        else:
            raise pytest.UsageError(f"--benchmark-compare={spec}: no GPU's folder under {baselines} has it: "
                                    + "; ".join(problems))
    ref = config.getoption("kernelwatch_compare_ref")
    if ref is not None:
        try:
            resolve_ref(Path(config.rootpath), ref)
        except RefError as error:
            raise pytest.UsageError(f"--kernelwatch-compare-ref: {error}; see `git branch -a` and `git log --oneline`") from None
    url = config.getoption("kernelwatch_history")
    if url:
        try:
            check_folder(resolve_url(url))
        except HistoryError as error:
            raise pytest.UsageError(f"--kernelwatch-history: {error}") from None
