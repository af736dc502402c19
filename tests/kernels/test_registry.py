"""The registry is the one place a kernel is stated: an added elementwise entry reaches the
correctness suite and the launcher, tile sizes reach the .cu files only as -D options."""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
from pathlib import Path

import pytest

import kernels.compile as compile_module
from kernels.compile import CUDA_DIR, compile_report, cuda_sources, kernel_functions
from kernels.elementwise import plan_launch
from kernels.registry import (
    ELEMENTWISE_KERNELS,
    ELEMENTWISE_SOURCE,
    MATMUL_KERNELS,
    NEGATIVE_CONTROL,
    TUTORIALS,
    UNIT_ROUNDOFF,
    ElementwiseKernel,
    MatmulKernel,
    blocktile_2d,
    elementwise_kernels,
    tolerance,
    warptile,
)
from maintainers.checks.tune_warptile import CANDIDATES

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.mark.slow  # a pytester run collecting the suite: `tox -e unit` leaves it out, CI's slow pass runs it
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


WARP = 32  # lanes of a warp: a block is scheduled in whole warps


MAX_BLOCK_THREADS = 1024  # CUDA's limit of threads per block


SOURCES = {path.name: path.read_text() for path in cuda_sources()}


OWN_MATMUL = [k for k in [*MATMUL_KERNELS.values(), NEGATIVE_CONTROL] if k.source is not None]


OWN_ELEMENTWISE = [k for k in ELEMENTWISE_KERNELS.values() if k.function is not None]


# one thread per element of C: the column from x, the row from y, each of them block * block size + thread
ONE_PER_THREAD = re.compile(r"col = blockIdx\.x \* blockDim\.x \+ threadIdx\.x;.*row = blockIdx\.y \* blockDim\.y "
                            r"\+ threadIdx\.y;", re.S)


def _kernel_source(source: str, function: str) -> str:
    """The text of one `__global__` function of a source, up to the next one ("" where the source has no such
    function: test_every_entrys_function_is_a_kernel_of_its_source says so, by the entry's name)."""
    text = SOURCES[source]
    found = re.search(rf"\b{function}\(", text)
    if found is None:
        return ""
    following = text.find("__global__", found.start())
    return text[found.start():following if following >= 0 else None]


def missing_functions(kernel) -> list[str]:
    """What an entry names that its .cu file does not define: one sentence per function, naming the entry too."""
    source = getattr(kernel, "source", ELEMENTWISE_SOURCE)
    functions = [f for f in (kernel.function, getattr(kernel, "fallback", None)) if f is not None]
    defined = kernel_functions(source)
    return [f"kernel {kernel.name!r}: its function {function!r} is no __global__ function of kernels/cuda/{source} "
            f"(it has {', '.join(sorted(defined)) or 'none'}); fix the entry in kernels/registry.py or the .cu file"
            for function in functions if function not in defined]


def _ids(kernels):
    return [k.name for k in kernels]


@pytest.mark.parametrize("kernel", [*OWN_MATMUL, *OWN_ELEMENTWISE], ids=_ids([*OWN_MATMUL, *OWN_ELEMENTWISE]))
def test_every_entrys_function_is_a_kernel_of_its_source(kernel):
    assert missing_functions(kernel) == []


@pytest.mark.parametrize("entry", [
    MatmulKernel("naive_typo", "a misspelt function", "matmul_01_naive.cu", "matmul_naiv"),
    ElementwiseKernel("add_typo", "a misspelt fallback", "vector_add_vec4", ndim=1, per_thread=4, threads=(256, 1),
                      fallback="vector_ad"),
], ids=["function", "fallback"])
def test_an_entry_whose_function_its_source_lacks_is_named_with_the_function(entry):
    missing = entry.fallback if isinstance(entry, ElementwiseKernel) else entry.function
    [sentence] = missing_functions(entry)
    assert sentence.startswith(f"kernel {entry.name!r}: its function {missing!r} is no __global__ function of "
                               f"kernels/cuda/")
    assert _kernel_source(entry.source if isinstance(entry, MatmulKernel) else ELEMENTWISE_SOURCE, missing) == ""


def test_the_kernels_of_a_source_are_read_from_its_text():
    assert kernel_functions(ELEMENTWISE_SOURCE) == {"matrix_add_2d", "matrix_add_2d_vec4", "vector_add",
                                                    "vector_add_vec4"}
    assert kernel_functions("matmul_08_warptile.cu") == {"matmul_warptile"}  # after __launch_bounds__(...)


