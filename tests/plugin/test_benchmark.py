"""Every pytest-benchmark internal the suite relies on, checked against the installed version.

The suite hands pytest-benchmark samples it did not time and takes over its
baseline loading and saving (src/kernelwatch/plugin/__init__.py, src/kernelwatch/plugin/timed_case.py,
src/kernelwatch/plugin/xdist.py). None of that is public API, so pytest-benchmark is pinned
to the tested minor version (constraints file) and this test fails, naming the
internal, the day an upgrade changes one of them.
"""

from __future__ import annotations

import inspect
import time
import types

import pytest_benchmark
import pytest_benchmark.session
from pytest_benchmark.fixture import BenchmarkFixture
from pytest_benchmark.session import BenchmarkSession
from pytest_benchmark.stats import Metadata
from pytest_benchmark.storage.file import FileStorage

TESTED_MINOR = "5.2."


def test_the_installed_version_is_the_tested_minor():
    assert pytest_benchmark.__version__.startswith(TESTED_MINOR), pytest_benchmark.__version__


def test_storage_folder_is_named_by_get_machine_id_in_the_session_constructor():
    # kernelwatch.plugin replaces pytest_benchmark.session.get_machine_id before BenchmarkSession(config)
    assert callable(pytest_benchmark.session.get_machine_id)
    assert "get_machine_id()" in inspect.getsource(BenchmarkSession.__init__)


def test_the_session_reads_compare_at_construction_and_loads_only_when_asked():
    # kernelwatch.plugin sets config.option.benchmark_compare = False and loads the baseline itself
    assert "getoption('benchmark_compare')" in inspect.getsource(BenchmarkSession.__init__)
    loading = inspect.getsource(BenchmarkSession.handle_loading)
    assert "if self.compare:" in loading and "self.compared_mapping = compared_mapping" in loading
    # ... and hands it over as {path: {fullname: benchmark}} for the tables
    assert "self.compared_mapping.items()" in inspect.getsource(BenchmarkSession.prepare_benchmarks)


def test_file_storage_keeps_the_constructor_and_save_the_suite_overrides():
    assert list(inspect.signature(FileStorage.__init__).parameters) == ["self", "path", "logger", "default_machine_id"]
    assert list(inspect.signature(FileStorage.save).parameters) == ["self", "output_json", "save"]
    assert "self.storage.save(output_json, save)" in inspect.getsource(BenchmarkSession.handle_saving)


def test_samples_handed_to_the_fixture_through_make_stats_are_registered_and_saved():
    # kernelwatch.plugin.timed_case: bench.extra_info.update(...); stats = bench._make_stats(1); stats.update(seconds) per
    # sample; bench._mode = "..." (so pytest-benchmark does not warn that the fixture went unused)
    registered = []
    node = types.SimpleNamespace(name="test_time[k]", _nodeid="suites/s.py::test_time[k]",
                                 callspec=types.SimpleNamespace(id="k", params={"name": "k"}))
    fixture = BenchmarkFixture(node, disable_gc=False, timer=types.SimpleNamespace(target=time.perf_counter),
                               min_rounds=5, min_time=5e-6, max_time=1.0, warmup=False, warmup_iterations=0,
                               calibration_precision=10, add_stats=registered.append, logger=None, warner=None,
                               disabled=False, cprofile=False, cprofile_loops=None, cprofile_dump=None,
                               group="matmul 1024")
    assert fixture._mode is None and fixture.disabled is False and fixture.extra_info == {}
    fixture.extra_info.update({"kernel": "k", "timer": "cupti"})
    samples = [3e-3, 1e-3, 2e-3, 4e-3]
    stats = fixture._make_stats(1)
    for seconds in samples:
        stats.update(seconds)
    fixture._mode = "kernelwatch_bench.time(...)"
    assert isinstance(stats, Metadata) and registered == [stats] and fixture.stats is stats
    saved = stats.as_dict(include_data=True)
    assert saved["stats"]["data"] == samples and saved["stats"]["rounds"] == 4
    assert saved["stats"]["median"] == 2.5e-3 and saved["stats"]["iterations"] == 1
    assert (saved["fullname"], saved["group"], saved["param"]) == ("suites/s.py::test_time[k]", "matmul 1024", "k")
    assert saved["extra_info"] == {"kernel": "k", "timer": "cupti"}


def test_worker_results_rebuild_as_metadata_with_their_samples():
    # kernelwatch.workers.import_results: Metadata(fixture-like, iterations, options), stats.update per sample
    assert list(inspect.signature(Metadata.__init__).parameters) == ["self", "fixture", "iterations", "options"]
    fixture = types.SimpleNamespace(name="t[a]", fullname="s.py::t[a]", group=None, param="a", params={"x": 1},
                                    extra_info={"kernel": "k"}, cprofile_stats=None, has_error=False)
    metadata = Metadata(fixture, 1, {"timer": "gpu"})
    for seconds in (3e-3, 1e-3, 2e-3):
        metadata.stats.update(seconds)
    as_dict = metadata.as_dict(include_data=True)
    assert as_dict["stats"]["data"] == [3e-3, 1e-3, 2e-3] and as_dict["stats"]["median"] == 2e-3
    assert as_dict["extra_info"] == {"kernel": "k"} and as_dict["fullname"] == "s.py::t[a]"


def test_session_attributes_the_suite_sets_exist():
    source = inspect.getsource(BenchmarkSession)
    for attribute in ("self.storage", "self.benchmarks", "self.disabled", "self.save", "self.autosave",
                      "self.json", "self.histogram", "compared_mapping"):
        assert attribute in source, attribute


