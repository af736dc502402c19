"""kernelwatch's pytest plugin: its hooks (loaded by its pytest11 entry point).

One `SuiteState` per pytest process, kept in `config.stash` (its parts: src/kernelwatch/plugin/state.py):

* GPU tests carry the `gpu` marker and are skipped with the reason where no
  CUDA device is usable, unless `--kernelwatch-require-gpu` (or KERNELWATCH_REQUIRE_GPU=1)
  makes that an error.
* Runs are stored per GPU model: baselines/<slug>/NNNN_<label>.json, where the
  slug comes from the NVML name of the device the tests run on.
* The suite takes `--benchmark-compare` over from pytest-benchmark: it reads
  the chosen baseline once with its own strict loader (src/kernelwatch/storage/runs.py),
  along with the newest stored runs of this GPU model as the noise model's
  history, and hands the baseline to pytest-benchmark only for its tables.
  Each timed case is judged as it runs (src/kernelwatch/plugin/timed_case.py); a regression
  fails its own test; a markdown report of every verdict is written at the end.
* Saves are numbered under a lock and never overwrite; a run in which any test
  failed is never saved.

The plugin's rooms: options.py (options and their checks), state.py (the
session's state, made of the rooms' parts), benchmark.py (every use of pytest-benchmark internals and
the numbered storage), timed_case.py (the kernelwatch_bench fixture's work),
launch.py (the kernelwatch fixture's: any callable, checked and timed), fixtures.py, reporting.py (writes the report and
the terminal summary that src/kernelwatch/report/session_report.py builds), xdist.py (several
workers), device.py (the default device layer) and hookspecs.py.
May import every other room of src/kernelwatch/; nothing imports it but conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwatch.ab.identity import arch_of
from kernelwatch.cause.code_under_test import CodeUnderTest
from kernelwatch.plugin import hookspecs
from kernelwatch.plugin.benchmark import generated_machine_info, session_of, silence_xdist_notice, use_gpu_folder
from kernelwatch.plugin.energy import energy_wanted
from kernelwatch.plugin.options import (
    add_ini_keys,
    add_options,
    baselines_of,
    check_named_things,
    discard_unwritten_json,
    floors_of,
    kernel_library_of,
    open_history_store,
    profile_of,
    refuse_compare_ref_without_a_library,
    refuse_conflicts_with_compare_ref,
    refuse_flags_without_their_flag,
    refuse_requests_without_a_gpu,
    refuse_unwritable_outputs,
    report_path_of,
)
from kernelwatch.plugin.recording import read_history, record_session
from kernelwatch.plugin.reporting import terminal_summary, write_ref_report, write_stored_report
from kernelwatch.plugin.state import STATE, SuiteState
from kernelwatch.plugin.xdist import export_results, import_results, prepare_worker_session, worker_id
from kernelwatch.storage.runs import BaselineError, load_run, resolve_compare, stored_runs
from kernelwatch.storage.schema import SCHEMA_KEY, SCHEMA_VERSION
from kernelwatch.timing.measuring import Measuring
from kernelwatch.verdict.accuracy import ACCURACY_KEY
from kernelwatch.verdict.against_baseline import NOISE_HISTORY_RUNS, Baseline, history_of
from kernelwatch.verdict.judging import Judging

pytest_plugins = ["kernelwatch.plugin.fixtures"]


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser):
    add_options(parser)
    add_ini_keys(parser)


@pytest.hookimpl(trylast=True)
def pytest_kernelwatch_device(config):
    from kernelwatch.plugin.device import CudaDevice

    return CudaDevice()


def pytest_configure(config):
    try:
        _configure(config)
    except pytest.UsageError:
        discard_unwritten_json(config)  # refused before anything was timed: no empty file that reads as a result
        raise


def _configure(config):
    silence_xdist_notice()
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "perf: a timed case (pytest-benchmark)")
    config.addinivalue_line("markers", "kernelwatch(tolerance, scale, flops, bytes, kernel, shape, flush): the "
                            "kernelwatch fixture's settings for this test (docs/adopting.md)")
    refuse_flags_without_their_flag(config)
    refuse_unwritable_outputs(config)
    floors = floors_of(config)
    device = config.hook.pytest_kernelwatch_device(config=config)
    state = SuiteState(
        device,
        Measuring(profile_of(config), energy_cases=config.getoption("kernelwatch_energy")),
        Judging(floors, energy_fails=config.getoption("kernelwatch_energy_verdict") != "report"),
        report_path_of(config),
        code=CodeUnderTest(repo=Path(config.rootpath), diagnose=config.getoption("kernelwatch_diagnose")))
    config.stash[STATE] = state
    config.pluginmanager.register(state, "kernelwatch-state")
    if not device.available:
        if config.getoption("kernelwatch_require_gpu"):
            raise pytest.UsageError(f"--kernelwatch-require-gpu: no usable CUDA GPU on this machine: {device.why_not}")
    else:
        device.pin_worker()
        if getattr(config.option, "numprocesses", None) and len(models := device.model_names()) > 1:
            raise pytest.UsageError(
                f"the visible GPUs are of different models ({', '.join(sorted(models))}); with -n, select one "
                "model with CUDA_VISIBLE_DEVICES so that results go to one baseline folder")
        if config.getoption("kernelwatch_no_memory_pool"):
            device.use_exact_allocations()
        state.measuring.gpu = device.info()
    if config.getoption("kernelwatch_compare_ref") is not None:
        refuse_conflicts_with_compare_ref(config)
        refuse_compare_ref_without_a_library(config)
    if device.available:
        state.code.library = kernel_library_of(config)
    if not hasattr(config.option, "benchmark_storage"):
        return  # pytest-benchmark not loaded (-p no:benchmark)
    config.option.benchmark_save_data = True  # the verdicts need every sample in the stored files
    if config.option.benchmark_storage == "file://./.benchmarks":  # pytest-benchmark's default
        config.option.benchmark_storage = f"file://{baselines_of(config)}"
    storage = config.option.benchmark_storage
    check_named_things(config, Path(storage.removeprefix("file://")) if storage.startswith("file://")
                       else baselines_of(config))
    if not device.available:
        refuse_requests_without_a_gpu(config, device.why_not)
    else:
        state.stored.store = open_history_store(config)
    # the suite loads the baseline itself (one strict loader); pytest-benchmark must not
    state.compare_spec, config.option.benchmark_compare = config.option.benchmark_compare, False


def pytest_sessionstart(session):
    config = session.config
    state = config.stash[STATE]
    if state.measuring.gpu is not None and config.getoption("kernelwatch_compare_ref") is not None:
        _open_ref(config, state)
    bs = session_of(config)
    if bs is None or state.measuring.gpu is None:
        return
    if worker_id() is not None:
        prepare_worker_session(config)
    use_gpu_folder(config, state.findings, state.measuring.gpu.slug)
    if state.compare_spec:
        _load_baseline(state, bs)
    read_history(state)


def _open_ref(config, state: SuiteState) -> None:
    from kernelwatch.ab.against_ref import RefComparison
    from kernelwatch.ab.library import LibraryError
    from kernelwatch.ab.ref_tree import RefError

    try:
        state.code.ref = RefComparison(Path(config.rootpath), config.getoption("kernelwatch_compare_ref"),
                                       arch=arch_of(state.measuring.gpu.compute_capability),
                                       library=state.code.library,
                                       time_identical=config.getoption("kernelwatch_compare_ref_all"),
                                       accepted=config.getoption("kernelwatch_accept_slowdown"))
    except (RefError, LibraryError) as error:
        raise pytest.UsageError(f"--kernelwatch-compare-ref: {error}") from None


def pytest_unconfigure(config):
    state = config.stash.get(STATE, None)
    if state is not None:
        state.code.close()  # the worktrees of the ref comparison and of the reference runs' cause cards


def _is_xdist_controller(config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and worker_id() is None


def _load_baseline(state: SuiteState, bs) -> None:
    folder = Path(bs.storage.path) / state.measuring.gpu.slug
    state.judging.comparing = True
    try:
        path = resolve_compare(folder, state.compare_spec)
        if path is None:
            state.findings.notices.append(
                f"no baseline for {state.measuring.gpu.name} in {folder}: every case is 'new'. Record one on an idle "
                f"GPU by running the same tests with --benchmark-save=LABEL (LABEL: the commit, say), and commit the "
                f"file it writes there")
            return
        doc = load_run(path, expected_gpu=state.measuring.gpu.name)
        history_paths = [p for p in stored_runs(folder)[-NOISE_HISTORY_RUNS:] if p != path]
        runs = {path.name: doc} | {p.name: load_run(p, expected_gpu=state.measuring.gpu.name) for p in history_paths}
    except BaselineError as error:
        raise pytest.UsageError(str(error)) from None
    state.stored.baseline = Baseline.from_doc(path, doc)
    state.stored.baseline_runs = history_of(runs)
    # pytest-benchmark's tables show the baseline's rows beside this run's
    bs.compared_mapping = {path: {bench["fullname"]: bench for bench in doc["benchmarks"]}}


@pytest.hookimpl(tryfirst=True)
def pytest_benchmark_generate_machine_info(config):
    return generated_machine_info()


def pytest_benchmark_update_machine_info(config, machine_info):
    state = config.stash[STATE]
    machine_info[SCHEMA_KEY] = SCHEMA_VERSION  # every stored run says its schema (src/kernelwatch/storage/schema.py)
    if state.measuring.gpu is not None:
        clocks = state.device.clock_state()
        machine_info["gpu"] = dict(state.measuring.gpu.as_dict(), sm_clock_mhz_now=clocks.sm_clock_mhz,
                                   clock_event_reasons_now=clocks.reasons)


def pytest_report_header(config):
    state = config.stash[STATE]
    if state.measuring.gpu is None:
        return [f"kernelwatch: GPU tests will be skipped: {state.device.why_not}"]
    info = state.measuring.gpu
    return [
        f"kernelwatch: {info.name} {info.uuid or '(no UUID: NVML missing)'} on {info.host} (CUDA device "
        f"{info.cuda_device}, {info.pci_bus_id}, {arch_of(info.compute_capability)}, "
        f"{info.multiprocessors} SMs), driver {info.driver}, CUDA runtime {info.cuda_runtime}, CuPy {info.cupy}",
        f"kernelwatch: profile {config.getoption('kernelwatch_profile')}, baselines in {baselines_of(config) / info.slug}",
        _library_line(state.code.library),
    ]


def _library_line(library) -> str:
    """The header's line on the kernel library: which one, or what a project without one goes without."""
    from kernelwatch.ab.library import NOT_NAMED

    if library is None:
        return (f"kernelwatch: {NOT_NAMED}: no machine-code identity, cause cards nor --kernelwatch-compare-ref; "
                f"timing, verdicts and energy as ever")
    return f"kernelwatch: kernel library {library.name} ({library.path or library.elsewhere})"