ONE_PER_THREAD_KERNELS = [k for k in OWN_MATMUL if ONE_PER_THREAD.search(_kernel_source(k.source, k.function))]


STATIC_SHARED_ONLY = [k for k in OWN_MATMUL if "extern __shared__" not in SOURCES[k.source]]


SUMMARY_TILE = re.compile(r"(\d+)x(\d+) (?:shared-memory )?tiles")


SUMMARY_OUTPUTS = re.compile(r"(\d+)(?:x(\d+))? outputs per thread")


@pytest.mark.parametrize(("rm", "rn", "warps_m", "warps_n", "bk"), [(2, 4, 4, 2, 16), (4, 2, 2, 4, 8), (1, 1, 1, 1, 8)])
def test_warptile_shared_memory_is_two_stages_of_a_and_b_tiles_with_a_padded_a(rm, rn, warps_m, warps_n, bk):
    kernel = warptile("t", "t", rm, rn, warps_m, warps_n, bk)
    bm, bn = warps_m * 16 * rm, warps_n * 32 * rn
    assert kernel.tile == (bm, bn)
    # two stages x bk rows x (A's bm columns + 4 of padding + B's bn columns) x 4-byte floats
    assert kernel.shared_bytes == 2 * bk * (bm + 4 + bn) * 4


def test_a_warptile_block_has_one_warp_of_32_lanes_per_warp_tile():
    assert warptile("w", "", rm=2, rn=2, warps_m=4, warps_n=2).threads == (256, 1)
    assert warptile("w", "", rm=2, rn=2, warps_m=2, warps_n=4).threads == (256, 1)
    assert warptile("w", "", rm=2, rn=2, warps_m=3, warps_n=2).threads == (192, 1)


@pytest.mark.parametrize("k", [1, 100, 4096])
def test_plain_tolerance_is_four_root_k_plus_two_and_root_k_plus_one_units(k):
    plain = tolerance(MATMUL_KERNELS["naive"], k)
    assert plain.max_error == pytest.approx((4 * math.sqrt(k) + 2) * UNIT_ROUNDOFF)
    assert plain.avg_error == pytest.approx((math.sqrt(k) + 1) * UNIT_ROUNDOFF)


@pytest.mark.parametrize("k", [1, 4096])
def test_kahan_tolerance_is_four_and_one_units_whatever_k(k):
    kahan = tolerance(MATMUL_KERNELS["naive_kahan"], k)
    assert (kahan.max_error, kahan.avg_error) == (4 * UNIT_ROUNDOFF, UNIT_ROUNDOFF)
    assert tolerance(MATMUL_KERNELS["cublas"], 4096) == tolerance(MATMUL_KERNELS["naive"], 4096)


@pytest.mark.parametrize("kernel", [*OWN_MATMUL, *OWN_ELEMENTWISE], ids=_ids([*OWN_MATMUL, *OWN_ELEMENTWISE]))
def test_every_block_is_whole_warps_and_within_cudas_limit(kernel):
    """A block of a partial warp leaves lanes idle, and no block may exceed 1024 threads."""
    count = math.prod(kernel.threads)
    assert count % WARP == 0 and 0 < count <= MAX_BLOCK_THREADS


@pytest.mark.parametrize("kernel", [*OWN_MATMUL, *OWN_ELEMENTWISE], ids=_ids([*OWN_MATMUL, *OWN_ELEMENTWISE]))
def test_block_dimensions_are_integers(kernel):
    """A launch takes whole numbers of threads (blocktile_2d's `//` is no `/`: 256.0 == 256 but is no block size)."""
    assert all(type(n) is int for n in kernel.threads)


@pytest.mark.parametrize("kernel", ONE_PER_THREAD_KERNELS, ids=_ids(ONE_PER_THREAD_KERNELS))
def test_a_kernel_of_one_thread_per_element_has_a_tile_of_its_block(kernel):
    """Where the CUDA function computes one element per thread (column from x, row from y), a tile of
    rows x columns is the block's y x x: the launch grid then covers C exactly once."""
    assert kernel.tile == (kernel.threads[1], kernel.threads[0])