def test_the_numbered_storage_saves_a_healthy_run_and_says_why_it_saved_none(tmp_path, monkeypatch):
    import kernelwatch.plugin.benchmark as benchmark
    from kernelwatch.storage.runs import BaselineError

    saved = []

    def save_run(folder, name, document):
        saved.append((folder, name, document))
        if name == "refused":
            raise BaselineError("refused: a run of that name exists")
        return folder / "0001_x.json"

    monkeypatch.setattr(benchmark, "save_run", save_run)
    from kernelwatch.report.findings import Findings

    state = types.SimpleNamespace(findings=Findings())
    storage = benchmark.NumberedStorage(tmp_path, None, "Fake_GPU", state.findings)
    storage.save({"doc": 1}, "x")
    assert saved == [(tmp_path.resolve() / "Fake_GPU", "x", {"doc": 1})]
    assert state.findings.notices == [f"saved this run as {tmp_path.resolve() / 'Fake_GPU' / '0001_x.json'}"]
    storage.save({}, "refused")
    assert state.findings.problems == ["refused: a run of that name exists"]
    state.findings.failed_tests += ['suites/s.py::test_a', 'suites/s.py::test_b']
    storage.save({}, "y")
    assert state.findings.problems[-1] == "not saved as a baseline: 2 test(s) failed in this run" and len(saved) == 2


def test_a_gpu_folder_replaces_only_pytest_benchmarks_own_file_storage_and_samples_skip_a_disabled_fixture(tmp_path):
    import kernelwatch.plugin.benchmark as benchmark

    findings = types.SimpleNamespace()
    session = types.SimpleNamespace(machine_id="Linux-CPython", storage=FileStorage(tmp_path, None, "Linux-CPython"))
    benchmark.use_gpu_folder(types.SimpleNamespace(_benchmarksession=session), findings, "Fake_GPU_9000")
    assert session.machine_id == "Fake_GPU_9000" and type(session.storage) is benchmark.NumberedStorage
    assert (session.storage.default_machine_id, session.storage.findings, session.storage.path) == (
        "Fake_GPU_9000", findings, tmp_path.resolve())
    numbered = session.storage
    benchmark.use_gpu_folder(types.SimpleNamespace(_benchmarksession=session), findings, "Other")
    assert session.storage is numbered  # not wrapped twice
    benchmark.use_gpu_folder(types.SimpleNamespace(), findings, "Fake_GPU_9000")  # no pytest-benchmark: nothing
    disabled = types.SimpleNamespace(disabled=True, _mode=None)
    benchmark.hand_samples(disabled, [1.0], "gpu")
    assert disabled._mode is None


def test_the_cpu_is_named_by_the_text_after_the_colon_of_procs_first_model_name_line(monkeypatch):
    import io

    import kernelwatch.plugin.benchmark as benchmark

    cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n"
    monkeypatch.setattr(benchmark, "open", lambda *args, **kwargs: io.StringIO(cpuinfo), raising=False)
    assert benchmark._cpu()["brand_raw"] == "Intel(R) Xeon(R) Platinum 8480C"
    named = "model name\t: Virtual CPU: KVM 2.5+\n"  # all the text after the first colon, its own colons too
    monkeypatch.setattr(benchmark, "open", lambda *args, **kwargs: io.StringIO(named), raising=False)
    assert benchmark._cpu()["brand_raw"] == "Virtual CPU: KVM 2.5+"


def test_without_a_model_name_line_or_a_readable_proc_cpuinfo_the_cpu_is_named_as_platform_names_it(monkeypatch):
    import io
    import platform

    import kernelwatch.plugin.benchmark as benchmark

    def unreadable(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/proc/cpuinfo")

    monkeypatch.setattr(platform, "processor", lambda: "x86_64")
    monkeypatch.setattr(benchmark, "open", lambda *args, **kwargs: io.StringIO("processor\t: 0\nBogoMIPS\t: 50.00\n"),
                        raising=False)  # an ARM host's: no model name
    assert benchmark._cpu()["brand_raw"] == "x86_64"
    monkeypatch.setattr(benchmark, "open", unreadable, raising=False)
    assert benchmark._cpu()["brand_raw"] == "x86_64"


def test_machine_info_under_pypy_gives_pypys_own_version_as_pytest_benchmark_does(monkeypatch):
    import platform
    import sys

    import kernelwatch.plugin.benchmark as benchmark

    # the name built at run time, as platform builds it: a test literal would be the interned constant
    monkeypatch.setattr(platform, "python_implementation", lambda: "".join(["Py", "Py"]))
    monkeypatch.setattr(sys, "pypy_version_info", (7, 3, 17, "final", 0), raising=False)
    info = benchmark.generated_machine_info()
    assert (info["python_implementation"], info["python_implementation_version"]) == ("PyPy", "7.3.17")
    assert info["python_version"] == platform.python_version()


def test_the_plugins_machine_info_wins_over_pytest_benchmarks_whichever_loads_last():
    """`pytest_benchmark_generate_machine_info` is a first-result hook, and pluggy calls the plugin registered last
    first: the suite's answer (the CPU's name without py-cpuinfo's seconds of probing) must come first anyway."""
    import pluggy
    import pytest_benchmark.hookspec
    import pytest_benchmark.plugin

    import kernelwatch.plugin
    from kernelwatch.plugin.benchmark import generated_machine_info

    manager = pluggy.PluginManager("pytest")
    manager.add_hookspecs(pytest_benchmark.hookspec)
    manager.register(kernelwatch.plugin)
    manager.register(pytest_benchmark.plugin)  # registered last: called first, unless the suite's is tryfirst
    assert manager.hook.pytest_benchmark_generate_machine_info(config=None) == generated_machine_info()
