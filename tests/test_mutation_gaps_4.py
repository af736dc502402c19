"""Claims that surviving mutants showed no test pinned (issue 22, third cosmic-ray pass).

Modules: kernels/registry.py (every mutant run; the second pass ran 120 of 304) and the history
store, harness/storage/history/. Each test fails when the part of the product it names is changed
by one step (checked against each mutant), and passes on the product as it is. The registry's
launch configurations are checked against what they are derived from: the CUDA sources, the
entries' own summaries, the tuning table in scripts/tune_warptile.py. No value is copied.
"""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from kernels.compile import cuda_sources
from kernels.registry import (
    ELEMENTWISE_KERNELS,
    MATMUL_KERNELS,
    NEGATIVE_CONTROL,
    ElementwiseKernel,
    MatmulKernel,
    blocktile_2d,
    tolerance,
    warptile,
)
from scripts.tune_warptile import CANDIDATES

WARP = 32  # lanes of a warp: a block is scheduled in whole warps
MAX_BLOCK_THREADS = 1024  # CUDA's limit of threads per block
SOURCES = {path.name: path.read_text() for path in cuda_sources()}
OWN_MATMUL = [k for k in [*MATMUL_KERNELS.values(), NEGATIVE_CONTROL] if k.source is not None]
OWN_ELEMENTWISE = [k for k in ELEMENTWISE_KERNELS.values() if k.function is not None]
# one thread per element of C: the column from x, the row from y, each of them block * block size + thread
ONE_PER_THREAD = re.compile(r"col = blockIdx\.x \* blockDim\.x \+ threadIdx\.x;.*row = blockIdx\.y \* blockDim\.y "
                            r"\+ threadIdx\.y;", re.S)


def _kernel_source(source: str, function: str) -> str:
    """The text of one `__global__` function of a source, up to the next one."""
    text = SOURCES[source]
    start = re.search(rf"\b{function}\(", text).start()
    following = text.find("__global__", start)
    return text[start:following if following >= 0 else None]


def _ids(kernels):
    return [k.name for k in kernels]


# ---- kernels/registry.py -----------------------------------------------------------------------

@pytest.mark.parametrize("kernel", [*OWN_MATMUL, *OWN_ELEMENTWISE], ids=_ids([*OWN_MATMUL, *OWN_ELEMENTWISE]))
def test_every_block_is_whole_warps_and_within_cudas_limit(kernel):
    """A block of a partial warp leaves lanes idle, and no block may exceed 1024 threads."""
    count = math.prod(kernel.threads)
    assert count % WARP == 0 and 0 < count <= MAX_BLOCK_THREADS


@pytest.mark.parametrize("kernel", [*OWN_MATMUL, *OWN_ELEMENTWISE], ids=_ids([*OWN_MATMUL, *OWN_ELEMENTWISE]))
def test_block_dimensions_are_integers(kernel):
    """A launch takes whole numbers of threads (blocktile_2d's `//` is no `/`: 256.0 == 256 but is no block size)."""
    assert all(type(n) is int for n in kernel.threads)


ONE_PER_THREAD_KERNELS = [k for k in OWN_MATMUL if ONE_PER_THREAD.search(_kernel_source(k.source, k.function))]


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


STATIC_SHARED_ONLY = [k for k in OWN_MATMUL if "extern __shared__" not in SOURCES[k.source]]


@pytest.mark.parametrize("kernel", STATIC_SHARED_ONLY, ids=_ids(STATIC_SHARED_ONLY))
def test_only_a_source_with_dynamic_shared_memory_asks_for_it(kernel):
    """A kernel whose source declares no `extern __shared__` array launches with 0 bytes of it (the default)."""
    assert kernel.shared_bytes == 0


def test_an_entry_without_sizes_is_one_thread_for_one_element_and_no_shared_memory():
    """The defaults: a block of one thread computing a tile of one element, no dynamic shared memory."""
    kernel = MatmulKernel("bare", "defaults only")
    assert kernel.tile == (kernel.threads[1], kernel.threads[0]) and math.prod(kernel.threads) == 1
    assert kernel.shared_bytes == 0 and not kernel.vectorized and not kernel.pitched


SUMMARY_TILE = re.compile(r"(\d+)x(\d+) (?:shared-memory )?tiles")
SUMMARY_OUTPUTS = re.compile(r"(\d+)(?:x(\d+))? outputs per thread")


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
    """The warptile entries were chosen from scripts/tune_warptile.py's candidates: one of them, with its tile."""
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
