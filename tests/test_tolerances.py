import math

import pytest

from kernels import MATMUL_KERNELS, NEGATIVE_CONTROL, tolerance
from kernels.registry import KAHAN, UNIT_ROUNDOFF


def test_plain_tolerance_grows_with_the_square_root_of_k():
    t1000 = tolerance(MATMUL_KERNELS["naive"], 1000)
    t4000 = tolerance(MATMUL_KERNELS["naive"], 4000)
    assert t4000.max_error / t1000.max_error == pytest.approx(2, rel=0.02)
    # seed 000's own plain figures at k=1000 must pass: max 2.0e-6, avg 3.4e-7
    assert 2.0e-6 <= t1000.max_error and 3.4e-7 <= t1000.avg_error


def test_kahan_tolerance_does_not_depend_on_k():
    kahan = MATMUL_KERNELS["row_shared"]
    assert kahan.summation == KAHAN
    assert tolerance(kahan, 10) == tolerance(kahan, 100_000)
    # seed 000's Kahan figures: max 1.19e-7, avg 4.2e-8
    assert 1.19e-7 <= tolerance(kahan, 1000).max_error <= 5 * UNIT_ROUNDOFF


def test_float16_input_rounding_lands_far_outside_the_plain_tolerance():
    # the negative control's expected average error at k=1000 on uniform inputs:
    # input rounding std ~2**-12 per factor, relative error of the sum ~ 2**-11.5 * 4/(3 sqrt k)
    expected = 2**-11.5 * 4 / (3 * math.sqrt(1000))
    assert expected > 5 * tolerance(NEGATIVE_CONTROL, 1000).avg_error


def test_tolerance_refuses_empty_inner_dimension():
    with pytest.raises(ValueError):
        tolerance(MATMUL_KERNELS["naive"], 0)


def test_every_kernel_says_how_it_sums():
    assert {k.summation for k in MATMUL_KERNELS.values()} <= {"plain", "kahan", "library"}
