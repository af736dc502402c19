"""Every use of pytest-benchmark beyond its public options, in one place.

pytest-benchmark 5.2 times Python callables by wall clock and has no public way
to accept samples it did not take, to name its storage folder, or to reach its
session from a hook. The suite needs all three, so it uses these internals,
pinned by tox.ini (<5.3) and checked by tests/plugin/test_benchmark.py:

* `config._benchmarksession`: the session (its storage, benchmarks, machine id);
* `bench._make_stats(1)`: what pytest-benchmark's own runner registers samples with;
* `bench._mode`: set so that a fixture used without a timed call raises no warning;
* the text of its xdist notice, which `silence_xdist_notice` filters;
* the keys of its machine_info, which `generated_machine_info` writes without py-cpuinfo's probe:
  that probe starts a subprocess that took 1.2 s of every run (its CPU flags say nothing
  about a GPU's timing; the CPU's model name and count are kept).

Runs are saved through `NumberedStorage` (src/kernelwatch/storage/runs.py): numbered
under a lock, atomic, never overwriting, refused after a failed test.
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_benchmark.storage.file import FileStorage

from kernelwatch.storage.runs import BaselineError, save_run

if TYPE_CHECKING:
    from kernelwatch.report.findings import Findings


def session_of(config):
    """pytest-benchmark's session of this run, or None when the plugin is not loaded (-p no:benchmark)."""
    return getattr(config, "_benchmarksession", None)


def silence_xdist_notice() -> None:
    """Keep pytest-benchmark from saying "Benchmarks are automatically disabled because xdist plugin
    is active" while this pytest_configure runs: each worker turns it back on
    (xdist.prepare_worker_session) and times its own GPU, so the notice would say the opposite of
    what happens. Called before pytest-benchmark's own pytest_configure (trylast), which warns."""
    from pytest_benchmark.logger import PytestBenchmarkWarning

    warnings.filterwarnings("ignore", message="Benchmarks are automatically disabled because xdist",
                            category=PytestBenchmarkWarning)


def _cpu() -> dict:
    """The CPU as the host names it: model, cores, architecture (Linux's /proc/cpuinfo; elsewhere platform's)."""
    brand = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as lines:
            brand = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), brand)
    except OSError:
        pass
    return {"brand_raw": brand, "count": os.cpu_count(), "arch_string_raw": platform.machine(),
            "source": "/proc/cpuinfo (py-cpuinfo's probe is not run)"}


def generated_machine_info() -> dict:
    """pytest-benchmark's machine_info, its keys as its own hook writes them, the CPU from `_cpu`."""
    version = platform.python_version()
    if platform.python_implementation() == "PyPy":
        version = ".".join(str(part) for part in sys.pypy_version_info[:3])
    return {"node": platform.node(), "processor": platform.processor(), "machine": platform.machine(),
            "python_compiler": platform.python_compiler(), "python_implementation": platform.python_implementation(),
            "python_implementation_version": version, "python_version": platform.python_version(),
            "python_build": platform.python_build(), "release": platform.release(), "system": platform.system(),
            "cpu": _cpu()}


def hand_samples(bench, samples: list[float], mode: str) -> None:
    """Register `samples` (seconds) as the timed rounds of pytest-benchmark's `bench` fixture."""
    if bench.disabled:
        return
    stats = bench._make_stats(1)
    for seconds in samples:
        stats.update(seconds)
    bench._mode = mode


def mark_not_timed(bench, why: str) -> None:
    """The fixture was used but nothing timed (no "fixture unused" warning)."""
    bench._mode = why


def benchmarks_as_dicts(config) -> list[dict]:
    """Every benchmark of this session as pytest-benchmark's JSON writes it, samples included."""
    session = session_of(config)
    return [b.as_dict(include_data=True) for b in (session.benchmarks if session else []) if b]


def run_document(config) -> dict:
    """This run as pytest-benchmark's JSON document, every sample included: what --benchmark-json
    would write, built by pytest-benchmark's own hooks (the history store records it)."""
    session = session_of(config)
    machine_info = session.get_machine_info()
    commit_info = config.hook.pytest_benchmark_generate_commit_info(config=config)
    config.hook.pytest_benchmark_update_commit_info(config=config, commit_info=commit_info)
    document = config.hook.pytest_benchmark_generate_json(config=config, benchmarks=session.benchmarks,
                                                          include_data=True, machine_info=machine_info,
                                                          commit_info=commit_info)
    # as pytest-benchmark's own save and --benchmark-json do: the correctness checks' errors join here
    config.hook.pytest_benchmark_update_json(config=config, benchmarks=session.benchmarks, output_json=document)
    return document


class NumberedStorage(FileStorage):
    """pytest-benchmark's file storage, saving through kernelwatch.storage.runs.save_run.

    Saves are numbered under a lock, atomic, never overwrite, and are refused
    for a run in which any test failed: a baseline describes a healthy run.
    """

    def __init__(self, path, logger, default_machine_id, findings: Findings):
        super().__init__(path, logger, default_machine_id)
        self.findings = findings

    def save(self, output_json, save):
        if self.findings.failures:
            failed = self.findings.failures
            self.findings.problems.append(f"not saved as a baseline: {failed} test(s) failed in this run")
            return
        try:
            path = save_run(Path(self.path) / self.default_machine_id, save, output_json)
        except BaselineError as error:
            self.findings.problems.append(str(error))
            return
        self.findings.notices.append(f"saved this run as {path}")


def use_gpu_folder(config, findings: Findings, slug: str) -> None:
    """Store this session's runs in `<storage>/<slug>` (the GPU model's folder) through NumberedStorage.

    pytest-benchmark names its folder from the Python platform; its session is
    given the GPU's slug as its machine id instead (no module of pytest-benchmark
    is patched), before anything is loaded or saved.
    """
    bs = session_of(config)
    if bs is None:
        return
    bs.machine_id = slug
    if type(bs.storage) is FileStorage:
        bs.storage = NumberedStorage(bs.storage.path, bs.storage.logger, slug, findings)
