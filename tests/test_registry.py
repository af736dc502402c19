"""The registry is the one place a kernel is stated: an added elementwise entry reaches the
correctness suite and the launcher, tile sizes reach the .cu files only as -D options."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import kernels.compile as compile_module
from kernels.compile import CUDA_DIR, compile_report
from kernels.elementwise import plan_launch
from kernels.registry import (
    ELEMENTWISE_KERNELS,
    ELEMENTWISE_SOURCE,
    MATMUL_KERNELS,
    NEGATIVE_CONTROL,
    TUTORIALS,
    ElementwiseKernel,
    MatmulKernel,
    elementwise_kernels,
)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
CORRECTNESS_SUITE = ROOT / "suites" / "test_elementwise_correctness.py"

# What a developer adds: one CUDA function in elementwise.cu ...
ADDED_FUNCTION = """
extern "C" __global__ void vector_add_ldg(const float *__restrict__ a, const float *__restrict__ b,
                                          float *__restrict__ c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = __ldg(a + i) + __ldg(b + i);
}
"""
# ... and one registry entry.
ADDED_ENTRY = {"name": "vector_add_ldg", "summary": "one element per thread through the read-only cache",
               "function": "vector_add_ldg", "ndim": 1, "threads": (128, 1)}


def test_a_registered_elementwise_kernel_is_collected_by_the_correctness_suite(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(
        "from kernels.registry import ELEMENTWISE_KERNELS, ElementwiseKernel\n\n"
        f"ELEMENTWISE_KERNELS['vector_add_ldg'] = ElementwiseKernel(**{ADDED_ENTRY!r})\n"
    )
    pytester.makepyfile(test_elementwise_correctness=CORRECTNESS_SUITE.read_text())
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    ids = [line for line in result.outlines if "::" in line]

    def sizes(test, kernel):
        prefix = f"::{test}[{kernel}-"
        return {i.split(prefix)[1] for i in ids if prefix in i}

    assert sizes("test_vector_add_is_exact", "vector_add_ldg"), ids
    assert sizes("test_vector_add_is_exact", "vector_add_ldg") == sizes("test_vector_add_is_exact", "vector_add")
    assert not sizes("test_matrix_add_is_exact", "vector_add_ldg")


def test_an_added_elementwise_function_compiles_and_gets_a_launch(tmp_path, monkeypatch):
    for name in (ELEMENTWISE_SOURCE, "common.cuh"):
        shutil.copy(CUDA_DIR / name, tmp_path / name)
    with open(tmp_path / ELEMENTWISE_SOURCE, "a") as source:
        source.write(ADDED_FUNCTION)
    monkeypatch.setattr(compile_module, "CUDA_DIR", tmp_path)
    report = compile_report(ELEMENTWISE_SOURCE, "sm_90")
    assert "vector_add_ldg" in report.registers, report.log
    assert report.spill_stores == 0
    launch = plan_launch(ElementwiseKernel(**ADDED_ENTRY), (1000,))
    assert (launch.function, launch.grid, launch.block, launch.sizes) == ("vector_add_ldg", (8, 1, 1), (128, 1, 1),
                                                                          (1000,))


def test_every_registered_elementwise_function_is_in_elementwise_cu():
    functions = {f for k in ELEMENTWISE_KERNELS.values() for f in (k.function, k.fallback) if f is not None}
    assert functions == set(compile_report(ELEMENTWISE_SOURCE, "sm_90").registers)


def test_elementwise_kernels_split_by_the_arrays_they_take():
    assert elementwise_kernels(ndim=2) == ["matrix_add_2d", "matrix_add_2d_vec4", "cupy_add"]
    assert elementwise_kernels(ndim=1) == ["vector_add", "vector_add_vec4", "cupy_add"]
    with pytest.raises(ValueError, match="ndim must be 1"):
        elementwise_kernels(ndim=3)


def test_float4_matrix_add_falls_back_to_the_scalar_kernel_when_rows_are_not_divisible_by_4():
    kernel = ELEMENTWISE_KERNELS["matrix_add_2d_vec4"]
    aligned = plan_launch(kernel, (100, 1024))
    assert (aligned.function, aligned.grid, aligned.block, aligned.sizes) == (
        "matrix_add_2d_vec4", (16, 7, 1), (16, 16, 1), (100, 256))
    odd = plan_launch(kernel, (100, 1025))
    assert (odd.function, odd.grid, odd.sizes) == ("matrix_add_2d", (65, 7, 1), (100, 1025))


@pytest.mark.parametrize(("name", "shape", "scalar"), [("vector_add_vec4", (1000,), "vector_add"),
                                                      ("matrix_add_2d_vec4", (100, 1024), "matrix_add_2d")])
def test_float4_kernels_take_the_scalar_kernel_for_operands_that_are_not_16_byte_aligned(name, shape, scalar):
    kernel = ELEMENTWISE_KERNELS[name]
    assert plan_launch(kernel, shape).function == name
    unaligned = plan_launch(kernel, shape, aligned=False)
    assert unaligned.function == scalar and unaligned.sizes == shape  # one element per thread


def test_a_float4_matrix_kernel_without_fallback_refuses_odd_rows():
    kernel = ElementwiseKernel("no_fallback", "test entry", "matrix_add_2d_vec4", ndim=2, per_thread=4,
                               threads=(16, 16))
    with pytest.raises(ValueError, match="divisible by 4"):
        plan_launch(kernel, (8, 6))


LAUNCH_SHAPES = [(1,), (3,), (1023,), (1 << 20,), (1, 1), (17, 33), (4097, 3), (3, 4100)]
LAUNCH_CASES = [(k.name, shape) for k in ELEMENTWISE_KERNELS.values() for shape in LAUNCH_SHAPES
                if k.function is not None and k.ndim in (len(shape), None)]


@pytest.mark.parametrize(("name", "shape"), LAUNCH_CASES, ids=[f"{n}-{'x'.join(map(str, s))}" for n, s in LAUNCH_CASES])
def test_the_launch_grid_covers_every_element(name, shape):
    kernel = ELEMENTWISE_KERNELS[name]
    launch = plan_launch(kernel, shape)
    threads = [g * b for g, b in zip(launch.grid, launch.block, strict=True)]
    if kernel.ndim == 2:
        rows, cols = shape
        per_thread = cols // launch.sizes[1]
        assert threads[1] >= rows and threads[0] * per_thread >= cols
        assert threads[0] - launch.block[0] < cols // per_thread  # no block entirely idle
    else:
        assert threads[0] * kernel.per_thread >= shape[0] and launch.sizes == shape


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"ndim": 3}, "ndim must be 1, 2 or None"),
        ({"per_thread": 2}, "per_thread must be 1 or 4"),
        ({"ndim": 1, "per_thread": 1, "fallback": "vector_add"}, "only a kernel of several elements per thread"),
        ({"ndim": 1, "threads": (16, 16)}, "a 1D grid needs a block of"),
        ({"tutorials": ("002",)}, "unknown tutorial"),
    ],
)
def test_an_inconsistent_elementwise_entry_is_refused(fields, problem):
    with pytest.raises(ValueError, match=problem):
        ElementwiseKernel("bad", "test entry", "vector_add", **fields)


def test_a_matmul_entry_with_an_unknown_tutorial_is_refused():
    with pytest.raises(ValueError, match="unknown tutorial"):
        MatmulKernel("bad", "test entry", tutorials=("000",))


def test_every_tutorial_is_cited_by_some_kernel():
    cited = {t for k in [*MATMUL_KERNELS.values(), *ELEMENTWISE_KERNELS.values()] for t in k.tutorials}
    assert cited == set(TUTORIALS)


@pytest.mark.parametrize("name", ["blocktile_1d", "blocktile_2d", "vectorized", "tiled16", "tiled32"])
def test_a_tiled_kernel_launches_with_the_tile_its_defines_state(name):
    kernel = MATMUL_KERNELS[name]
    defines = dict(kernel.defines)
    if "TILE" in defines:
        assert kernel.tile == kernel.threads == (defines["TILE"], defines["TILE"])
    else:
        assert kernel.tile == (defines["BM"], defines["BN"])
        per_thread = defines["TM"] * defines.get("TN", 1)
        assert kernel.threads == (defines["BM"] * defines["BN"] // per_thread, 1)


@pytest.mark.parametrize(
    "source", ["matmul_04_tiled.cu", "matmul_05_blocktile_1d.cu", "matmul_06_blocktile_2d.cu",
               "matmul_07_vectorized.cu", "matmul_08_warptile.cu"],
)
def test_a_tiled_source_refuses_to_build_without_the_registry_sizes(source):
    with pytest.raises(RuntimeError, match="must be given by kernels/registry.py"):
        compile_report(source, "sm_90")


def test_no_cuda_source_states_a_tile_size_of_its_own():
    sizes = {"TILE", "BM", "BN", "BK", "TM", "TN", "RM", "RN", "WARPS_M", "WARPS_N", "MIN_BLOCKS"}
    stated = [(path.name, line) for path in compile_module.cuda_sources() for line in path.read_text().splitlines()
              if re.match(r"\s*#\s*define\s+(\w+)\s+\d", line) and line.split()[1] in sizes]
    assert not stated, f"these belong in kernels/registry.py: {stated}"
    assert any(len(k.defines) >= 4 for k in MATMUL_KERNELS.values())  # the registry does state them


def test_the_negative_control_is_not_a_suite_kernel():
    assert NEGATIVE_CONTROL.name not in MATMUL_KERNELS
