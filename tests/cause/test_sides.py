"""src/kernelwatch/cause/sides.py on the CPU: which card a case gets from its two sides, and the Side it is given."""

from __future__ import annotations

import dataclasses

import pytest

import kernels
from kernels.compile import KernelBuild
from kernelwatch.cause.sides import Side, case_card

TILED = KernelBuild("matmul_04_tiled.cu", "matmul_tiled", (("TILE", 32),), "grid=(32, 32, 1) block=(32, 32)")


@pytest.mark.parametrize("base, head", [(None, TILED), (TILED, None)], ids=["base-library", "head-library"])
def test_a_case_that_is_a_library_call_on_either_side_gets_the_library_card(base, head):
    lines = case_card("c", Side(kernels, base), Side(kernels, head), "sm_90", launched=(("gemm_a",), ("gemm_b",)))
    assert lines[4] == ("1. **library kernel**: the library launched `gemm_a` on the base and `gemm_b` on the head: "
                        "it chose other kernels")


def test_a_case_cards_sides_and_arch_can_be_named():
    lines = case_card(case="c", base=Side(kernels, None), head=Side(kernels, None), arch="sm_90",
                      launched=(("gemm",), ("gemm",)))
    assert lines[2].endswith("It launched `gemm` on both sides.")


def test_a_side_is_a_value_it_cannot_be_changed_and_equal_sides_hash_alike():
    side = Side(kernels, TILED, "64x64x64")
    with pytest.raises(dataclasses.FrozenInstanceError):
        side.shape = "128x128x128"
    assert {side, Side(kernels, TILED, "64x64x64")} == {side}
