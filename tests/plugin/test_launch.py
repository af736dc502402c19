"""The `kernelwatch` fixture (src/kernelwatch/plugin/launch.py) on the fake GPU: the check before the timing, its
failure line, poisoning, the marker's settings, the plugin's stream made current; the fake GPU's "kernels" here
are NumPy callables (its timer runs nothing: the checked launch is the one that runs)."""

from __future__ import annotations

import json
import sys
import types
from xml.etree import ElementTree

import pytest

from tests.support.fake_suite import output, run

CASES = '''
import numpy as np
import pytest

X = np.arange(1, 9, dtype=np.float32)


def doubled(out):
    out[:] = 2 * X


@pytest.mark.kernelwatch(bytes=8 * 4)
def test_right(kernelwatch):
    out = np.empty_like(X)
    kernelwatch(lambda: doubled(out), out=out, reference=lambda: 2.0 * X.astype(np.float64))


def test_wrong(kernelwatch):
    out = np.empty_like(X)
    kernelwatch(lambda: np.copyto(out, 2 * X + 1e-3), out=out, reference=2.0 * X.astype(np.float64))


def test_one_element_never_written(kernelwatch):
    out = np.zeros_like(X)
    kernelwatch(lambda: np.copyto(out[:-1], 2 * X[:-1]), out=out, reference=2.0 * X.astype(np.float64))


@pytest.mark.kernelwatch(tolerance=1e-3)
def test_the_markers_tolerance(kernelwatch):
    out = np.empty_like(X)
    kernelwatch(lambda: np.copyto(out, 2 * X + 1e-3), out=out, reference=2.0 * X.astype(np.float64))


@pytest.mark.kernelwatch(tolerance=1e-3)
def test_the_calls_setting_wins(kernelwatch):
    out = np.empty_like(X)
    kernelwatch(lambda: np.copyto(out, 2 * X + 1e-3), out=out, reference=2.0 * X.astype(np.float64), tolerance=1e-6)


def test_a_returned_result_and_a_scale(kernelwatch):
    ref = np.array([1.0, -1.0, 1e-9])
    kernelwatch(lambda: ref.astype(np.float32) + np.float32(1e-7), reference=ref, scale=1.0, tolerance=1e-6)


def test_an_in_place_kernel_against_a_reference_taken_before_it(kernelwatch):
    y = X.copy()
    def in_place():
        y[:] = 2 * y
        return y
    kernelwatch(in_place, reference=lambda: 2.0 * y.astype(np.float64))


def test_no_result_for_the_reference(kernelwatch):
    kernelwatch(lambda: None, reference=X)


@pytest.mark.kernelwatch(1e-3)
def test_a_positional_setting(kernelwatch):
    kernelwatch(lambda: None)


def test_fewer_results_than_references(kernelwatch):
    out = np.empty_like(X)
    kernelwatch(lambda: doubled(out), out=out, reference=(2.0 * X.astype(np.float64), X.astype(np.float64)))


def test_more_results_than_references(kernelwatch):
    out, other = np.empty_like(X), np.empty_like(X)
    kernelwatch(lambda: doubled(out) or doubled(other), out=(out, other), reference=2.0 * X.astype(np.float64))


@pytest.mark.kernelwatch(tolerance=1e-3, colour="blue")
def test_an_unknown_setting(kernelwatch):
    kernelwatch(lambda: None)


def test_twice(kernelwatch):
    kernelwatch(lambda: None)
    kernelwatch(lambda: None)


def test_launches_on_the_plugins_stream(kernelwatch, kernelwatch_stream):
    seen = []
    out = np.empty_like(X)
    def launch():
        seen.append(kernelwatch_stream.current)
        doubled(out)
    kernelwatch(launch, out=out, reference=2.0 * X.astype(np.float64))
    assert seen == [True]  # the checked launch (the fake timer runs none)
'''


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The cases above run once on the fake GPU: ({test: "passed", "skipped" or its failure's message}, its
    JSON's benchmarks by test name, pytest's output)."""
    folder = tmp_path_factory.mktemp("launch")
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.plugins.fake_gpu"]\n')
    (folder / "test_cases.py").write_text(CASES)
    result = run(folder, f"--benchmark-json={folder / 'run.json'}", f"--junitxml={folder / 'junit.xml'}")
    benchmarks = {b["name"]: b for b in json.loads((folder / "run.json").read_text())["benchmarks"]}
    return outcomes(folder / "junit.xml"), benchmarks, output(result)


def outcomes(junit) -> dict[str, str]:
    found = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        found[case.get("name")] = "skipped" if case.find("skipped") is not None else (
            failure.get("message").removeprefix("Failed: ") if failure is not None else "passed")
    return found


def test_a_right_result_passes_and_is_timed_with_its_work_and_error_figures(ran):
    results, benchmarks, _ = ran
    assert results["test_right"] == "passed"
    extra = benchmarks["test_right"]["extra_info"]
    assert extra["bytes"] == 32 and extra["kernel"] == "right" and extra["shape"] == "8"
    assert extra["max_error"] == 0.0 and extra["avg_error"] == 0.0
    assert benchmarks["test_right"]["stats"]["rounds"] == 20  # the fake timer's samples


def test_a_wrong_result_fails_in_one_line_with_both_figures_and_the_tolerance_and_is_not_timed(ran):
    results, benchmarks, text = ran
    assert results["test_wrong"] == (
        "kernelwatch: test_wrong misses its float64 reference: max error 0.0005, average error 0.00017, tolerance "
        "1e-05 (relative error |out - ref| / |ref|, float32 output; worst at (0,))")
    assert "test_wrong" not in benchmarks and "Traceback" not in text
    assert "Benchmark fixture was not used" not in text


def test_an_element_never_written_fails_for_the_nan_poured_in_before_the_launch(ran):
    message = ran[0]["test_one_element_never_written"]
    assert "max error inf, average error inf" in message and "worst at (7,)" in message


def test_the_markers_settings_apply_and_the_calls_keywords_override_them(ran):
    results, benchmarks, _ = ran
    assert results["test_the_markers_tolerance"] == "passed"
    assert benchmarks["test_the_markers_tolerance"]["extra_info"]["max_error"] == pytest.approx(5e-4, rel=1e-3)
    assert "tolerance 1e-06 " in results["test_the_calls_setting_wins"]


def test_a_returned_result_a_scale_and_an_in_place_kernel_are_checked(ran):
    results = ran[0]
    assert results["test_a_returned_result_and_a_scale"] == "passed"
    assert results["test_an_in_place_kernel_against_a_reference_taken_before_it"] == "passed"


def test_misuse_is_said_in_one_line(ran):
    results = ran[0]
    assert results["test_no_result_for_the_reference"].startswith("kernelwatch: a reference needs a result: pass out=")
    assert results["test_an_unknown_setting"] == (
        "@pytest.mark.kernelwatch: takes only the keywords tolerance, scale, flops, bytes, kernel, shape, flush, kind, seed "
        "(given: colour)")
    assert "one timed callable per test" in results["test_twice"]
    assert results["test_a_positional_setting"].endswith("(given: 0.001)")
    assert results["test_fewer_results_than_references"] == "kernelwatch: 1 result(s) against 2 reference(s)"
    assert results["test_more_results_than_references"] == "kernelwatch: 2 result(s) against 1 reference(s)"


def test_each_launch_runs_with_the_plugins_stream_current(ran):
    assert ran[0]["test_launches_on_the_plugins_stream"] == "passed"

def test_without_a_gpu_a_test_of_the_fixture_is_skipped_with_the_reason_and_selected_by_perf(tmp_path):
    from tests.support.pytest_runs import no_gpu_conftest

    (tmp_path / "conftest.py").write_text(no_gpu_conftest("no GPU in this test"))
    (tmp_path / "test_cases.py").write_text(CASES)
    result = run(tmp_path, "-rs", "-m", "perf and gpu")
    assert result.returncode == 0, output(result)
    every = CASES.count("\ndef test_")  # each case uses the fixture
    assert f"{every} skipped" in output(result) and "needs a CUDA GPU: no GPU in this test" in output(result)


class Stream:
    ptr = 1234

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def test_the_stream_is_made_current_for_pytorch_only_where_it_is_imported(monkeypatch):
    from kernelwatch.plugin.launch import current_stream

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with current_stream(Stream()):
        pass
    assert "torch" not in sys.modules  # never imported by the plugin
    made = []

    class ExternalStream:
        def __init__(self, ptr):
            made.append(ptr)

    entered = []

    class TorchStream:
        def __init__(self, stream):
            self.stream = stream

        def __enter__(self):
            entered.append(self.stream)

        def __exit__(self, *exc):
            entered.remove(self.stream)

    cuda = types.SimpleNamespace(is_available=lambda: True, ExternalStream=ExternalStream, stream=TorchStream)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    with current_stream(Stream()):
        assert made == [1234] and len(entered) == 1
    assert entered == []
