"""Fixtures and pytest / pytest-benchmark hooks of the kernel suite.

* GPU tests carry the `gpu` marker and are skipped, with the reason, where
  CuPy finds no CUDA device; CPU tests (tests/, and the CPU parts of
  suites/) always run.
* Baselines are keyed by the NVML name of the GPU the tests run on:
  baselines/<slug>/ (see harness/bench_session.py).
* `--benchmark-compare` judges every timed case against that baseline;
  a regression fails its own test, and a markdown report is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.gpu import cuda_available
from harness.timing import PROFILES

ROOT = Path(__file__).resolve().parent
BASELINES = ROOT / "baselines"
REPORT_DEFAULT = ROOT / "reports" / "benchmark-report.md"


def pytest_addoption(parser):
    group = parser.getgroup("kernel suite")
    group.addoption("--profile", choices=sorted(PROFILES), default="nightly",
                    help="sampling and sizes: nightly (all sizes, to 0.5%% noise) or quick (pull requests)")
    group.addoption("--regression-threshold", default=None,
                    help="slow-down that counts as a regression, e.g. 0.05 or 5%% "
                         "(default: $KERNEL_SUITE_THRESHOLD or 5%%)")
    group.addoption("--benchmark-report", default=str(REPORT_DEFAULT),
                    help="markdown report of the verdicts (written when comparing)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "perf: a timed case (pytest-benchmark)")
    global _CONFIG
    _CONFIG = config
    config._kernel_suite_failures = 0
    available, why = cuda_available()
    config._kernel_suite_gpu = (available, why)
    if available:
        from harness.workers import pin_worker_to_device

        pin_worker_to_device()  # an xdist worker takes its own GPU before any CUDA context exists
        _refuse_mixed_gpu_models_under_xdist(config)
    if available and os.environ.get("KERNEL_SUITE_NO_POOL"):
        # under compute-sanitizer: one cudaMalloc per array, so bounds are exact
        import cupy

        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)
    if not hasattr(config.option, "benchmark_storage"):
        return  # pytest-benchmark not loaded (-p no:benchmark)
    # the verdicts need every sample in the stored files
    config.option.benchmark_save_data = True
    if config.option.benchmark_storage == "file://./.benchmarks":  # pytest-benchmark's default
        config.option.benchmark_storage = f"file://{BASELINES}"
    if available:
        from harness.bench_session import key_storage_by_gpu
        from harness.gpu import gpu_info

        key_storage_by_gpu(gpu_info().slug)


def _refuse_mixed_gpu_models_under_xdist(config):
    """Workers save into one baseline folder: all visible GPUs must be one model."""
    if getattr(config.option, "numprocesses", None) in (None, 0):
        return
    import cupy

    names = {cupy.cuda.runtime.getDeviceProperties(i)["name"] for i in range(cupy.cuda.runtime.getDeviceCount())}
    if len(names) > 1:
        raise pytest.UsageError(
            f"the visible GPUs are of different models ({', '.join(sorted(map(str, names)))}); with -n, "
            "select one model with CUDA_VISIBLE_DEVICES so that results go to one baseline folder"
        )


def pytest_sessionstart(session):
    config = session.config
    bs = getattr(config, "_benchmarksession", None)
    available, _ = config._kernel_suite_gpu
    if bs is None or not available:
        return
    from harness.bench_session import SuiteState, install_atomic_storage
    from harness.gpu import gpu_info
    from harness.verdict import threshold_from_env
    from harness.workers import prepare_worker_session, worker_id

    if worker_id() is not None:
        prepare_worker_session(config)
    install_atomic_storage(config)
    threshold_option = config.getoption("regression_threshold")
    if threshold_option is not None:
        os.environ["KERNEL_SUITE_THRESHOLD"] = threshold_option
    try:
        threshold = threshold_from_env()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    info = gpu_info()
    state = SuiteState(info.name, PROFILES[config.getoption("profile")], threshold, info.cuda_device, info.pci_bus_id)
    if bs.compare:
        compared = sorted(bs.compared_mapping or {})
        folder = Path(bs.storage.path) / gpu_info().slug
        path = None
        if compared:
            path = Path(compared[-1])
            path = path if path.is_absolute() else Path(bs.storage.path) / path
        state.load_baseline(path, folder)
    config._kernel_suite_state = state


def pytest_benchmark_update_machine_info(config, machine_info):
    available, _ = config._kernel_suite_gpu
    if available:
        from harness.gpu import clock_state, gpu_info

        info = gpu_info().as_dict()
        clocks = clock_state()
        info.update(sm_clock_mhz_now=clocks.sm_clock_mhz, clock_event_reasons_now=clocks.reasons)
        machine_info["gpu"] = info


def pytest_benchmark_compare_machine_info(config, benchmarksession, machine_info, compared_benchmark):
    recorded = (compared_benchmark.get("machine_info") or {}).get("gpu", {}).get("name")
    current = (machine_info.get("gpu") or {}).get("name")
    if recorded != current:
        raise pytest.UsageError(
            f"refusing to compare: the baseline was recorded on {recorded or 'an unknown GPU'}, "
            f"this run is on {current or 'no GPU'}; baselines are per GPU model (baselines/<gpu>/)"
        )


def pytest_report_header(config):
    available, why = config._kernel_suite_gpu
    if not available:
        return [f"kernel suite: GPU tests will be skipped: {why}"]
    from harness.gpu import gpu_info

    info = gpu_info()
    lines = [
        f"kernel suite: {info.name} (CUDA device {info.cuda_device}, {info.pci_bus_id}, "
        f"sm_{info.compute_capability.replace('.', '')}, {info.multiprocessors} SMs), driver {info.driver}, "
        f"CUDA runtime {info.cuda_runtime}, CuPy {info.cupy}, NVML {'yes' if info.nvml else 'no'}",
        f"kernel suite: profile {config.getoption('profile')}, baselines in {BASELINES / info.slug}",
    ]
    return lines


def pytest_collection_modifyitems(config, items):
    available, why = config._kernel_suite_gpu
    if available:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    from harness.workers import export_results

    export_results(session.config)  # in an xdist worker: results go to the controller


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist controller: a worker finished; take over its benchmarks and verdicts."""
    from harness.workers import import_results

    if getattr(node.config, "_benchmarksession", None) is not None:
        import_results(node.config, getattr(node, "workeroutput", {}))


