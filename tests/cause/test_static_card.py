"""src/kernelwatch/cause/: the static half of the cause card, on the CPU (NVRTC and the nvdisasm wheel, no GPU).

The broken variants of maintainers/support/cause_variants.py whose cause the compiler's output shows are named first
by the static card, for both architectures the suite builds for; every kernel of the registry gets a
static profile within 10 s of CPU time; the card's causes and text on known inputs. The instruction classes and
nvdisasm: tests/cause/test_sass.py; the occupancy calculator: tests/cause/test_occupancy.py.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter

import pytest

from kernels.compile import BASE_OPTIONS, define_options, load_source
from kernels.registry import MATMUL_KERNELS
from kernelwatch.cause import occupancy as occupancy_module
from kernelwatch.cause.card import Cause, card, merged, static_causes
from kernelwatch.cause.occupancy import occupancy
from kernelwatch.cause.static import StaticProfile, _report_of, launch_shape, static_profile
from maintainers.support.cause_variants import VARIANTS
from tests.support.variant_profiles import original_profile, variant_profile

ARCHS = ("sm_80", "sm_90")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.static], ids=lambda v: v.name)
def test_the_static_card_names_the_cause_of_every_static_variant_first(variant, arch):
    ranked = merged(static_causes(original_profile(variant, arch), variant_profile(variant, arch)))
    assert ranked and ranked[0].key == variant.cause, [(c.key, round(c.score), c.words) for c in ranked]


def test_there_are_eight_variants_five_of_them_static_each_of_its_own_cause():
    assert len(VARIANTS) == 8 and sum(v.static for v in VARIANTS) == 5
    assert len({v.cause for v in VARIANTS}) == 8 and len({v.name for v in VARIANTS}) == 8


def test_a_variant_whose_edit_no_longer_applies_says_so():
    import dataclasses

    broken = dataclasses.replace(VARIANTS[0], edits=(("no such text", "x"),))
    with pytest.raises(AssertionError, match="occurs 0 times in matmul_04_tiled.cu, not once"):
        broken.source_text()


@pytest.mark.slow  # nvcc and nvdisasm over every registry kernel, two builds: CI's second pass (tox -e unit -- -m slow)
@pytest.mark.parametrize("name", [n for n, k in MATMUL_KERNELS.items() if k.source])
def test_every_kernel_of_the_registry_gets_a_static_profile_for_both_builds_within_10_s(name):
    entry = MATMUL_KERNELS[name]
    started = _cpu_seconds()
    for arch in ARCHS:
        found = static_profile(load_source(entry.source), (*BASE_OPTIONS, *define_options(entry.defines)), arch,
                               entry.function, f"block={entry.threads} shared={entry.shared_bytes}", entry.source)
        assert found.registers > 0 and found.spill_stores == 0 and found.occupancy.blocks >= 1
        assert found.sass["all"] > 20 and found.sass["FFMA"] > 0 and found.constant_bytes > 0
    assert _cpu_seconds() - started < 10


def _cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (nvdisasm): the build's own cost, which
    a loaded machine does not inflate as it does the wall clock (the bar failed once under a load of 7)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


_SCALE = ('extern "C" __global__ void k(float *out, const float *in, int n) {'
          ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * %s; }')


@pytest.mark.slow  # builds with NVRTC per architecture: `tox -e unit` leaves it out, CI's slow pass runs it
@pytest.mark.parametrize("arch", ARCHS)
def test_the_constant_bytes_are_the_kernels_parameter_bank_and_the_files_constant_data_alone(arch):
    launch = "block=(256, 1) shared=0"
    short = static_profile(_SCALE % "2.0f", BASE_OPTIONS, arch, "k", launch).constant_bytes
    # the same parameters, many more instructions: the code's sections are not constant banks
    loop = ("__device__ float f(float x) { for (int j = 0; j < 64; ++j) x = x * x + 0.5f * x - 1.0f / (1.0f + x);"
            " return x; }\n")
    longer = static_profile(loop + _SCALE % "f(in[i])", BASE_OPTIONS, arch, "k", launch).constant_bytes
    # 256 floats of __constant__ data: 1 KiB more in the file's bank
    table = static_profile("__constant__ float table[256];\n" + _SCALE % "table[i & 255]", BASE_OPTIONS, arch, "k",
                           launch).constant_bytes
    assert short > 0 and longer == short and table == short + 1024


def test_every_architecture_the_card_builds_for_has_occupancy_limits():
    assert set(occupancy_module.ARCHS) >= set(ARCHS)


def test_a_launch_text_gives_its_threads_and_dynamic_shared_memory():
    assert launch_shape("grid=(8, 8, 1) block=(256, 1) shared=16384 pitched=False") == (256, 16384)
    assert launch_shape("grid=(64, 1, 1) block=(32, 8, 1)") == (256, 0)
    with pytest.raises(ValueError, match="names no block"):
        launch_shape("chunks=4 grids=[(1, 1, 1)]")


def test_the_card_leads_with_the_three_strongest_causes_then_every_figure_and_the_environment():
    causes = [Cause("barriers", 120, "BAR 2 -> 34"), Cause("registers", 3, "registers 32 -> 34"),
              Cause("barriers", 20, "stall_barrier 3% -> 24%"), Cause("branches", 10, "branches 5 -> 9"),
              Cause("spills", 1, "spills 0 -> 8")]
    lines = card("suites/x.py::t[a]", causes, {"registers": 32, "BAR": 2}, {"registers": 34, "BAR": 34},
                 {"driver": ("580.1", "580.2"), "CuPy": ("14.2", "14.2")})
    assert lines[0] == "#### Why `suites/x.py::t[a]` is slower"
    assert lines[2] == "1. **barriers**: BAR 2 -> 34; stall_barrier 3% -> 24%"
    assert lines[3].startswith("2. **branches**") and lines[4].startswith("3. **registers**")
    assert "| BAR | 2 | **34** |" in lines and "| registers | 32 | **34** |" in lines
    assert lines[-2] == "Environment differences: driver 580.1 -> 580.2"


def test_a_build_that_did_not_change_gives_no_cause():
    variant = VARIANTS[0]
    same = original_profile(variant, "sm_90")
    assert static_causes(same, same) == []
    assert "No difference the card reads explains it" in "\n".join(card("c", [], same.figures(), same.figures()))
    assert isinstance(same.sass, Counter)


def test_a_case_card_compiles_each_side_through_its_own_package():
    import kernels
    from kernels.compile import KernelBuild
    from kernelwatch.cause.sides import LIBRARY_NOTE, Side, case_card

    base = KernelBuild("matmul_04_tiled.cu", "matmul_tiled", (("TILE", 32),), "grid=(32, 32, 1) block=(32, 32) shared=0")
    head = KernelBuild("matmul_04_tiled.cu", "matmul_tiled", (("TILE", 16),), "grid=(64, 64, 1) block=(16, 16) shared=0")
    lines = case_card("suites/x.py::t[1024]", Side(kernels, base, "1024x1024x1024"), Side(kernels, head, "1024x1024x1024"),
                      "sm_90")
    assert lines[2].startswith("1. **global loads per FFMA**: LDG per FFMA in the code 0.0588 -> 0.1111")
    assert "| threads per block | 1024 | **256** |" in lines
    library = case_card("suites/x.py::t[cublas]", Side(kernels, None), Side(kernels, None), "sm_90")
    assert library[2].startswith(LIBRARY_NOTE) and "CUPTI did not record this run" in library[2]


CUBLAS_KERNEL = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_stages_64x3_aligna4_alignc4"


def test_a_library_case_card_names_the_kernels_cupti_saw_it_launch_on_each_side():
    import kernels
    from kernelwatch.cause.sides import LIBRARY_KERNEL_SCORE, LIBRARY_NOTE, NAME_CHARS, Side, case_card

    sides = (Side(kernels, None), Side(kernels, None))
    same = case_card("s.py::t[cublas]", *sides, "sm_90", launched=(("gemm_a", "splitk_reduce"), ("gemm_a", "splitk_reduce")))
    assert same[2] == LIBRARY_NOTE + " It launched `gemm_a`, `splitk_reduce` on both sides."
    assert same[4].startswith("No difference the card reads explains it")
    other = case_card("s.py::t[cublas]", *sides, "sm_90", launched=(("gemm_a",), (CUBLAS_KERNEL,)))
    assert other[2] == LIBRARY_NOTE
    cut = CUBLAS_KERNEL[:NAME_CHARS - 1] + "…"
    assert other[4] == (f"1. **library kernel**: the library launched `gemm_a` on the base and `{cut}` on the head: "
                        "it chose other kernels")
    assert len(CUBLAS_KERNEL) > NAME_CHARS and 40 < LIBRARY_KERNEL_SCORE < 100  # between occupancy's and spills'
    only_head = case_card("s.py::t[cublas]", *sides, "sm_90", launched=((), ("gemm_a",)))
    assert "launched nothing CUPTI saw on the base and `gemm_a` on the head" in only_head[4]


def _profile(sass: dict, **changes):
    values = dict(function="k", arch="sm_90", registers=32, spill_stores=0, spill_loads=0, stack_bytes=0,
                  static_shared=0, dynamic_shared=0, constant_bytes=0, barriers=1, threads=256,
                  occupancy=occupancy("sm_90", 256, 32, 0), sass=Counter(sass))
    return StaticProfile(**(values | changes))


def test_narrower_loads_need_fewer_wide_ones_and_more_32_bit_ones():
    base = _profile({"LDG.128": 8, "LDG.32": 2, "FFMA": 100})
    narrower = _profile({"LDG.128": 0, "LDG.32": 34, "FFMA": 100})
    fewer = _profile({"LDG.128": 4, "LDG.32": 1, "FFMA": 100})  # fewer loads of both widths: not narrower
    wider = _profile({"LDG.128": 16, "LDG.32": 4, "FFMA": 100})  # more loads of both widths: not narrower either
    assert "narrower loads" in [cause.key for cause in static_causes(base, narrower)]
    assert "narrower loads" not in [cause.key for cause in static_causes(base, fewer)]
    assert "narrower loads" not in [cause.key for cause in static_causes(base, wider)]


def test_a_class_absent_from_a_histogram_counts_as_none_for_narrower_loads():
    # a histogram holds only the classes the code has: the base's one 128-bit load and no 32-bit one became the
    # head's one 32-bit load and no 128-bit one, the smallest narrowing there is, read as 1 -> 0 and 0 -> 1
    (cause,) = static_causes(_profile({"LDG.128": 1}), _profile({"LDG.32": 1}))
    assert cause.key == "narrower loads"
    assert cause.words == "narrower LDG: LDG.128 1 -> 0, LDG.32 0 -> 1"


def test_a_report_without_a_barrier_count_means_no_barriers():
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
           "ptxas info    : Function properties for k\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 40 registers, 4096 bytes smem, 380 bytes cmem[0]\n")
    assert _report_of(log, "k") == {"stack": 0, "stores": 0, "loads": 0, "registers": 40, "barriers": 0,
                                    "smem": 4096}


def test_fewer_spills_than_the_base_are_no_spill_cause():
    base = _profile({"FFMA": 100}, spill_stores=64, spill_loads=64)
    assert "spills" not in [cause.key for cause in static_causes(base, _profile({"FFMA": 100}))]
    assert "spills" in [cause.key for cause in static_causes(_profile({"FFMA": 100}), base)]


def test_barriers_per_ffma_score_20_times_log2_of_their_ratio():
    # BAR 2 of 100 FFMAs -> 2 of 50: twice the barriers per FFMA, no more BAR in the code
    (cause,) = static_causes(_profile({"BAR": 2, "FFMA": 100}), _profile({"BAR": 2, "FFMA": 50}))
    assert cause.key == "barriers" and cause.score == pytest.approx(20.0)


def test_counts_per_ffma_of_a_kernel_without_ffma_say_it_has_none():
    # an elementwise kernel's code holds no FFMA: the histogram has no such key, the card says 0
    (cause,) = static_causes(_profile({"LDG": 4}), _profile({"LDG": 8}))
    assert cause.key == "global loads per FFMA"
    assert cause.words == ("LDG per FFMA in the code 4.0000 -> 8.0000 (LDG 4 -> 8, FFMA 0 -> 0: "
                           "a smaller tile reuses each load less)")


@pytest.mark.parametrize("base, head", [(32, 64), (64, 32)], ids=["more", "fewer"])
def test_registers_are_a_cause_where_they_changed_either_way(base, head):
    (cause,) = static_causes(_profile({"FFMA": 100}, registers=base), _profile({"FFMA": 100}, registers=head))
    assert cause.key == "registers" and cause.score == pytest.approx(10.0)
    assert cause.words == f"registers {base} -> {head} per thread"


def test_more_branches_score_15_times_log2_of_their_ratio():
    # 4 branches in the code -> 16: two doublings
    (cause,) = static_causes(_profile({"FFMA": 100, "branch": 4}), _profile({"FFMA": 100, "branch": 16}))
    assert cause.key == "branches" and cause.score == pytest.approx(30.0)
    assert cause.words == "branches in the code 4 -> 16"


def test_new_spills_score_100_plus_log2_of_one_plus_the_bytes_and_say_both_sides():
    # 8 + 7 bytes more: 100 + log2(16) = 104; the base's code has no local memory instruction, so its histogram
    # holds no such class (a histogram counts the classes the code has) and the card reads 0
    base = _profile({"FFMA": 100})
    head = _profile({"FFMA": 100, "LDL/STL (local)": 3}, spill_stores=8, spill_loads=7, registers=40)
    (cause,) = static_causes(base, head)  # registers moved too, but the spills explain them
    assert cause.key == "spills" and cause.score == pytest.approx(104.0)
    assert cause.words == ("spills: stores 0 -> 8 bytes, loads 0 -> 7 bytes (registers 32 -> 40; "
                           "local memory LDL/STL 0 -> 3 in the code)")
    assert static_causes(head, head) == []  # the same spills: no cause
    # a head whose histogram has no local memory class either reads 0 on both sides
    (cause,) = static_causes(base, _profile({"FFMA": 100}, spill_stores=8))
    assert cause.words.endswith("local memory LDL/STL 0 -> 0 in the code)")


def test_spills_that_grow_from_a_base_that_spilled_already_are_blamed_by_the_bytes_added():
    # 8 + 8 bytes -> 16 + 8: 8 more, 100 + log2(9)
    base = _profile({"FFMA": 100, "LDL/STL (local)": 4}, spill_stores=8, spill_loads=8)
    (cause,) = static_causes(base, _profile({"FFMA": 100, "LDL/STL (local)": 6}, spill_stores=16, spill_loads=8))
    assert cause.key == "spills" and cause.score == pytest.approx(100 + math.log2(9))
    assert cause.words.startswith("spills: stores 8 -> 16 bytes, loads 8 -> 8 bytes")
    # the smallest growth, one byte, is a spill cause too: spills appear or grow (module docstring)
    (one,) = static_causes(_profile({"FFMA": 100}), _profile({"FFMA": 100}, spill_loads=1))
    assert one.key == "spills" and one.score == pytest.approx(101.0)


def test_fewer_warps_score_40_plus_50_times_the_fraction_lost():
    from kernelwatch.cause.occupancy import Occupancy

    base = _profile({"FFMA": 100}, static_shared=256, dynamic_shared=128,
                    occupancy=Occupancy(8, 64, "registers and warps", 64))
    head = _profile({"FFMA": 100}, registers=64, static_shared=512, dynamic_shared=256,
                    occupancy=Occupancy(4, 48, "registers", 64))
    (cause,) = static_causes(base, head)  # no registers cause beside occupancy
    assert cause.key == "occupancy" and cause.score == pytest.approx(40 + 50 * 0.25)
    assert cause.words == ("occupancy 8 -> 4 blocks per SM (64 -> 48 warps; now limited by registers: shared memory "
                           "384 -> 768 bytes a block, registers 32 -> 64)")  # each side's static and dynamic shared memory
    # the other way round the head has more warps: no occupancy cause, and the registers that freed them are one
    assert [c.key for c in static_causes(head, base)] == ["registers"]
    same_warps = _profile({"FFMA": 100}, occupancy=Occupancy(4, 64, "warps", 64))
    assert [c.key for c in static_causes(base, same_warps)] == []


def test_more_bar_in_the_code_scores_30_times_log2_and_per_ffma_20_times_log2():
    # BAR 2 -> 8 of 100 FFMAs: 30 x log2(4) for the code, 20 x log2(4) per FFMA
    causes = static_causes(_profile({"BAR": 2, "FFMA": 100}), _profile({"BAR": 8, "FFMA": 100}))
    assert [(c.key, round(c.score, 6)) for c in causes] == [("barriers", 60.0), ("barriers", 40.0)]
    assert causes[0].words == "barriers: BAR in the code 2 -> 8"
    assert causes[1].words == ("BAR per FFMA in the code 0.0200 -> 0.0800 (BAR 2 -> 8, FFMA 100 -> 100: "
                               "a shorter step along k synchronizes the block more often)")
    (first,) = static_causes(_profile({"FFMA": 100}), _profile({"BAR": 4, "FFMA": 100}))  # none before: from 1
    assert first.key == "barriers" and first.score == pytest.approx(60.0)
    assert first.words == "barriers: BAR in the code 0 -> 4"
    # a first barrier is more BAR in the code and is named (counting none as one, its ratio is 1)
    (one,) = static_causes(_profile({"FFMA": 100}), _profile({"BAR": 1, "FFMA": 100}))
    assert one.key == "barriers" and one.words == "barriers: BAR in the code 0 -> 1"
    # fewer barriers are no cause, in the code or per FFMA
    assert static_causes(_profile({"BAR": 8, "FFMA": 100}), _profile({"BAR": 2, "FFMA": 100})) == []


def test_causes_of_equal_scores_are_ranked_by_key_with_their_documented_scores_exactly():
    # BAR 0 -> 2 scores 30 x log2(2) = 30, branches 1 -> 4 scores 15 x log2(4) = 30: a tie, which the key breaks
    # (an epsilon in the ratios once made both a little under 30 and let it decide the order instead)
    causes = merged(static_causes(_profile({"FFMA": 100, "branch": 1}), _profile({"FFMA": 100, "BAR": 2, "branch": 4})))
    assert [(c.key, c.score) for c in causes] == [("barriers", 30.0), ("branches", 30.0)]


def test_a_quarter_of_the_ffmas_left_is_unrolling_and_hides_the_per_ffma_counts():
    base = _profile({"FFMA": 100, "LDG": 10, "branch": 2})
    (cause,) = static_causes(base, _profile({"FFMA": 25, "LDG": 10, "branch": 2}))
    assert cause.key == "unrolling" and cause.score == pytest.approx(60.0)
    assert cause.words == ("unrolling: FFMA in the code 100 -> 25, branches 2 -> 2 (a loop the compiler no "
                           "longer unrolls)")
    # 26 of 100 left: not unrolling, and the loads per FFMA (0.1 -> 0.3846) are a cause of their own
    (loads,) = static_causes(base, _profile({"FFMA": 26, "LDG": 10, "branch": 2}))
    assert loads.key == "global loads per FFMA"
    assert static_causes(_profile({"LDG": 4}), _profile({"LDG": 4})) == []  # no FFMA on either side
    # every FFMA gone, the head's histogram without the class, and no branch on either side: 30 x log2(2 / 1),
    # counting none left as one, and the words read 0 where a side has no such class
    (gone,) = static_causes(_profile({"FFMA": 2}), _profile({}))
    assert gone.key == "unrolling" and gone.score == pytest.approx(30.0)
    assert gone.words == "unrolling: FFMA in the code 2 -> 0, branches 0 -> 0 (a loop the compiler no longer unrolls)"


def test_loads_per_ffma_are_a_cause_from_1_3_times_on():
    base = _profile({"FFMA": 100, "LDG": 100, "LDS": 100})
    (cause,) = static_causes(base, _profile({"FFMA": 100, "LDG": 130, "LDS": 129}))
    assert cause.key == "global loads per FFMA" and cause.score == pytest.approx(30 * 0.37851162325372983)
    (shared,) = static_causes(base, _profile({"FFMA": 100, "LDG": 129, "LDS": 200}))
    assert shared.key == "shared loads per FFMA" and shared.score == pytest.approx(20.0)
    assert shared.words == ("LDS per FFMA in the code 1.0000 -> 2.0000 (LDS 100 -> 200, FFMA 100 -> 100: "
                            "a smaller tile reuses each load less)")


def test_narrower_loads_score_20_once_per_kind_and_name_both_widths():
    base = _profile({"FFMA": 100, "STS.128": 4, "STS.64": 4, "STS.32": 1, "LDS.64": 2})
    head = _profile({"FFMA": 100, "STS.128": 0, "STS.64": 0, "STS.32": 9, "LDS.64": 1, "LDS.32": 2})
    causes = static_causes(base, head)
    assert [(c.key, c.score) for c in causes] == [("narrower loads", 20), ("narrower loads", 20)]
    assert causes[0].words == "narrower LDS: LDS.64 2 -> 1, LDS.32 0 -> 2"
    assert causes[1].words == "narrower STS: STS.128 4 -> 0, STS.32 1 -> 9"  # the 64-bit ones not again


def test_branches_are_a_cause_from_1_3_times_on_counting_none_as_one():
    assert [c.key for c in static_causes(_profile({"branch": 10}), _profile({"branch": 12}))] == []
    (cause,) = static_causes(_profile({"branch": 10}), _profile({"branch": 13}))
    assert cause.key == "branches" and cause.score == pytest.approx(15 * 0.37851162325372983)
    (from_none,) = static_causes(_profile({}), _profile({"branch": 2}))
    assert from_none.score == pytest.approx(15.0) and from_none.words == "branches in the code 0 -> 2"
    assert static_causes(_profile({}), _profile({"branch": 1})) == []


def test_merged_causes_sum_by_key_the_strongest_words_first_ties_by_key():
    ranked = merged([Cause("b", 1, "b1"), Cause("a", 2, "a2"), Cause("b", 3, "b3"), Cause("c", 4, "c4")])
    assert [(c.key, c.score, c.words) for c in ranked] == [("b", 4, "b3; b1"), ("c", 4, "c4"), ("a", 2, "a2")]


def test_a_cause_is_a_value_that_cannot_be_changed_and_can_be_a_key():
    import dataclasses

    cause = Cause("barriers", 60.0, "barriers: BAR in the code 2 -> 8")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cause.score = 0.0
    assert {cause: "first"}[Cause("barriers", 60.0, "barriers: BAR in the code 2 -> 8")] == "first"


def test_the_card_shows_its_note_three_causes_at_most_and_figures_as_numbers():
    causes = [Cause(key, score, key) for key, score in (("a", 4), ("b", 3), ("c", 2), ("d", 1))]
    lines = card("k", causes, {"x": 1.5, "y": 2.0, "z": 1.234567}, {"x": 1.5, "y": 3.0, "w": 7},
                 {"driver": ("1", "1")}, note="A note.")
    assert lines == ["#### Why `k` is slower", "", "A note.", "", "1. **a**: a", "2. **b**: b", "3. **c**: c", "",
                     "| figure | base | head |", "|---|---|---|", "| w | — | **7** |", "| x | 1.5 | 1.5 |",
                     "| y | 2 | **3** |", "| z | 1.235 | **—** |", ""]


PTXAS_TWO = ("ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
             "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
             "ptxas info    : Used 64 registers, used 2 barriers, 512 bytes smem, 380 bytes cmem[0]\n"
             "ptxas info    : Compiling entry function 'b' for 'sm_90'\n"
             "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
             "ptxas info    : Used 16 registers, 380 bytes cmem[0]\n")


def test_ptxas_figures_are_the_asked_functions_alone_and_an_absent_one_is_refused():
    assert _report_of(PTXAS_TWO, "a") == {"stack": 8, "stores": 4, "loads": 12, "registers": 64, "barriers": 2,
                                          "smem": 512}
    assert _report_of(PTXAS_TWO, "b") == {"stack": 0, "stores": 0, "loads": 0, "registers": 16, "barriers": 0,
                                          "smem": 0}
    with pytest.raises(ValueError, match=r"^ptxas's report names no entry function 'c' \(it names 'a', 'b'\)$"):
        _report_of(PTXAS_TWO, "c")
    with pytest.raises(ValueError, match=r"^ptxas's report names no entry function 'c' \(NVRTC's log is empty\)$"):
        _report_of("\n", "c")
    with pytest.raises(ValueError, match=r"^ptxas's report names no entry function 'c' \(NVRTC's log: 'warning: x'\)$"):
        _report_of(" warning: x\n", "c")


def test_a_three_dimensional_block_multiplies_its_threads():
    assert launch_shape("block=(8, 8, 4) shared=0") == (256, 0)
    with pytest.raises(ValueError, match=r"^the launch None names no block=\(x, y\): no occupancy can be said$"):
        launch_shape(None)


def test_a_profiles_figures_name_every_field_and_each_sass_class_in_order():
    profile = _profile({"FFMA": 3, "BAR": 1}, registers=40, spill_stores=4, spill_loads=8, stack_bytes=16,
                       static_shared=512, dynamic_shared=256, constant_bytes=380, threads=128,
                       occupancy=occupancy("sm_90", 128, 40, 768))
    assert profile.figures() == {
        "registers per thread": 40, "spill stores (bytes)": 4, "spill loads (bytes)": 8,
        "local memory (stack bytes)": 16, "static shared memory (bytes)": 512, "dynamic shared memory (bytes)": 256,
        "constant bank (bytes)": 380, "threads per block": 128, "blocks per SM": 12, "occupancy (warps per SM)": 48,
        "SASS BAR": 1, "SASS FFMA": 3}
    # 40 registers: 1280 a warp, 4 warps a block: 65536 // 5120 = 12 blocks of 4 warps
    assert list(profile.figures())[-2:] == ["SASS BAR", "SASS FFMA"]


def _tiled_sides(shape="1024x1024x1024"):
    import kernels
    from kernels.compile import KernelBuild
    from kernelwatch.cause.sides import Side

    base = KernelBuild("matmul_04_tiled.cu", "matmul_tiled", (("TILE", 32),), "grid=(32, 32, 1) block=(32, 32) shared=0")
    head = KernelBuild("matmul_04_tiled.cu", "matmul_tiled", (("TILE", 32),), "grid=(32, 32, 1) block=(32, 32)")
    return Side(kernels, base, shape), Side(kernels, head, shape)


def test_a_case_card_with_ncu_launches_each_side_under_it_and_adds_the_dynamic_causes(monkeypatch):
    import sys

    from kernelwatch.cause import dynamic
    from kernelwatch.cause.sides import case_card

    calls = []

    def profile(command, kernel, *, ncu):
        calls.append((command, kernel, ncu))
        side = "head" if command[3].endswith("head.cu") else "base"
        active = 45.0 if side == "head" else 90.0
        return dynamic.NcuProfile(kernel, {"sm__warps_active.avg.pct_of_peak_sustained_active": active,
                                        "gpu__time_duration.sum": 2e-6})

    monkeypatch.setattr(dynamic, "profile", profile)
    lines = case_card("s.py::t[1024]", *_tiled_sides(), "sm_90", ncu="/opt/ncu")
    assert lines[2] == "1. **occupancy**: achieved occupancy 90% -> 45%"
    assert "| ncu duration (µs) | 2 | 2 |" in lines
    assert "| ncu sm__warps_active.avg.pct_of_peak_sustained_active | 90 | **45** |" in lines
    (base_command, kernel, ncu), (head_command, *_) = calls
    assert (kernel, ncu) == ("matmul_tiled", "/opt/ncu")
    assert base_command[:3] == [sys.executable, "-m", "kernelwatch.cause.launch"] and base_command[3].endswith("base.cu")
    assert base_command[4:9] == ["matmul_tiled", "--shape=1024x1024x1024", "--grid=32,32,1", "--block=32,32",
                                 "--shared=0"]
    assert head_command[8] == "--shared=0" and all(part.startswith("--option=") for part in base_command[9:])
    assert len(base_command) > 9


def test_a_case_card_with_ncu_says_why_it_has_no_dynamic_half(monkeypatch):
    from kernelwatch.cause import dynamic
    from kernelwatch.cause.sides import case_card

    def missing(command, kernel, *, ncu):
        raise dynamic.ProfilerMissing("no ncu here")

    monkeypatch.setattr(dynamic, "profile", missing)
    assert case_card("c", *_tiled_sides(), "sm_90", ncu="ncu")[2] == "No dynamic half: no ncu here"
    assert case_card("c", *_tiled_sides(shape=None), "sm_90", ncu="ncu")[2] == (
        "The dynamic half launches matrix products only: this case has the static half alone.")
    assert case_card("c", *_tiled_sides(), "sm_90")[2].startswith("No difference the card reads explains it")


def test_loads_per_ffma_that_the_base_has_none_of_are_no_per_ffma_cause():
    assert static_causes(_profile({"FFMA": 100}), _profile({"FFMA": 100, "LDG": 10, "LDS": 10})) == []


def test_a_kernel_name_of_100_characters_is_whole_and_one_longer_is_cut():
    import kernels
    from kernelwatch.cause.sides import LIBRARY_KERNEL_SCORE, Side, case_card

    assert LIBRARY_KERNEL_SCORE == 50  # above occupancy's base (40), below spills' (100)
    whole, cut = "k" * 100, "k" * 101
    lines = case_card("c", Side(kernels, None), Side(kernels, None), "sm_90", launched=((whole,), (cut,)))
    assert lines[4] == (f"1. **library kernel**: the library launched `{whole}` on the base and `{'k' * 99}…` on the "
                        "head: it chose other kernels")
    nothing_head = case_card("c", Side(kernels, None), Side(kernels, None), "sm_90", launched=(("a", "b"), ()))
    assert nothing_head[4] == ("1. **library kernel**: the library launched `a`, `b` on the base and nothing CUPTI "
                               "saw on the head: it chose other kernels")


def test_a_profile_is_a_value_that_cannot_be_changed_and_whose_repr_leaves_out_the_sass():
    import dataclasses

    profile = _profile({"FFMA": 100, "LDG": 8})
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.registers = 64
    # the histogram (a Counter, which cannot be hashed) is no part of its identity: a profile can be a key
    assert {profile: "base"}[_profile({"FFMA": 100, "LDG": 8})] == "base"
    assert "sass" not in repr(profile) and "FFMA" not in repr(profile) and "registers=32" in repr(profile)


def test_a_log_without_the_function_is_quoted_in_the_error_to_its_first_200_characters():
    log = "error: " + "x" * 193 + "TAIL" + "y" * 100  # "TAIL" from the 201st character on
    with pytest.raises(ValueError) as error:
        _report_of(log, "k")
    assert str(error.value) == f"ptxas's report names no entry function 'k' (NVRTC's log: {log[:200]!r})"
    assert str(error.value).endswith("x')") and "TAIL" not in str(error.value)


def test_the_same_build_is_compiled_once(monkeypatch):
    from kernelwatch.ab import identity
    from kernelwatch.cause.static import compiled

    calls = []

    def ptxas_report(source_text, name, options, arch):
        calls.append((source_text, name, options, arch))
        return b"cubin", "log"

    monkeypatch.setattr(identity, "ptxas_report", ptxas_report)
    source = f"// asked twice {time.time_ns()}"  # no earlier test's build
    assert compiled(source, ("-O3",), "sm_90", "a.cu") == compiled(source, ("-O3",), "sm_90", "a.cu") == (
        b"cubin", "log")
    assert calls == [(source, "a.cu", ("-O3",), "sm_90")]
    compiled(source, ("-O3",), "sm_80", "a.cu")  # another arch: another build
    assert len(calls) == 2


PTXAS_NO_SPILL_LINE = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                       "ptxas info    : Used 32 registers, used 1 barriers, 16384 bytes smem\n")


def test_a_profile_takes_each_figure_from_the_report_the_launch_and_the_cubin(monkeypatch):
    from kernelwatch.cause import static
    from kernelwatch.cause.occupancy import Occupancy

    asked = []

    def compiled(source_text, options, arch, name):
        asked.append((source_text, options, arch, name))
        return b"cubin", PTXAS_NO_SPILL_LINE

    monkeypatch.setattr(static, "compiled", compiled)
    monkeypatch.setattr(static, "_constant_bytes", lambda cubin, function: 548)
    monkeypatch.setattr(static, "histogram", lambda cubin, function: Counter({"FFMA": 7, "all": 7}))
    profile = static_profile("src", ["-O3"], "sm_90", "k", "grid=(4, 4, 1) block=(16, 16) shared=16384", "k.cu")
    assert asked == [("src", ("-O3",), "sm_90", "k.cu")]
    # a report without the stack frame line: no spills, no stack
    assert (profile.function, profile.arch, profile.registers, profile.barriers) == ("k", "sm_90", 32, 1)
    assert (profile.spill_stores, profile.spill_loads, profile.stack_bytes) == (0, 0, 0)
    assert (profile.static_shared, profile.dynamic_shared, profile.constant_bytes, profile.threads) == (
        16384, 16384, 548, 256)
    # the block's shared memory is its static and dynamic bytes together: 32 KB + 1 KB = 33792 a block,
    # 233472 // 33792 = 6 blocks of 8 warps (registers and warps would allow 8)
    assert profile.occupancy == Occupancy(6, 48, "shared memory", 64)
    assert profile.sass == Counter({"FFMA": 7, "all": 7})


_OTHER = ('extern "C" __global__ void other(float *out, double a, double b, double c, double d)'
          ' { out[threadIdx.x] = a + b + c + d; }\n')


def test_the_constant_bytes_are_what_ptxas_reports_in_constant_banks():
    import re

    from kernelwatch.cause.static import _constant_bytes, compiled

    # sm_80's ptxas names each bank's bytes: the kernel's parameters at 0x160 (352) + two pointers and an
    # int (20) = 372 bytes of cmem[0]; 256 floats of __constant__ data are the file's 1024 bytes of cmem[3]
    for source in (_SCALE % "2.0f", "__constant__ float table[256];\n" + _SCALE % "table[i & 255]"):
        cubin, log = compiled(source, BASE_OPTIONS, "sm_80", "k.cu")
        reported = sum(int(n) for n in re.findall(r"(\d+) bytes cmem\[\d\]", log))
        assert _constant_bytes(cubin, "k") == reported and reported in (372, 372 + 1024)


@pytest.mark.parametrize("arch", ARCHS)
def test_another_kernels_parameter_bank_is_not_counted(arch):
    launch = "block=(256, 1) shared=0"
    alone = static_profile(_SCALE % "2.0f", BASE_OPTIONS, arch, "k", launch).constant_bytes
    beside = static_profile(_OTHER + _SCALE % "2.0f", BASE_OPTIONS, arch, "k", launch).constant_bytes
    assert beside == alone


# ---- whole cards, compared with their reviewed snapshots (tests/cause/__snapshots__/test_static_card.ambr;
# `--snapshot-update` rewrites it) ---------------------------------------------------------------------------------


def ranked_and_card(base: StaticProfile, head: StaticProfile, case: str, **card_options) -> str:
    """Every cause the static half finds, merged and ranked (key, score to 9 decimals, words), then the card's
    text as a report shows it."""
    ranked = merged(static_causes(base, head))
    return "\n".join([f"{c.key} | {c.score:.9f} | {c.words}" for c in ranked] + ["-" * 40]
                     + card(case, static_causes(base, head), base.figures(), head.figures(), **card_options))


def test_the_card_of_a_bigger_tile_that_spills_is_its_reviewed_snapshot(snapshot):
    # a tile twice as deep: twice the shared memory, registers at the cap and spilling, fewer blocks per SM, more
    # barriers and branches, the shared loads narrowed to 32 bits and more of them per FFMA
    base = _profile({"FFMA": 2048, "LDG": 32, "LDG.128": 32, "LDS": 256, "LDS.128": 256, "STS": 32, "STS.128": 32,
                     "BAR": 4, "branch": 12, "all": 3000}, registers=128, static_shared=16384,
                    occupancy=occupancy("sm_90", 256, 128, 16384), constant_bytes=380)
    head = _profile({"FFMA": 2048, "LDG": 32, "LDG.128": 32, "LDS": 640, "LDS.128": 128, "LDS.32": 512, "STS": 32,
                     "STS.128": 32, "BAR": 8, "branch": 20, "LDL/STL (local)": 56, "all": 3500}, registers=255,
                    spill_stores=96, spill_loads=128, stack_bytes=224, static_shared=32768, dynamic_shared=1024,
                    occupancy=occupancy("sm_90", 256, 255, 33792), constant_bytes=380)
    # the two runs' environments as the nightly's card reads them from their machine_info (src/kernelwatch/cause/
    # stored.py): the driver rolled back, CuPy moved on, the rest (numbers among them) the same
    from kernelwatch.cause.stored import environment_pairs

    def machine_info(driver, cupy):
        return {"python_version": "3.12.3", "gpu": {"host": "gpu-7", "uuid": "GPU-0123abcd", "driver": driver,
                                                    "cuda_runtime": "13.0", "cuda_driver_api": "13.0", "nvrtc": "13.0",
                                                    "cupy": cupy, "sm_clock_max_mhz": 1980,
                                                    "memory_clock_max_mhz": 3201, "power_limit_w": 700.0}}

    text = ranked_and_card(base, head, "suites/test_matmul.py::test_matmul_time[tiled-4096x4096x4096]",
                           environment=environment_pairs(machine_info("580.65", "14.0"),
                                                         machine_info("570.86", "14.1")))
    assert "registers |" not in text  # the spills and the occupancy explain the registers
    assert text == snapshot


def test_the_card_of_a_loop_no_longer_unrolled_is_its_reviewed_snapshot(snapshot):
    # an eighth of the FFMAs left: unrolling, and the counts per FFMA (all eight times higher) are left out; the
    # registers fell (more warps fit: no occupancy cause), so they are named, last
    base = _profile({"FFMA": 2048, "LDG": 64, "LDS": 512, "BAR": 4, "branch": 6}, registers=96,
                    occupancy=occupancy("sm_90", 256, 96, 0))
    head = _profile({"FFMA": 256, "LDG": 64, "LDS": 512, "BAR": 4, "branch": 7}, registers=72,
                    occupancy=occupancy("sm_90", 256, 72, 0))
    assert (base.occupancy.warps, head.occupancy.warps) == (16, 24)
    text = ranked_and_card(base, head, "s.py::t[unrolled]", note="No dynamic half: no ncu here",
                           environment={"driver": ("580.65", "580.65")})
    assert "Environment differences" not in text
    assert text == snapshot


def test_a_card_without_a_cause_or_a_card_that_could_not_be_made_says_so():
    from kernelwatch.cause.card import no_card

    same = _profile({"FFMA": 100})
    assert card("s.py::t", static_causes(same, same), same.figures(), {}) == [
        "#### Why `s.py::t` is slower", "",
        "No difference the card reads explains it (the same build, launch and counters).", "",
        "| figure | base | head |", "|---|---|---|", *[f"| {name} | {value} | **—** |" for name, value in
                                                      sorted(same.figures().items())], ""]
    assert no_card("s.py::t", RuntimeError("NVRTC failed")) == [
        "#### Why `s.py::t` is slower", "", "No card: NVRTC failed", ""]


def test_fewer_wide_loads_without_more_32_bit_ones_are_not_narrower():
    # half the 128-bit loads and no 32-bit load on either side (a histogram holds only the classes the code has),
    # or as many 32-bit loads as before: fewer loads, none of them narrower
    base = _profile({"FFMA": 100, "LDG.128": 8, "STS.64": 4, "STS.32": 2})
    head = _profile({"FFMA": 100, "LDG.128": 4, "STS.64": 2, "STS.32": 2})
    assert static_causes(base, head) == []
