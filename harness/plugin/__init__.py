"""The kernel suite's pytest plugin: options, hooks, fixtures (registered by conftest.py).

One `SuiteState` per pytest process, kept in `config.stash`:

* GPU tests carry the `gpu` marker and are skipped with the reason where no
  CUDA device is usable, unless `--require-gpu` (or KERNEL_SUITE_REQUIRE_GPU=1)
  makes that an error.
* Runs are stored per GPU model: baselines/<slug>/NNNN_<label>.json, where the
  slug comes from the NVML name of the device the tests run on.
* The suite takes `--benchmark-compare` over from pytest-benchmark: it reads
  the chosen baseline once with its own strict loader (harness/storage/runs.py),
  along with the newest stored runs of this GPU model as the noise model's
  history, and hands the baseline to pytest-benchmark only for its tables.
  Each timed case is judged as it runs (harness/plugin/timed_case.py); a regression
  fails its own test; a markdown report of every verdict is written at the end.
* Saves are numbered under a lock and never overwrite; a run in which any test
  failed is never saved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytest_benchmark.storage.file import FileStorage

from harness.ab.identity import arch_of
from harness.plugin.xdist import export_results, gpu_lock, import_results, prepare_worker_session, worker_id
from harness.report.markdown import counts_text, markdown_report, verdict_counts, write_report
from harness.storage.runs import BaselineError, load_run, resolve_compare, save_run, stored_runs
from harness.timing.timer import PROFILES, Profile
from harness.verdict.against_baseline import Baseline, floors_with_threshold, history_of
from harness.verdict.noise import NoiseFloors
from harness.verdict.record import CaseRecord
from harness.verdict.stats import parse_fraction

from . import hookspecs

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "baselines"
REPORT_DEFAULT = ROOT / "reports" / "benchmark-report.md"
HISTORY_RUNS = 20  # stored runs read for the noise model's history: the newest of this GPU model


@dataclass
class SuiteState:
    """What one pytest process knows about its GPU, its baseline and its problems."""

    device: object  # harness.gpu.CudaDevice or another device layer (hookspecs)
    profile: Profile
    floors: NoiseFloors
    report_path: Path
    compare_spec: object = None  # --benchmark-compare's value, taken from pytest-benchmark
    comparing: bool = False
    gpu: object = None  # GpuInfo of the device in use
    timer: object = None  # the session's GpuTimer (made at session start where cases can be timed)
    ref: object = None  # harness.ab_compare.RefComparison under --compare-ref
    replaced_get_machine_id: object = None  # pytest_benchmark.session's own, while the plugin's stands in
    baseline: Baseline | None = None
    history: dict = field(default_factory=dict)
    failures: int = 0
    problems: list[str] = field(default_factory=list)  # errors shown at the end; they fail the run
    notices: list[str] = field(default_factory=list)  # plain information shown at the end

    def pytest_runtest_logreport(self, report):
        """Count failures: a run with any is never saved as a baseline."""
        if report.failed:
            self.failures += 1


STATE = pytest.StashKey[SuiteState]()


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser):
    group = parser.getgroup("kernel suite")
    group.addoption("--profile", choices=sorted(PROFILES), default="nightly",
                    help="sampling and sizes: nightly (all sizes, to 0.5%% noise) or quick (pull requests)")
    group.addoption("--regression-threshold", default=os.environ.get("KERNEL_SUITE_THRESHOLD"),
                    help="smallest slow-down ever flagged against a baseline from this GPU, e.g. 0.02 or 2%% "
                         "(default: $KERNEL_SUITE_THRESHOLD or 1.5%%); a noisy case's own threshold is larger")
    group.addoption("--benchmark-report", default=str(REPORT_DEFAULT),
                    help="markdown report of the verdicts (written when comparing)")
    group.addoption("--require-gpu", action="store_true",
                    default=os.environ.get("KERNEL_SUITE_REQUIRE_GPU", "") not in ("", "0"),
                    help="fail the run when no usable CUDA GPU is found (default: $KERNEL_SUITE_REQUIRE_GPU)")
    group.addoption("--no-memory-pool", action="store_true",
                    help="one cudaMalloc per array (for compute-sanitizer: exact bounds)")
    group.addoption("--compare-ref", metavar="REF", default=None,
                    help="time every changed kernel against the same case built from git REF, interleaved, in this "
                         "run (a pull request against its base); kernels with the same SASS are not timed")
    group.addoption("--compare-ref-all", action="store_true",
                    help="with --compare-ref: time every case, even where both sides have the same SASS")
    group.addoption("--accept-slowdown", metavar="REASON", default=None,
                    help="with --compare-ref: report slower cases as accepted (REASON) instead of failing them")


@pytest.hookimpl(trylast=True)
def pytest_kernel_suite_device(config):
    from harness.timing.gpu import CudaDevice

    return CudaDevice()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "perf: a timed case (pytest-benchmark)")
    try:
        raw = config.getoption("regression_threshold")
        threshold = parse_fraction(raw, "--regression-threshold") if raw else None
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    device = config.hook.pytest_kernel_suite_device(config=config)
    state = SuiteState(device, PROFILES[config.getoption("profile")], floors_with_threshold(NoiseFloors(), threshold),
                       Path(config.getoption("benchmark_report")))
    config.stash[STATE] = state
    config.pluginmanager.register(state, "kernel-suite-state")
    if not device.available:
        if config.getoption("require_gpu"):
            raise pytest.UsageError(f"--require-gpu: no usable CUDA GPU on this machine: {device.why_not}")
    else:
        device.pin_worker()
        if getattr(config.option, "numprocesses", None) and len(models := device.model_names()) > 1:
            raise pytest.UsageError(
                f"the visible GPUs are of different models ({', '.join(sorted(models))}); with -n, select one "
                "model with CUDA_VISIBLE_DEVICES so that results go to one baseline folder")
        if config.getoption("no_memory_pool"):
            device.use_exact_allocations()
        state.gpu = device.info()
    if config.getoption("compare_ref") is not None:
        if getattr(config.option, "numprocesses", None):
            raise pytest.UsageError("--compare-ref runs in one process: drop -n")
        if getattr(config.option, "benchmark_compare", None):
            raise pytest.UsageError("--compare-ref compares with a git ref in this run; drop --benchmark-compare")
        _refuse_baseline_options_with_compare_ref(config)
    if not hasattr(config.option, "benchmark_storage"):
        return  # pytest-benchmark not loaded (-p no:benchmark)
    config.option.benchmark_save_data = True  # the verdicts need every sample in the stored files
    if config.option.benchmark_storage == "file://./.benchmarks":  # pytest-benchmark's default
        config.option.benchmark_storage = f"file://{BASELINES}"
    # the suite loads the baseline itself (one strict loader); pytest-benchmark must not
    state.compare_spec, config.option.benchmark_compare = config.option.benchmark_compare, False
    if state.gpu is not None:
        import pytest_benchmark.session

        # pytest-benchmark names its storage folder from get_machine_id() in BenchmarkSession's
        # constructor, which its trylast pytest_configure calls after this hook
        slug = state.gpu.slug
        state.replaced_get_machine_id = pytest_benchmark.session.get_machine_id
        pytest_benchmark.session.get_machine_id = lambda: slug


def _refuse_baseline_options_with_compare_ref(config) -> None:
    """A pull request's run is judged against its base in the same run: it must never be stored
    as a baseline, nor judged by pytest-benchmark against a stored one."""
    conflicts = {
        "benchmark_save": "--benchmark-save: a pull-request run is never saved as a baseline",
        "benchmark_autosave": "--benchmark-autosave: a pull-request run is never saved as a baseline",
        "benchmark_compare_fail": "--benchmark-compare-fail: it judges against a stored baseline, "
                                  "and --compare-ref judges against the ref",
    }
    for option, why in conflicts.items():
        if getattr(config.option, option, None):
            raise pytest.UsageError(f"--compare-ref cannot be combined with {why}; drop one of them")


def pytest_sessionstart(session):
    config = session.config
    state = config.stash[STATE]
    if state.gpu is not None and config.getoption("compare_ref") is not None:
        _open_ref(config, state)
    bs = getattr(config, "_benchmarksession", None)
    if bs is None or state.gpu is None:
        return
    if worker_id() is not None:
        prepare_worker_session(config)
    if type(bs.storage) is FileStorage:
        bs.storage = NumberedStorage(bs.storage.path, bs.storage.logger, bs.storage.default_machine_id, state)
    if state.compare_spec:
        _load_baseline(state, bs)


def _open_ref(config, state: SuiteState) -> None:
    from harness.ab.against_ref import RefComparison
    from harness.ab.ref_tree import RefError

    try:
        state.ref = RefComparison(ROOT, config.getoption("compare_ref"), arch=arch_of(state.gpu.compute_capability),
                                  time_identical=config.getoption("compare_ref_all"),
                                  accepted=config.getoption("accept_slowdown"))
    except RefError as error:
        raise pytest.UsageError(f"--compare-ref: {error}") from None


def pytest_unconfigure(config):
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if state.ref is not None:
        state.ref.close()  # removes the temporary worktree
    if state.replaced_get_machine_id is not None:  # the GPU's folder name must not outlive this session
        import pytest_benchmark.session

        pytest_benchmark.session.get_machine_id = state.replaced_get_machine_id
        state.replaced_get_machine_id = None


def _is_xdist_controller(config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and worker_id() is None


def _load_baseline(state: SuiteState, bs) -> None:
    folder = Path(bs.storage.path) / state.gpu.slug
    state.comparing = True
    try:
        path = resolve_compare(folder, state.compare_spec)
        if path is None:
            state.notices.append(
                f"no baseline for {state.gpu.name} in {folder}: every case is 'no baseline'. Record one on an "
                f"idle GPU with `tox -e baseline-cuda13` (pytest suites -m perf --benchmark-save=LABEL) and commit it")
            return
        doc = load_run(path, expected_gpu=state.gpu.name)
        history_paths = [p for p in stored_runs(folder)[-HISTORY_RUNS:] if p != path]
        runs = {path.name: doc} | {p.name: load_run(p, expected_gpu=state.gpu.name) for p in history_paths}
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from None
    state.baseline = Baseline.from_doc(path, doc)
    state.history = history_of(runs)
    # pytest-benchmark's tables show the baseline's rows beside this run's
    bs.compared_mapping = {path: {bench["fullname"]: bench for bench in doc["benchmarks"]}}


class NumberedStorage(FileStorage):
    """pytest-benchmark's storage, saving through harness.baselines.save_run.

    Saves are numbered under a lock, atomic, never overwrite, and are refused
    for a run in which any test failed: a baseline describes a healthy run.
    """

    def __init__(self, path, logger, default_machine_id, state: SuiteState):
        super().__init__(path, logger, default_machine_id)
        self.state = state

    def save(self, output_json, save):
        if self.state.failures:
            self.state.problems.append(f"not saved as a baseline: {self.state.failures} test(s) failed in this run")
            return
        try:
            path = save_run(Path(self.path) / self.default_machine_id, save, output_json)
        except BaselineError as error:
            self.state.problems.append(str(error))
            return
        self.state.notices.append(f"saved this run as {path}")


def pytest_benchmark_update_machine_info(config, machine_info):
    state = config.stash[STATE]
    if state.gpu is not None:
        clocks = state.device.clock_state()
        machine_info["gpu"] = dict(state.gpu.as_dict(), sm_clock_mhz_now=clocks.sm_clock_mhz,
                                   clock_event_reasons_now=clocks.reasons)


def pytest_report_header(config):
    state = config.stash[STATE]
    if state.gpu is None:
        return [f"kernel suite: GPU tests will be skipped: {state.device.why_not}"]
    info = state.gpu
    return [
        f"kernel suite: {info.name} {info.uuid or '(no UUID: NVML missing)'} on {info.host} (CUDA device "
        f"{info.cuda_device}, {info.pci_bus_id}, {arch_of(info.compute_capability)}, "
        f"{info.multiprocessors} SMs), driver {info.driver}, CUDA runtime {info.cuda_runtime}, CuPy {info.cupy}",
        f"kernel suite: profile {config.getoption('profile')}, baselines in {BASELINES / info.slug}",
    ]


def pytest_report_collectionfinish(config, items):
    """Say which timer measures this session's timed cases (chosen once collection shows there are some)."""
    state = config.stash[STATE]
    if state.timer is not None:
        return [f"kernel suite: timer: {_timer_line(state.timer)}"]
    if state.gpu is not None and _is_xdist_controller(config):
        return ["kernel suite: timer: chosen by each xdist worker (each result's 'timer' says which)"]
    return []


