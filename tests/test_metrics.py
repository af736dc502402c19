"""kernelwatch.metrics: the error of a result against its float64 reference (maximum and average)."""

import dataclasses
import sys
import types

import numpy as np
import pytest

from kernelwatch import metrics
from kernelwatch.metrics import product_scale, relative_error, same_nonfinite_pattern, scaled_error


def test_relative_error_on_known_data():
    ref = np.array([1.0, 2.0, 4.0])
    got = np.array([1.0, 2.2, 3.0], np.float32)
    e = relative_error(got, ref)
    assert e.max_error == pytest.approx(0.25)
    assert e.avg_error == pytest.approx((0 + 0.1 + 0.25) / 3, rel=1e-6)
    assert e.worst_index == (2,)


def test_relative_error_counts_unwritten_nan_as_infinite():
    e = relative_error(np.array([1.0, np.nan], np.float32), np.array([1.0, 1.0]))
    assert e.max_error == np.inf and e.worst_index == (1,)


def test_relative_error_where_reference_is_zero():
    assert relative_error(np.zeros(2, np.float32), np.zeros(2)).max_error == 0
    assert relative_error(np.array([0.0, 1e-30], np.float32), np.zeros(2)).max_error == np.inf


def test_scaled_error_stays_meaningful_under_cancellation():
    a = np.array([[1.0, 1.0]], np.float32)
    b = np.array([[1.0], [-1.0]], np.float32)  # exact product 0: relative error is useless here
    scale = product_scale(a, b)
    assert scale[0, 0] == 2.0
    e = scaled_error(np.array([[1e-7]], np.float32), np.zeros((1, 1)), scale)
    assert e.max_error == pytest.approx(5e-8, rel=1e-3)
    assert relative_error(np.array([[1e-7]], np.float32), np.zeros((1, 1))).max_error == np.inf


def test_product_scale_can_ignore_nonfinite_entries():
    a = np.array([[np.inf, 2.0]], np.float32)
    b = np.array([[1.0], [3.0]], np.float32)
    assert product_scale(a, b)[0, 0] == np.inf
    assert product_scale(a, b, ignore_nonfinite=True)[0, 0] == 6.0


def test_nonfinite_pattern_must_match_including_sign():
    ref = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert same_nonfinite_pattern(ref.astype(np.float32), ref) is None
    wrong_sign = np.array([np.nan, -np.inf, -np.inf, 1.0], np.float32)
    assert "1 element(s) differ" in same_nonfinite_pattern(wrong_sign, ref)
    nan_for_inf = np.array([np.nan, np.nan, -np.inf, 1.0], np.float32)
    assert "first at (1,)" in same_nonfinite_pattern(nan_for_inf, ref)
    lost_nan = np.array([0.0, np.inf, -np.inf, 1.0], np.float32)
    assert same_nonfinite_pattern(lost_nan, ref) is not None


def test_relative_error_divides_by_the_magnitude_of_a_negative_reference():
    # the worst element has a negative reference: dividing by the signed value would make its error
    # negative and hide it behind the exact element
    ref = np.array([-4.0, 1.0, -2.0])
    got = np.array([-3.0, 1.0, -2.2], np.float32)
    e = relative_error(got, ref)
    assert e.max_error == pytest.approx(0.25)
    assert e.worst_index == (0,)
    assert e.avg_error == pytest.approx((0.25 + 0 + 0.1) / 3, rel=1e-6)


def test_relative_error_is_the_same_for_a_result_and_its_mirror_image():
    ref = np.array([[3.0, -5.0], [0.5, -0.25]])
    got = np.array([[3.3, -4.0], [0.45, -0.3]], np.float32)
    assert relative_error(got, ref) == relative_error(-got, -ref)
    assert relative_error(got, ref).max_error > 0


def test_scaled_error_counts_a_result_below_a_negative_reference_as_error():
    e = scaled_error(np.array([-3.0, 2.0], np.float32), np.array([-2.0, 2.0]), np.array([4.0, 4.0]))
    assert e.max_error == pytest.approx(0.25) and e.worst_index == (0,)


def test_an_empty_result_has_no_error():
    empty = np.zeros((0, 3), np.float32)
    for stats in (relative_error(empty, empty), scaled_error(empty, empty, empty)):
        assert (stats.max_error, stats.avg_error, stats.worst_index) == (0.0, 0.0, ())


def test_product_scale_ignores_nonfinite_entries_of_either_operand():
    """ignore_nonfinite counts NaN and infinite entries of B as 0 too, not only those of A."""
    a = np.array([[1.0, 2.0]], np.float32)
    b = np.array([[np.inf], [3.0]], np.float32)
    assert product_scale(a, b)[0, 0] == np.inf
    assert product_scale(a, b, ignore_nonfinite=True)[0, 0] == 6.0
    assert product_scale(a, np.array([[np.nan], [-3.0]], np.float32), ignore_nonfinite=True)[0, 0] == 6.0


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_nonfinite_result_where_the_reference_is_finite_is_a_mismatch(bad):
    message = same_nonfinite_pattern(np.array([1.0, bad], np.float32), np.array([1.0, 2.0]))
    assert message is not None and "1 element(s) differ" in message and "first at (1,)" in message


def test_a_finite_result_where_the_reference_is_infinite_is_a_mismatch():
    assert same_nonfinite_pattern(np.array([1.0, 3.0], np.float32), np.array([1.0, np.inf])) is not None


def test_plus_infinity_for_minus_infinity_is_a_mismatch_either_way():
    assert same_nonfinite_pattern(np.array([np.inf], np.float32), np.array([-np.inf])) is not None
    assert same_nonfinite_pattern(np.array([-np.inf], np.float32), np.array([np.inf])) is not None


def test_error_stats_are_frozen():
    stats = relative_error(np.ones(2, np.float32), np.ones(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.max_error = 1.0


def _instance_of_a_type_from(module):
    return type("ndarray", (), {"__module__": module})()


def test_arrays_of_cupy_and_its_submodules_are_computed_by_cupy_all_others_by_numpy(monkeypatch):
    """The package is the first part of the array type's module: CuPy names its ndarray's module "cupy", older
    CuPy "cupy.core.core"; a type of any other package (an application's ndarray subclass) gets NumPy."""
    fake_cupy = types.ModuleType("cupy")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    assert metrics._xp(_instance_of_a_type_from("cupy")) is fake_cupy
    assert metrics._xp(_instance_of_a_type_from("cupy.core.core")) is fake_cupy
    assert metrics._xp(np.zeros(1)) is np
    assert metrics._xp(_instance_of_a_type_from("app.arrays")) is np  # "app" sorts before "cupy"