def pytest_report_collectionfinish(config, items):
    """Say which timer measures this session's timed cases (chosen once collection shows there are some)."""
    state = config.stash[STATE]
    if state.measuring.timer is not None:
        return [f"kernelwatch: timer: {_timer_line(state.measuring.timer)}"]
    if state.measuring.gpu is not None and _is_xdist_controller(config):
        return ["kernelwatch: timer: chosen by each xdist worker (each result's 'timer' says which)"]
    return []


def _open_energy_meter(state: SuiteState, items) -> None:
    """The session's energy meter, where energy is to be measured for any case that will run; --kernelwatch-energy
    (all) on a GPU without an energy counter is an error (exit 4), the profile's cases a notice."""
    wanted = state.measuring.energy_cases == "all" or (state.measuring.energy_cases == "profile" and any(
        energy_wanted(state.measuring, item.nodeid) for item in items if "perf" in item.keywords))
    if not wanted:
        return
    state.measuring.energy_meter, why_not = state.device.make_energy_meter()
    if state.measuring.energy_meter is None:
        if state.measuring.energy_cases == "all":
            raise pytest.UsageError(f"--kernelwatch-energy: {why_not}")
        state.findings.notices.append(f"energy of the profile's energy cases not measured: {why_not}")


def _timer_line(timer) -> str:
    if timer.uses_cupti:
        return ("kernel time from CUPTI activity records (first activity start to last activity end of a run; "
                "kernels of 20 µs or more that run one at a time recorded with the KERNEL kind, the rest with "
                "CONCURRENT_KERNEL)")
    return f"held CUDA events: {timer.note}"