def _timer_line(timer) -> str:
    if timer.uses_cupti:
        return ("kernel time from CUPTI activity records (first activity start to last activity end of a run; "
                "kernels of 20 µs or more that run one at a time recorded with the KERNEL kind, the rest with "
                "CONCURRENT_KERNEL)")
    return f"held CUDA events: {timer.note}"


@pytest.hookimpl(trylast=True)  # after -m/-k deselection: only the tests that will run
def pytest_collection_modifyitems(config, items):
    state = config.stash[STATE]
    if state.gpu is not None:
        if not _is_xdist_controller(config) and any("perf" in item.keywords for item in items):
            state.timer = state.device.make_timer()  # CUPTI or held events, decided once
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {state.device.why_not}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """Runs after pytest-benchmark saved (its hook wraps this one): export, report, exit status."""
    config = session.config
    state = config.stash[STATE]
    export_results(config)  # in an xdist worker: results go to the controller
    if worker_id() is None and state.comparing:
        _write_report(config, state)
    if state.ref is not None:
        _write_ref_report(state)
    if state.problems and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist controller: a worker finished; take over its benchmarks (their records included)."""
    if getattr(node.config, "_benchmarksession", None) is not None:
        import_results(node.config, getattr(node, "workeroutput", {}))


def session_records(config) -> list[CaseRecord]:
    bs = getattr(config, "_benchmarksession", None)
    return [CaseRecord.from_benchmark(b.as_dict(include_data=True)) for b in (bs.benchmarks if bs else []) if b]


def _write_report(config, state: SuiteState) -> None:
    records = [r for r in session_records(config) if r.verdict]
    if not records:
        return
    baseline = state.baseline
    if baseline is not None:
        ran = {r.case for r in records}
        not_run = sorted(set(baseline.cases) - ran)
        if not_run:  # renamed, removed or deselected cases: their history is not compared
            state.notices.append(f"{len(not_run)} case(s) of the baseline did not run in this session, "
                                 f"e.g. {not_run[0]}")
    text = markdown_report(records, state.gpu, baseline.path if baseline else None)
    _publish_report(state, text, counts_text(verdict_counts(records)))


def _write_ref_report(state: SuiteState) -> None:
    import kernels
    from harness.report.markdown import markdown_paired_report, paired_counts

    ref = state.ref
    ref.removed_kernels(kernels)
    text = markdown_paired_report(ref.verdicts, state.gpu, ref.ref, ref.tree.sha, ref.accepted)
    _publish_report(state, text, f"against {ref.ref} ({ref.tree.sha[:10]}): {counts_text(paired_counts(ref.verdicts))}")


def _publish_report(state: SuiteState, text: str, counts: str) -> None:
    """Write the report; the summary line names the counts and the file, or a problem says why not."""
    try:
        write_report(state.report_path, text)
    except OSError as error:
        state.problems.append(f"could not write the report {state.report_path}: {error}")
        return
    state.notices.append(f"{counts}; report: {state.report_path}")


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash[STATE]
    if state.notices:
        terminalreporter.section("kernel suite")
        for line in state.notices:
            terminalreporter.write_line(line)
    if state.problems:
        terminalreporter.section("kernel suite: errors", red=True)
        for line in state.problems:
            terminalreporter.write_line(f"ERROR: {line}", red=True)


# ---- fixtures ---------------------------------------------------------------


@pytest.fixture(scope="session")
def gpu(pytestconfig):
    """The GPU's description (harness.gpu.GpuInfo); skips the test without a CUDA device."""
    state = pytestconfig.stash[STATE]
    if state.gpu is None:
        pytest.skip(f"needs a CUDA GPU: {state.device.why_not}")
    return state.gpu


