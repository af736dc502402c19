"""The `kernelwatch` fixture (src/kernelwatch/plugin/launch.py) on the fake GPU: the check before the timing, its
failure line, poisoning, the marker's settings, the plugin's stream made current; the fake GPU's "kernels" here
are NumPy callables (its timer runs nothing: the checked launch is the one that runs)."""

from __future__ import annotations

import json
import sys
import types
from xml.etree import ElementTree

import numpy as np
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


@pytest.mark.kernelwatch(tolerance=(1e-3, 1e-5))
def test_a_pair_missed_on_the_average(kernelwatch):
    out = np.empty_like(X)
    off = np.where(np.arange(8) == 3, 5e-4, 1e-4)  # relative errors: the mean 1.5e-4, the largest at (3,)
    kernelwatch(lambda: np.copyto(out, 2 * X * (1 + off)), out=out, reference=2.0 * X.astype(np.float64))


def test_an_exact_integer_output(kernelwatch):
    out = np.empty(8, dtype=np.int32)
    kernelwatch(lambda: np.copyto(out, np.arange(1, 9, dtype=np.int32)), out=out, reference=np.arange(1.0, 9.0))


def test_an_integer_output_one_off(kernelwatch):
    out = np.empty(8, dtype=np.int32)
    kernelwatch(lambda: np.copyto(out, np.arange(1, 9, dtype=np.int32) + (np.arange(8) == 5)), out=out,
                reference=np.arange(1.0, 9.0))


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


def test_a_pair_of_tolerances_missed_on_the_average_names_both_bounds(ran):
    assert ran[0]["test_a_pair_missed_on_the_average"] == (
        "kernelwatch: test_a_pair_missed_on_the_average misses its float64 reference: max error 0.0005, average "
        "error 0.00015, tolerance 0.001 (average 1e-05) (relative error |out - ref| / |ref|, float32 output; worst at "
        "(3,))")


def test_an_integer_output_must_match_its_reference_exactly(ran):
    results, benchmarks, _ = ran
    assert results["test_an_exact_integer_output"] == "passed"
    extra = benchmarks["test_an_exact_integer_output"]["extra_info"]
    assert extra["max_error"] == 0.0 and extra["avg_error"] == 0.0
    assert results["test_an_integer_output_one_off"] == (
        "kernelwatch: test_an_integer_output_one_off misses its float64 reference: max error 0.167, average error "
        "0.0208, tolerance 0 (relative error |out - ref| / |ref|, int32 output; worst at (5,))")


def checker():
    from kernelwatch.plugin.launch import Launch

    bench = types.SimpleNamespace(timer=types.SimpleNamespace(stream=None))
    return Launch(bench, device=None, node=types.SimpleNamespace(name="test_k"), checks=None)


@pytest.mark.parametrize(("tolerance", "words"), [(1e-4, "tolerance 0.0001 ("), ((1e-3, 1e-4), "tolerance 0.001 (average "
                                                  "0.0001) ("), ((1e-4, 1e-4), "tolerance 0.0001 (")])
def test_a_miss_names_one_bound_where_max_and_average_share_it_and_both_where_they_differ(tolerance, words):
    reference = np.array([1.0, 2.0, 4.0, 8.0])
    result = (reference * [1, 1 + 2e-3, 1, 1]).astype(np.float32)  # max error 2e-3 at (1,), average 5e-4
    miss, bounds, kind = checker()._check_one(result, reference, None, tolerance, " (output 2 of 2)", {})
    assert miss == ("kernelwatch: test_k (output 2 of 2) misses its float64 reference: max error 0.002, average error "
                    f"0.0005, {words}relative error |out - ref| / |ref|, float32 output; worst at (1,))")
    assert bounds == ((tolerance, tolerance) if isinstance(tolerance, float) else tolerance)
    assert kind == "relative"


def test_a_check_within_its_bounds_misses_nothing_and_the_worst_errors_of_several_outputs_are_kept():
    reference, worst = np.array([1.0, 2.0]), {}
    one = checker()._check_one(np.float32([1.0008, 2.0]), reference, None, (1e-3, 5e-4), "", worst)  # 8e-4, 0
    two = checker()._check_one(np.float32([1.0006, 2.0006]), reference, np.array([1.0, 1.0]), 1e-3, "", worst)
    assert one[0] is None and one[1:] == ((1e-3, 5e-4), "relative")
    assert two[0] is None and two[1:] == ((1e-3, 1e-3), "scaled")
    # of the two outputs, the larger max error (the first's) and the larger average (the second's)
    assert worst == {"max_error": pytest.approx(8e-4, rel=1e-4), "avg_error": pytest.approx(6e-4, rel=1e-4)}
    exact = checker()._check_one(np.int32([3, 4]), np.array([3.0, 4.0]), None, None, "", {})
    assert exact == (None, (0.0, 0.0), "relative")  # an integer output: no error allowed, none made


@pytest.mark.parametrize(("tolerance", "dtype", "bounds"), [
    (None, "int32", (0.0, 0.0)), (None, "uint8", (0.0, 0.0)), (None, "bool", (0.0, 0.0)),
    (None, "float64", (1e-12, 1e-12)), (None, "float32", (1e-5, 1e-5)), (None, "float16", (1e-2, 1e-2)),
    (None, "bfloat16", (1e-2, 1e-2)), (1e-3, "float32", (1e-3, 1e-3)), (2, "int32", (2.0, 2.0)),
    ((1e-3, 1e-5), "float32", (1e-3, 1e-5)), ([1e-2, 1e-4], "float16", (1e-2, 1e-4))])
def test_the_tolerance_bounds_the_max_and_the_average_error(tolerance, dtype, bounds):
    from kernelwatch.plugin.launch import tolerance_of

    assert tolerance_of(tolerance, dtype) == bounds
    assert all(type(bound) is float for bound in tolerance_of(tolerance, dtype))


def test_an_output_type_without_a_default_tolerance_needs_one_given():
    from kernelwatch.plugin.launch import tolerance_of

    with pytest.raises(pytest.fail.Exception, match=r"^kernelwatch: no default tolerance for a complex64 output: "
                                                     r"pass tolerance=$") as failed:
        tolerance_of(None, "complex64")
    assert failed.value.pytrace is False
    assert tolerance_of(1e-4, "complex64") == (1e-4, 1e-4)


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


class Tensor:
    """What poison asks of a PyTorch tensor (its class's module is torch's): its kind, and fill_ through detach."""

    __module__ = "torch"

    def __init__(self, dtype: str):
        self.dtype, self.filled = dtype, None

    def is_floating_point(self) -> bool:
        return self.dtype in ("float32", "bfloat16")

    def is_complex(self) -> bool:
        return self.dtype == "complex64"

    def detach(self):
        return self

    def fill_(self, value):
        self.filled = value


@pytest.mark.parametrize(("dtype", "poisoned"), [("float32", True), ("bfloat16", True), ("complex64", True),
                                                  ("int32", False), ("bool", False)])
def test_a_pytorch_output_is_poisoned_where_its_type_holds_nan_and_left_alone_where_not(dtype, poisoned):
    from kernelwatch.plugin.launch import poison

    tensor = Tensor(dtype)
    poison(tensor)
    assert (tensor.filled is not None and np.isnan(tensor.filled)) == poisoned