@pytest.hookimpl(trylast=True)  # after -m/-k deselection: only the tests that will run
def pytest_collection_modifyitems(config, items):
    state = config.stash[STATE]
    if state.measuring.gpu is not None:
        if not _is_xdist_controller(config) and any("perf" in item.keywords for item in items):
            state.measuring.timer = state.device.make_timer()  # CUPTI or held events, decided once
            _open_energy_meter(state, items)
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {state.device.why_not}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
            state.findings.skipped_gpu_tests += 1


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """Runs after pytest-benchmark saved (its hook wraps this one): export, report, exit status."""
    config = session.config
    state = config.stash[STATE]
    export_results(config, state.findings)  # in an xdist worker: results go to the controller
    if worker_id() is None:
        record_session(config, state)  # first, so that the report can name this run; a failure loses no report
    judged_checks = state.code.ref is None and any(record.verdict for record in state.findings.accuracy)
    if worker_id() is None and (state.judging.comparing or judged_checks):  # a run of correctness checks only, too
        write_stored_report(state)
    if state.code.ref is not None:
        write_ref_report(state)
    if state.findings.problems and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist controller: a worker finished; take over its benchmarks, records and verdicts."""
    if session_of(node.config) is not None:
        import_results(node.config, node.config.stash[STATE].findings, getattr(node, "workeroutput", {}))


def pytest_benchmark_update_json(config, benchmarks, output_json):
    """Every correctness check's errors go into the run's document beside its timed cases: a saved baseline,
    --benchmark-json and the run the history store records (src/kernelwatch/verdict/accuracy.py)."""
    state = config.stash.get(STATE, None)
    if state is not None and state.findings.accuracy:
        output_json[ACCURACY_KEY] = [record.as_dict() for record in state.findings.accuracy]


def pytest_terminal_summary(terminalreporter, config):
    terminal_summary(terminalreporter, config.stash[STATE])