def test_some_kernels_compute_one_element_per_thread():
    """The pattern above is found in the naive kernels and the negative control (the test is not empty)."""
    assert {"naive", "naive_kahan", NEGATIVE_CONTROL.name} <= set(_ids(ONE_PER_THREAD_KERNELS))


def test_the_negative_control_launches_as_the_naive_kernel_it_is_a_copy_of():
    """The negative control is the naive kernel with rounded inputs: same block, tile, grid and summation."""
    naive = MATMUL_KERNELS["naive"]
    fields = ("threads", "tile", "grid", "summation", "shared_bytes", "defines", "vectorized", "pitched")
    assert [getattr(NEGATIVE_CONTROL, f) for f in fields] == [getattr(naive, f) for f in fields]


def test_the_pitched_row_kernel_is_row_shared_on_pitched_operands_and_nothing_else():
    """row_shared_pitched differs from row_shared only by its name, summary and `pitched`."""
    plain, pitched = MATMUL_KERNELS["row_shared"], MATMUL_KERNELS["row_shared_pitched"]
    assert pitched.pitched and not plain.pitched
    assert dataclasses.replace(plain, name=pitched.name, summary=pitched.summary, pitched=True) == pitched


def test_vectorized_is_blocktile_2d_with_float4_loads():
    """The vectorized entry is "blocktile_2d with float4 loads": the same tile, block and sizes."""
    plain, vector = MATMUL_KERNELS["blocktile_2d"], MATMUL_KERNELS["vectorized"]
    assert (vector.tile, vector.threads, vector.defines) == (plain.tile, plain.threads, plain.defines)
    assert vector.vectorized and not plain.vectorized


@pytest.mark.parametrize("kernel", STATIC_SHARED_ONLY, ids=_ids(STATIC_SHARED_ONLY))
def test_only_a_source_with_dynamic_shared_memory_asks_for_it(kernel):
    """A kernel whose source declares no `extern __shared__` array launches with 0 bytes of it (the default)."""
    assert kernel.shared_bytes == 0


def test_an_entry_without_sizes_is_one_thread_for_one_element_and_no_shared_memory():
    """The defaults: a block of one thread computing a tile of one element, no dynamic shared memory."""
    kernel = MatmulKernel("bare", "defaults only")
    assert kernel.tile == (kernel.threads[1], kernel.threads[0]) and math.prod(kernel.threads) == 1
    assert kernel.shared_bytes == 0 and not kernel.vectorized and not kernel.pitched


@pytest.mark.parametrize("kernel", [k for k in OWN_MATMUL if SUMMARY_TILE.search(k.summary)],
                         ids=_ids([k for k in OWN_MATMUL if SUMMARY_TILE.search(k.summary)]))
def test_a_kernel_has_the_tile_and_outputs_per_thread_its_summary_states(kernel):
    """"16x16 shared-memory tiles", "128x128 tiles, 8x8 outputs per thread": what the report shows is what runs."""
    rows, cols = map(int, SUMMARY_TILE.search(kernel.summary).groups())
    assert kernel.tile == (rows, cols)
    outputs = SUMMARY_OUTPUTS.search(kernel.summary)
    if outputs:
        per_thread = math.prod(int(n) for n in outputs.groups() if n)
        assert rows * cols == per_thread * math.prod(kernel.threads)
        defines = dict(kernel.defines)
        sub_tile = ((defines["TM"], defines.get("TN")) if "TM" in defines
                    else (4 * defines["RM"], 4 * defines["RN"]))  # warptile: rm x rn pieces of 4x4
        assert tuple(int(n) for n in outputs.groups() if n) == tuple(n for n in sub_tile if n)
    deep = re.search(r"(\d+)-deep k", kernel.summary)
    if deep:
        assert dict(kernel.defines)["BK"] == int(deep.group(1))


def test_the_summaries_state_the_tiles_of_the_tiled_and_block_tiled_kernels():
    """The check above is not empty: it covers both tiled kernels and the block-tiled ones."""
    stated = {k.name for k in OWN_MATMUL if SUMMARY_TILE.search(k.summary)}
    assert {"tiled16", "tiled32", "blocktile_1d", "blocktile_2d", "warptile_128x256"} <= stated