@pytest.fixture(autouse=True)
def _gpu_lock(request):
    """GPU tests hold their GPU's lock: exclusive while timing (perf), shared otherwise."""
    state = request.config.stash[STATE]
    if "gpu" not in request.keywords or state.gpu is None:
        yield
        return
    with gpu_lock(state.gpu.pci_bus_id, exclusive="perf" in request.keywords):
        yield


@pytest.fixture(scope="session")
def gpu_timer(gpu, pytestconfig):
    """The session's timer (CUPTI kernel time where available, else held CUDA events)."""
    state = pytestconfig.stash[STATE]
    if state.timer is None:  # a test outside the perf marker asked for it
        state.timer = state.device.make_timer()
    return state.timer


@pytest.fixture(scope="session")
def profile(pytestconfig):
    return pytestconfig.stash[STATE].profile


@pytest.fixture
def gpu_bench(benchmark, gpu_timer, pytestconfig):
    """Times a case on the GPU, records it with pytest-benchmark and judges it (harness.plugin.timed_case)."""
    from harness.plugin.timed_case import TimedCase

    return TimedCase(benchmark, gpu_timer, pytestconfig.stash[STATE])


@pytest.fixture(scope="session")
def ceilings(gpu_timer, profile):
    """Hardware ceilings measured in this run (harness.ceilings.Ceilings)."""
    from harness.timing.ceilings import Ceilings

    return Ceilings(gpu_timer, profile)
