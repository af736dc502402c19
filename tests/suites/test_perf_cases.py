"""suites/perf_cases.py: which matrix-multiply cases each profile times."""

from __future__ import annotations

from kernels import MATMUL_KERNELS
from suites.perf_cases import MATMUL_SIZES, TUTORIAL_KERNELS_LARGEST, matmul_cases

TUTORIAL = {name for name, kernel in MATMUL_KERNELS.items() if kernel.tutorials}


def test_the_tutorials_kernels_are_the_seed_kernels():
    assert TUTORIAL == {"naive", "naive_kahan", "row_shared", "row_shared_pitched", "tiled16", "tiled32"}


def test_the_full_profile_times_every_kernel_at_every_size():
    cases = matmul_cases("full", MATMUL_KERNELS)
    assert sorted(cases) == sorted((n, name) for n in MATMUL_SIZES["full"] for name in MATMUL_KERNELS)


def test_the_nightly_times_the_tutorials_kernels_up_to_4096_and_the_others_at_8192_too():
    cases = set(matmul_cases("nightly", MATMUL_KERNELS))
    assert {(8192, name) for name in TUTORIAL}.isdisjoint(cases)
    assert {(4096, name) for name in TUTORIAL} <= cases
    assert {(8192, name) for name in set(MATMUL_KERNELS) - TUTORIAL} <= cases
    assert len(cases) == 4 * len(MATMUL_KERNELS) - len(TUTORIAL)


def test_each_profile_times_a_subset_of_the_next_ones_cases():
    quick, nightly, full = (set(matmul_cases(p, MATMUL_KERNELS)) for p in ("quick", "nightly", "full"))
    assert quick <= nightly <= full
    assert set(TUTORIAL_KERNELS_LARGEST) == set(MATMUL_SIZES)