@pytest.mark.parametrize("name", ["blocktile_2d", "vectorized"])
def test_block_tiled_loads_share_the_tiles_evenly_among_the_threads(name):
    """matmul_06: "each thread loads (BM * BK) / THREADS floats of A's tile, (BK * BN) / THREADS of B's"."""
    kernel = MATMUL_KERNELS[name]
    d, threads = dict(kernel.defines), math.prod(kernel.threads)
    assert d["BM"] * d["BK"] % threads == 0 and d["BK"] * d["BN"] % threads == 0


@pytest.mark.parametrize("kernel", [k for k in OWN_MATMUL if k.source == "matmul_08_warptile.cu"],
                         ids=_ids([k for k in OWN_MATMUL if k.source == "matmul_08_warptile.cu"]))
def test_a_warptile_entry_is_one_of_the_configurations_tune_warptile_timed(kernel):
    """The warptile entries were chosen from maintainers/checks/tune_warptile.py's candidates: one of them, with its tile."""
    d = dict(kernel.defines)
    mine = (d["RM"], d["RN"], d["WARPS_M"], d["WARPS_N"], d["BK"], d["MIN_BLOCKS"])
    (name,) = [c[0] for c in CANDIDATES if tuple(c[1:]) == mine]
    assert name.startswith("{}x{} ".format(*kernel.tile))


def test_warptiles_default_asks_for_at_least_one_resident_block():
    """`__launch_bounds__(THREADS, MIN_BLOCKS)`: the default is one block per SM, not none."""
    assert dict(warptile("w", "default", rm=2, rn=2).defines)["MIN_BLOCKS"] == 1
    assert all(dict(k.defines).get("MIN_BLOCKS", 1) >= 1 for k in OWN_MATMUL)


def test_blocktile_2d_is_scalar_unless_asked():
    """blocktile_2d() builds a scalar kernel by default (the vectorized entry asks for float4)."""
    kernel = blocktile_2d("b", "default", "matmul_06_blocktile_2d.cu", "matmul_blocktile_2d", 64, 64, 8, 8, 8)
    assert not kernel.vectorized


@pytest.mark.parametrize("value", [NEGATIVE_CONTROL, ELEMENTWISE_KERNELS["vector_add"],
                                   tolerance(MATMUL_KERNELS["naive"], 64)], ids=["matmul", "elementwise", "tolerance"])
def test_registry_entries_and_tolerances_are_frozen(value):
    """An entry (or a tolerance) cannot be changed in place by a test or a launcher."""
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, getattr(value, field))


@pytest.mark.parametrize("kernel", OWN_MATMUL, ids=_ids(OWN_MATMUL))
def test_an_entry_is_vectorized_exactly_when_its_source_has_an_aligned_build(kernel):
    """`vectorized`: the launcher passes ALIGNED=0/1, which common.cuh's load4 and store4 read: an entry is
    vectorized exactly when its source reads ALIGNED or goes through load4/store4."""
    text = SOURCES[kernel.source]
    assert kernel.vectorized == bool(re.search(r"\bALIGNED\b|\b(?:load4|store4)\(", text))


def test_a_one_dimensional_grid_refuses_a_block_of_no_rows():
    """A 1D grid needs a block of (x, 1): (x, 0) is no block either."""
    with pytest.raises(ValueError, match="1D grid"):
        ElementwiseKernel("bad", "test entry", "vector_add", ndim=1, threads=(256, 0))


def test_a_matmul_build_is_described_without_a_gpu_from_its_kernel_and_shape():
    from kernels.matmul import build_for

    warptile = build_for("warptile_128x256", 1000, 1000, 1000)  # 128 x 256 tiles; K and N divisible by 4
    assert warptile.launch == "grid=(4, 8, 1) block=(256, 1) shared=49664 pitched=False"
    assert ("ALIGNED", 1) in warptile.defines and ("BK", 16) in warptile.defines
    assert ("ALIGNED", 0) in build_for("vectorized", 1001, 1002, 1003).defines  # float4 only where K, N % 4 == 0
    row = build_for("row_shared", 7, 5, 9)  # a row of A per block, rounded up to 4 floats
    assert row.launch == "grid=(7, 1, 1) block=(256, 1) shared=48 pitched=False"
    assert build_for("cublas", 8, 8, 8) is None
    with pytest.raises(ValueError, match="unknown matmul kernel 'nope'"):
        build_for("nope", 8, 8, 8)