_CONFIG = None  # this session's config, for the report hook below


def pytest_runtest_logreport(report):
    """Count failures: a run with any is never saved as a baseline (AtomicFileStorage)."""
    if report.failed and _CONFIG is not None:
        _CONFIG._kernel_suite_failures += 1


def pytest_terminal_summary(terminalreporter, config):
    state = getattr(config, "_kernel_suite_state", None)
    if state is None or not state.comparing:
        return
    from harness.report import markdown_report, write_report

    tr = terminalreporter
    if state.baseline_problem:
        tr.section("kernel suite: baseline")
        tr.write_line(state.baseline_problem)
    if not state.verdicts:
        return
    not_run = sorted(set(state.baseline_cases) - {v.case for v in state.verdicts})
    if not_run:  # renamed, removed or deselected cases: their history is not compared
        tr.write_line(f"{len(not_run)} case(s) of the baseline did not run in this session, e.g. {not_run[0]}")
    text = markdown_report(state.verdicts, state.gpu_name,
                           str(state.baseline_path) if state.baseline_path else None, state.rates)
    path = Path(config.getoption("benchmark_report"))
    write_report(path, text)
    tr.section("kernel suite: verdicts")
    counts = {}
    for verdict in state.verdicts:
        counts[verdict.label] = counts.get(verdict.label, 0) + 1
    tr.write_line(", ".join(f"{n} {label}" for label, n in sorted(counts.items())) + f"; report: {path}")


# ---- fixtures ---------------------------------------------------------------


@pytest.fixture(scope="session")
def gpu():
    """The GPU's description (harness.gpu.GpuInfo); skips the test without a CUDA device."""
    available, why = cuda_available()
    if not available:
        pytest.skip(f"needs a CUDA GPU: {why}")
    from harness.gpu import gpu_info

    return gpu_info()


@pytest.fixture(autouse=True)
def _gpu_lock(request):
    """GPU tests hold their GPU's lock: exclusive while timing (perf), shared otherwise."""
    if "gpu" not in request.keywords or not request.config._kernel_suite_gpu[0]:
        yield
        return
    from harness.gpu import gpu_info
    from harness.workers import gpu_lock

    with gpu_lock(gpu_info().pci_bus_id, exclusive="perf" in request.keywords):
        yield


@pytest.fixture(scope="session")
def gpu_timer(gpu):
    from harness.timing import GpuTimer

    return GpuTimer(gpu.l2_bytes)


@pytest.fixture(scope="session")
def profile(pytestconfig):
    return PROFILES[pytestconfig.getoption("profile")]


@pytest.fixture
def gpu_bench(benchmark, gpu_timer, pytestconfig):
    """Times a case on the GPU, records it with pytest-benchmark and judges it (harness.bench_session)."""
    from harness.bench_session import BenchCase

    return BenchCase(benchmark, gpu_timer, pytestconfig._kernel_suite_state)


@pytest.fixture(scope="session")
def ceilings(gpu, gpu_timer, profile):
    """Hardware ceilings measured in this run (harness.ceilings.Ceilings)."""
    from harness.ceilings import Ceilings

    return Ceilings(gpu_timer, profile)
