"""Baseline keying, saving and per-case verdicts of the pytest-benchmark glue, on recorded data."""

import json
import types

import pytest

from harness.bench_session import AtomicFileStorage, BenchCase, SuiteState, key_storage_by_gpu
from harness.timing import PROFILES, Measurement
from harness.verdict import NO_BASELINE, SAME


class Logger:
    def __init__(self):
        self.lines = []

    def info(self, text, **_):
        self.lines.append(text)

    warning = info


def recorded_doc(gpu="NVIDIA H200", samples=None):
    samples = samples or [1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3, 1.02e-3, 0.98e-3, 1.00e-3, 1.01e-3]
    return {"machine_info": {"gpu": {"name": gpu}}, "commit_info": {}, "datetime": "2026-11-29T12:00:00",
            "version": "5.2.3",
            "benchmarks": [{"fullname": "suites/t.py::test_x[a]", "name": "test_x[a]",
                            "stats": {"median": 1e-3, "data": samples}}]}


def test_storage_is_keyed_by_the_gpu_slug(tmp_path, monkeypatch):
    import pytest_benchmark.session

    monkeypatch.setattr(pytest_benchmark.session, "get_machine_id", pytest_benchmark.session.get_machine_id)
    key_storage_by_gpu("NVIDIA_H200")
    assert pytest_benchmark.session.get_machine_id() == "NVIDIA_H200"
    storage = AtomicFileStorage(tmp_path, Logger(), pytest_benchmark.session.get_machine_id())
    storage.save({"benchmarks": []}, "first")
    storage.save({"benchmarks": []}, "second")
    assert sorted(p.name for p in (tmp_path / "NVIDIA_H200").iterdir()) == ["0001_first.json", "0002_second.json"]


def test_a_run_with_failures_is_never_saved(tmp_path):
    storage = AtomicFileStorage(tmp_path, Logger(), "NVIDIA_H200")
    storage.config = types.SimpleNamespace(_kernel_suite_failures=2)
    storage.save({"benchmarks": []}, "broken")
    assert not list(tmp_path.rglob("*.json"))
    assert "2 test(s) failed" in storage.logger.lines[0]


def state():
    return SuiteState("NVIDIA H200", PROFILES["quick"], 0.05)


def test_missing_baseline_says_how_to_record_one(tmp_path):
    s = state()
    s.load_baseline(None, tmp_path / "NVIDIA_H200")
    assert s.comparing and "no baseline for NVIDIA H200" in s.baseline_problem
    assert "tox -e baseline" in s.baseline_problem


def test_another_gpus_baseline_is_refused(tmp_path):
    path = tmp_path / "0001_a.json"
    path.write_text(json.dumps(recorded_doc(gpu="NVIDIA A100-SXM4-80GB")))
    with pytest.raises(pytest.UsageError, match="NVIDIA A100"):
        state().load_baseline(path, tmp_path)


def test_truncated_baseline_is_a_clear_usage_error(tmp_path):
    path = tmp_path / "0001_a.json"
    path.write_text(json.dumps(recorded_doc())[:100])
    with pytest.raises(pytest.UsageError, match="0001_a.json"):
        state().load_baseline(path, tmp_path)


class FakeBenchmark:
    fullname = "suites/t.py::test_x[a]"
    disabled = True

    def __init__(self):
        self.extra_info = {}


def judged(samples, tmp_path):
    path = tmp_path / "0001_a.json"
    path.write_text(json.dumps(recorded_doc()))
    s = state()
    s.load_baseline(path, tmp_path)
    case = BenchCase(FakeBenchmark(), timer=None, state=s)
    case._judge(Measurement(samples, "noise"), s.threshold)
    return s, case


def test_same_timings_pass_and_are_reported_same(tmp_path):
    s, case = judged([1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3, 1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3], tmp_path)
    assert s.verdicts[0].label == SAME and case.benchmark.extra_info["verdict"] == SAME


def test_a_regression_fails_its_own_test_with_both_figures(tmp_path):
    with pytest.raises(pytest.fail.Exception, match=r"1\.20 ms now against 1\.00 ms"):
        judged([1.20e-3, 1.21e-3, 1.19e-3, 1.20e-3, 1.22e-3, 1.18e-3, 1.20e-3, 1.21e-3], tmp_path)


def test_a_case_missing_from_the_baseline_is_no_baseline(tmp_path):
    path = tmp_path / "0001_a.json"
    path.write_text(json.dumps(recorded_doc()))
    s = state()
    s.load_baseline(path, tmp_path)
    bench = FakeBenchmark()
    bench.fullname = "suites/t.py::test_x[new]"
    BenchCase(bench, timer=None, state=s)._judge(Measurement([1e-3] * 8, "noise"), s.threshold)
    assert s.verdicts[0].label == NO_BASELINE
    assert bench.extra_info["verdict_note"] == "not in 0001_a.json"




def test_wall_clock_cases_get_the_wider_threshold(tmp_path):
    path = tmp_path / "0001_a.json"
    path.write_text(json.dumps(recorded_doc()))
    s = state()
    s.load_baseline(path, tmp_path)
    case = BenchCase(FakeBenchmark(), timer=None, state=s)
    twelve_percent_slower = [1.12e-3, 1.13e-3, 1.11e-3, 1.12e-3, 1.14e-3, 1.10e-3, 1.12e-3, 1.13e-3]
    case._judge(Measurement(twelve_percent_slower, "noise"), s.wall_threshold)
    assert s.verdicts[-1].label == SAME and case.benchmark.extra_info["regression_threshold"] == 0.30
    with pytest.raises(pytest.fail.Exception):
        case._judge(Measurement(twelve_percent_slower, "noise"), s.threshold)
