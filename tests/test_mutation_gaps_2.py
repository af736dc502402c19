"""Claims that surviving mutants showed no test pinned (issue 22, second cosmic-ray pass).

Modules: harness/ab/identity.py, harness/verdict/against_baseline.py, kernels/registry.py and the
rest of harness/verdict/stats.py and harness/verdict/noise.py. Each test fails when the part of
the product it names is changed by one step.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import io
import json
import math
import struct
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from scipy.stats import mannwhitneyu

from harness.ab import identity as kernel_identity
from harness.verdict import against_baseline, stats
from harness.verdict.against_baseline import Baseline, judge_against_history, judge_against_stored, judge_record
from harness.verdict.labels import NEW, OTHER_HOST, SAME, SLOWER
from harness.verdict.noise import (
    Detectable,
    NoiseFloors,
    StoredResult,
    detectable_change,
    relevant_history,
    same_physical_gpu,
)
from harness.verdict.record import TIMER_CUPTI, TIMER_EVENTS, TIMER_WALL, CaseRecord
from kernels.registry import MATMUL_KERNELS, UNIT_ROUNDOFF, tolerance, warptile

# One kernel whose static shared array is SIZE floats; it touches only the first 32 of them,
# so the machine code is the same for any SIZE of 32 or more: only the shared size moves.
STATIC_SHARED = r"""
extern "C" __global__ void stage(float *out, const float *in) {
    __shared__ float tile[SIZE];
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[31 - threadIdx.x];
}
"""

# One kernel reading an initialised __constant__ table: LAST changes the data, not the code.
CONSTANT_TABLE = r"""
__constant__ float coeff[4] = {1.0f, 2.0f, 3.0f, LAST};
extern "C" __global__ void poly(float *out, const float *in) {
    int i = threadIdx.x;
    out[i] = coeff[i & 3] * in[i];
}
"""


@pytest.fixture(autouse=True)
def fresh_compiles():
    kernel_identity._cached_identity.cache_clear()
    yield
    kernel_identity._cached_identity.cache_clear()


def sections(source: str, options: tuple[str, ...]) -> dict[str, tuple[int, bytes]]:
    """Every section of the sm_90 cubin: name -> (size, bytes; empty for NOBITS)."""
    elf = ELFFile(io.BytesIO(kernel_identity._cubin(source, options, "sm_90", "probe.cu")))
    return {s.name: (s["sh_size"], b"" if s["sh_type"] == "SHT_NOBITS" else s.data()) for s in elf.iter_sections()}


def identity(source: str, options: tuple[str, ...], **kwargs) -> str:
    kernel_identity._cached_identity.cache_clear()
    return kernel_identity.build_identity(source, options, "sm_90", "probe.cu", **kwargs)


def test_the_shared_size_probe_changes_only_the_static_shared_size():
    small, large = sections(STATIC_SHARED, ("-DSIZE=32",)), sections(STATIC_SHARED, ("-DSIZE=64",))
    assert small[".text.stage"] == large[".text.stage"]
    assert small[".nv.info.stage"] == large[".nv.info.stage"]
    assert small[".nv.shared.stage"][0] < large[".nv.shared.stage"][0]


@pytest.mark.parametrize("function", [None, "stage"])
def test_identity_changes_when_only_the_static_shared_memory_size_changes(function):
    """A change that only grows a kernel's shared memory can cut its occupancy: it must be timed."""
    assert identity(STATIC_SHARED, ("-DSIZE=32",), function=function) != identity(
        STATIC_SHARED, ("-DSIZE=64",), function=function)


def test_the_constant_probe_changes_only_the_constant_data():
    four, five = sections(CONSTANT_TABLE, ("-DLAST=4.0f",)), sections(CONSTANT_TABLE, ("-DLAST=5.0f",))
    assert four[".text.poly"] == five[".text.poly"]
    assert four[".nv.info.poly"] == five[".nv.info.poly"]
    constant_banks = [name for name in four if name.startswith(".nv.constant") and four[name] != five[name]]
    assert constant_banks  # the table's initial values live in a constant bank


@pytest.mark.parametrize("function", [None, "poly"])
def test_identity_changes_when_only_the_initial_value_of_constant_data_changes(function):
    assert identity(CONSTANT_TABLE, ("-DLAST=4.0f",), function=function) != identity(
        CONSTANT_TABLE, ("-DLAST=5.0f",), function=function)




def test_the_file_wide_attribute_section_counts_for_the_file_and_for_each_kernel():
    """.nv.info holds every kernel's register count and stack sizes; a kernel's identity keeps
    it (filtered) and leaves out only its neighbours' own sections."""
    elf = ELFFile(io.BytesIO(kernel_identity._cubin(STATIC_SHARED + CONSTANT_TABLE, ("-DSIZE=64", "-DLAST=5.0f"),
                                                     "sm_90", "probe.cu")))
    whole = [section.name for section in kernel_identity._selected_sections(elf, None)]
    assert {".nv.info", ".nv.info.stage", ".nv.info.poly", ".text.stage", ".text.poly", ".nv.shared.stage",
            ".nv.constant3", ".nv.constant0.stage", ".nv.constant0.poly"} <= set(whole)
    assert not {".strtab", ".symtab", ".note.nv.tkinfo", ".debug_frame"} & set(whole)
    stage = {section.name for section in kernel_identity._selected_sections(elf, "stage")}
    assert {".nv.info", ".nv.info.stage", ".text.stage", ".nv.shared.stage", ".nv.constant3"} <= stage
    assert not {".nv.info.poly", ".text.poly", ".nv.constant0.poly"} & stage


def pinned_nvrtc() -> bool:
    try:
        return importlib.metadata.version("nvidia-cuda-nvrtc") == "13.0.88"
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.skipif(not pinned_nvrtc(), reason="the digests below are those of NVRTC 13.0.88 (constraints-cuda13)")
@pytest.mark.parametrize("function, digest", [
    (None, "08bfc4635b27fb8c62bb9475683ff2ecdad0df0237258f88a46a117cfcc63885"),
    ("stage", "7167e4c0203e3df86bbf8c63bf6e0cbe36105e2f8a786b4f2a7ff1ca224953ed"),
    ("poly", "06eb0c60a90c94749658eb436ddcd8847be8e1799ad793b43d51df757441e85c"),
])
def test_the_identity_of_a_fixed_build_is_the_one_stored_runs_were_pooled_by(function, digest):
    """Stored runs are pooled and skipped by this digest (the `sass` of a record): a change of what
    is hashed, or how, must be deliberate, since it splits every history at that commit."""
    assert identity(STATIC_SHARED + CONSTANT_TABLE, ("-DSIZE=64", "-DLAST=5.0f"), function=function) == digest


# The file-wide .nv.info, record by record (harness/ab/identity.py's _file_info_for), on records
# made here: NVRTC's own files hold only (symbol, value) records, so these cases need made ones.

def info_record(fmt: int, attribute: int, payload: bytes = b"", value: int = 0) -> bytes:
    """A sized record (format 4) with its payload, or a 4-byte record of a 16-bit value."""
    if fmt == 4:
        return struct.pack("<BBH", fmt, attribute, len(payload)) + payload
    return struct.pack("<BBH", fmt, attribute, value)


class Symbols:
    """The part of pyelftools' symbol table _file_info_for reads: index -> named symbol."""

    def __init__(self, names: list[str]):
        self.names = names

    def get_symbol(self, index: int):
        return SimpleNamespace(name=self.names[index])


SYMBOLS = Symbols(["", "first", "second", "$first$helper", "a_global"])
KERNELS = {"first", "second"}
FIRST = "".join(["fir", "st"])  # equal to the kernel's name, not the same object


def symbol_value(index: int, value: int) -> bytes:
    return struct.pack("<II", index, value)


def file_info(data: bytes, function: str = FIRST) -> bytes:
    return kernel_identity._file_info_for(data, SYMBOLS, KERNELS, function)


def test_file_info_keeps_every_record_that_names_no_kernel_up_to_a_last_four_byte_one():
    data = (info_record(4, 0x37, b"\x01\x02\x03\x04") + info_record(3, 0x1B, value=0x60)
            + info_record(4, 0x50, symbol_value(2, 7)) + info_record(1, 0x2A) + info_record(3, 0x1B, value=0x61))
    assert file_info(data) == data


@pytest.mark.parametrize("attribute", [0x11, 0x12, 0x1E, 0x23, 0x2F])
def test_file_info_leaves_out_the_other_kernels_frame_stack_and_register_records(attribute):
    """0x11 frame size, 0x12 min stack, 0x1E max stack, 0x23 CRS stack, 0x2F registers: a neighbour's
    edit that moves any of them must leave this kernel's identity alone."""
    neighbour = info_record(4, attribute, symbol_value(2, 96))
    kept = info_record(3, 0x1B, value=0x60)
    assert file_info(neighbour + kept) == kept


@pytest.mark.parametrize("attribute", [0x11, 0x2F])
def test_file_info_names_the_kernels_own_records_and_its_subroutines_by_symbol(attribute):
    own = info_record(4, attribute, symbol_value(1, 40))
    subroutine = info_record(4, attribute, symbol_value(3, 8))
    named = struct.pack("<BBH", 4, attribute, 8) + b"first\0" + struct.pack("<I", 40)
    named_subroutine = struct.pack("<BBH", 4, attribute, 8) + b"$first$helper\0" + struct.pack("<I", 8)
    assert file_info(own + subroutine) == named + named_subroutine


def test_file_info_keeps_a_record_of_a_symbol_no_kernel_owns_as_it_is():
    unowned = info_record(4, 0x2F, symbol_value(4, 12))
    assert file_info(unowned) == unowned


def test_file_info_keeps_a_sized_record_that_is_not_a_symbol_and_value_pair():
    longer = info_record(4, 0x2F, symbol_value(2, 1) + b"\0\0\0\0")
    assert file_info(longer) == longer



def test_file_info_steps_over_four_byte_records_by_their_four_bytes():
    # a 16-bit value that reads like a payload length must not swallow the next record
    neighbour = info_record(4, 0x2F, symbol_value(2, 96))
    kept = info_record(3, 0x1B, value=len(neighbour))
    assert file_info(kept + neighbour + kept) == kept + kept


def test_file_info_reads_only_sized_records_of_eight_bytes_as_symbol_and_value():
    four_byte = info_record(3, 0x2F, value=8)
    short = info_record(4, 0x2F, struct.pack("<I", 2))
    assert file_info(four_byte + short) == four_byte + short


def test_only_the_file_wide_attribute_section_goes_through_the_per_kernel_filter(monkeypatch):
    filtered = []
    real = kernel_identity._file_info_for

    def spy(data, symbols, kernels, function):
        filtered.append(data)
        return real(data, symbols, kernels, function)

    monkeypatch.setattr(kernel_identity, "_file_info_for", spy)
    source, options = STATIC_SHARED + CONSTANT_TABLE, ("-DSIZE=64", "-DLAST=5.0f")
    identity(source, options, function="stage")
    elf = ELFFile(io.BytesIO(kernel_identity._cubin(source, options, "sm_90", "probe.cu")))
    assert filtered == [elf.get_section_by_name(".nv.info").data()]
    filtered.clear()
    identity(source, options)
    assert filtered == []


# ---- harness/verdict/against_baseline.py --------------------------------------------------------
# Records and stored runs read from files carry equal strings, not the same objects: every name,
# timer, UUID and machine-code hash below is a fresh copy, so that `is` in place of `==` shows.

CASE = "suites/x.py::test_x[a]"
OTHER_CASE = "suites/x.py::test_x[b]"
BASELINE_FILE = "0002_x.json"


def fresh(text: str | None) -> str | None:
    """An equal string that is not the same object, as json or a file name gives."""
    return None if text is None else json.loads(json.dumps(text))


def noisy(median: float, n: int = 40, seed: int = 0) -> list[float]:
    return list(median * (1 + 0.003 * np.random.default_rng(seed).standard_normal(n)))


def record_of(median: float, *, timer: str | None = TIMER_CUPTI, seed: int = 1, case: str = CASE,
              sass: str | None = "sass-1", n: int = 40) -> CaseRecord:
    return CaseRecord(case=fresh(case), median_s=median, samples=noisy(median, n=n, seed=seed), timer=fresh(timer),
                      sass=fresh(sass))


def baseline_of(*records: CaseRecord, gpu: str | None = "GPU-A") -> Baseline:
    return Baseline(Path(BASELINE_FILE), fresh(gpu), {record.case: record for record in records})


def stored(gpu: str | None, i: int, *, timer: str = TIMER_CUPTI, median: float = 1e-3, sass: str | None = "sass-1",
           run: str | None = None) -> StoredResult:
    return StoredResult(fresh(gpu), fresh(timer), median, fresh(run or f"run {i}"), fresh(sass),
                        tuple(noisy(median, seed=10 + i)))


def history_runs(gpu: str | None, n: int, *, first: int = 0, **kwargs) -> list[StoredResult]:
    return [stored(gpu, i, **kwargs) for i in range(first, first + n)]


def test_one_run_pooled_is_its_own_samples_unchanged_and_in_order():
    run = [3e-3, 1e-3, 2e-3, 5e-3, 4e-3]
    assert against_baseline.pooled_samples([run]) == run


@pytest.mark.parametrize("sizes, values", [((2, 2), 6), ((3, 5), 6), ((4, 9), 8)])
def test_each_pooled_run_gives_the_smallest_runs_count_of_values_and_at_least_three(sizes, values):
    runs = [list(np.linspace(1e-3, 2e-3, size)) for size in sizes]
    assert len(against_baseline.pooled_samples(runs)) == values


def test_a_case_missing_from_the_baseline_or_without_samples_there_is_new():
    base = baseline_of(record_of(1e-3, case=OTHER_CASE))
    assert judge_record(record_of(1e-3), base, current_gpu_uuid=fresh("GPU-A")).label == NEW
    assert judge_record(record_of(1e-3), baseline_of(dataclasses.replace(record_of(1e-3), samples=[])),
                        current_gpu_uuid=fresh("GPU-A")).label == NEW


def test_a_reference_pooled_from_two_runs_says_so_and_names_the_baseline_file():
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), current_gpu_uuid=fresh("GPU-A"),
                           history=[stored("GPU-A", 5, run="0001_x.json")])
    assert (verdict.reference, verdict.reference_runs) == (BASELINE_FILE, 2)
    assert "reference pooled from 2 runs of this code" in verdict.reason


@pytest.mark.parametrize("others", [2, 3])
def test_fewer_other_runs_than_the_pool_holds_are_all_pooled(others):
    history = history_runs("GPU-A", others)
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), current_gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1 + others


def test_the_baseline_file_itself_in_the_history_is_not_pooled_twice():
    history = [stored("GPU-A", 0, run=BASELINE_FILE)]
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), current_gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1


@pytest.mark.parametrize("what, run", [
    ("a GPU whose UUID sorts first", {"gpu": "GPU-0"}),
    ("a timer whose name sorts last", {"timer": TIMER_WALL}),
    ("other machine code", {"sass": "sass-0"}),
])
def test_only_runs_of_this_gpu_timer_and_code_are_pooled(what, run):
    history = [stored(**{"gpu": "GPU-A", "i": 0, **run})]
    verdict = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), current_gpu_uuid=fresh("GPU-A"),
                           history=history)
    assert verdict.reference_runs == 1, what
    pooled = judge_record(record_of(1e-3), baseline_of(record_of(1e-3, seed=0)), current_gpu_uuid=fresh("GPU-A"),
                          history=[stored("GPU-A", 0)])
    assert pooled.reference_runs == 2


def test_records_of_an_unknown_timer_on_both_sides_are_judged():
    base = baseline_of(record_of(1e-3, timer=None, seed=0))
    assert judge_record(record_of(1.1e-3, timer=None), base, current_gpu_uuid=fresh("GPU-A")).label == SLOWER


def test_a_wall_clock_case_read_from_files_is_judged_at_thirty_percent_and_only_on_its_machine():
    base = baseline_of(record_of(1e-3, timer=TIMER_WALL, seed=0))
    same = judge_record(record_of(1.25e-3, timer=TIMER_WALL), base, current_gpu_uuid=fresh("GPU-A"))
    assert (same.label, same.detectable) == (SAME, pytest.approx(0.30))
    assert judge_record(record_of(1.25e-3, timer=TIMER_WALL), base, current_gpu_uuid=fresh("GPU-B")).label == OTHER_HOST


def test_one_timer_read_from_two_files_is_one_timer():
    base = baseline_of(record_of(1e-3, timer=TIMER_EVENTS, seed=0))
    assert judge_record(record_of(1.1e-3, timer=TIMER_EVENTS), base, current_gpu_uuid=fresh("GPU-A")).label == SLOWER


def test_another_gpus_runs_never_make_up_this_gpus_history():
    # GPU-A sorts before GPU-B: an ordering comparison in place of equality would take its runs
    history = history_runs("GPU-A", 3) + history_runs("GPU-B", 2, first=3)
    assert judge_against_history(record_of(1e-3), history, gpu_uuid=fresh("GPU-B")) is None
    assert judge_against_history(record_of(1e-3), history_runs("GPU-B", 3), gpu_uuid=fresh("GPU-B")) is not None


def test_another_timers_runs_never_make_up_this_gpus_history():
    # "cupti concurrent kernel" sorts after "cuda events"
    history = history_runs("GPU-A", 3, timer=TIMER_CUPTI)
    assert judge_against_history(record_of(1e-3, timer=TIMER_EVENTS), history, gpu_uuid=fresh("GPU-A")) is None


def test_runs_without_a_gpu_uuid_or_a_record_without_samples_give_no_history_verdict():
    assert judge_against_history(record_of(1e-3), history_runs(None, 3), gpu_uuid=None) is None
    empty = dataclasses.replace(record_of(1e-3), samples=[])
    assert judge_against_history(empty, history_runs("GPU-A", 3), gpu_uuid=fresh("GPU-A")) is None


def test_the_newest_runs_code_decides_the_history_reference():
    # three runs of the old code, then one of the new: one run of the newest code is too few
    history = history_runs("GPU-A", 3, sass="sass-0") + history_runs("GPU-A", 1, first=3)
    assert judge_against_history(record_of(1e-3), history, gpu_uuid=fresh("GPU-A")) is None


def test_a_run_of_the_same_code_read_from_files_is_not_called_changed_code():
    verdict = judge_against_history(record_of(1e-3), history_runs("GPU-A", 3), gpu_uuid=fresh("GPU-A"))
    assert verdict.reference_runs == 3 and "machine code differs" not in verdict.reason


@pytest.mark.parametrize("timer, floor", [(TIMER_WALL, 0.30), ("zz timer sorting after the wall clock", 0.015)])
def test_only_the_wall_clock_is_judged_at_thirty_percent_against_history(timer, floor):
    history = history_runs("GPU-A", 8, timer=timer)  # eight: a wall-clock routine needs them (HISTORY_MIN_RUNS_WALL)
    verdict = judge_against_history(record_of(1e-3, timer=timer), history, gpu_uuid=fresh("GPU-A"))
    assert verdict.detectable == pytest.approx(floor)


def test_the_nightly_takes_this_gpus_history_when_it_has_enough_runs_else_the_baseline():
    base = baseline_of(record_of(1e-3, seed=0))
    enough = judge_against_stored(record_of(1e-3), baseline=base, baseline_runs=[], own_history=history_runs("GPU-A", 3),
                                  gpu_uuid=fresh("GPU-A"))
    assert enough.reference == "history of GPU-A"
    too_few = judge_against_stored(record_of(1e-3), baseline=base, baseline_runs=[], own_history=history_runs("GPU-A", 2),
                                   gpu_uuid=fresh("GPU-A"))
    assert too_few.reference == BASELINE_FILE


# ---- harness/verdict/stats.py (judge) ------------------------------------------------------------

SPREAD = [0.97e-3, 0.98e-3, 0.99e-3, 1e-3, 1.01e-3, 1.02e-3, 1.03e-3] * 6


def test_a_single_number_is_not_a_sample_set():
    with pytest.raises(ValueError, match="flat sequence"):
        stats.checked_samples("current", 1e-3)


def test_samples_with_no_spread_at_all_read_as_p_one():
    verdict = stats.judge("c", [1e-3] * 8, [1e-3] * 8, detectable=0.015)
    assert verdict.p_value == 1.0 and "p=1" in verdict.reason


@pytest.mark.parametrize("alpha", [-0.5, 1.5])
def test_an_alpha_outside_zero_to_one_is_an_error(alpha):
    with pytest.raises(ValueError, match="alpha must be a fraction"):
        stats.judge("c", SPREAD, SPREAD, detectable=0.015, alpha=alpha)


def test_a_negative_detectable_change_is_an_error():
    with pytest.raises(ValueError, match="detectable must be a positive fraction"):
        stats.judge("c", SPREAD, SPREAD, detectable=-0.015)


def test_equal_medians_are_tested_for_a_slowdown():
    baseline = [1e-3, 2e-3, 3e-3, 3.1e-3, 3.2e-3]
    current = [2.9e-3, 3e-3, 3e-3, 3e-3, 10e-3, 11e-3, 12e-3]
    verdict = stats.judge("c", baseline, current, detectable=0.015)
    assert verdict.ratio == 1.0
    assert verdict.p_value == pytest.approx(mannwhitneyu(current, baseline, alternative="greater").pvalue)


def test_a_significant_speedup_inside_the_detectable_change_is_same():
    faster = [value * 0.97 for value in SPREAD]
    verdict = stats.judge("c", SPREAD, faster, detectable=0.05)
    assert verdict.p_value < 0.01 and verdict.label == SAME


def test_a_p_value_equal_to_alpha_is_not_significant():
    # three samples a side, fully apart: the exact one-sided p is 1/20
    verdict = stats.judge("c", [1e-3, 1.01e-3, 1.02e-3], [2e-3, 2.01e-3, 2.02e-3], detectable=0.015, alpha=0.05)
    assert verdict.p_value == 0.05 and verdict.label == SAME


def test_the_reason_names_the_detectable_change_in_percent():
    assert "detectable change 50.0%" in stats.judge("c", SPREAD, SPREAD, detectable=0.5).reason


# ---- harness/verdict/noise.py (floors, GPUs, history, words) ------------------------------------

@pytest.mark.parametrize("value", [NoiseFloors(), StoredResult("GPU-A", TIMER_CUPTI, 1e-3), Detectable(0.015, "x")])
def test_floors_stored_results_and_detectables_are_frozen(value):
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.__setattr__(dataclasses.fields(value)[0].name, 0.5)


@pytest.mark.parametrize("field, value", [("same_gpu", -0.01), ("other_gpu", 1.5), ("host_copy_spread", 1.5),
                                          ("z", -1.0)])
def test_floors_out_of_range_are_errors(field, value):
    with pytest.raises(ValueError, match=f"NoiseFloors.{field}"):
        NoiseFloors(**{field: value})


def test_no_assumed_host_copy_spread_and_a_z_below_one_are_allowed():
    assert NoiseFloors(host_copy_spread=0.0, z=0.5).z == 0.5


def test_the_same_physical_gpu_is_an_equal_uuid_and_only_that():
    assert same_physical_gpu(fresh("GPU-A"), fresh("GPU-A"))
    assert not same_physical_gpu("GPU-B", "GPU-A")


def test_relevant_history_matches_timer_and_gpu_read_from_files():
    runs = [stored("GPU-A", 0, median=1e-3), stored("GPU-B", 1, median=2e-3)]
    assert relevant_history(runs, fresh("GPU-A"), fresh("GPU-A"), fresh(TIMER_CUPTI)) == [1e-3]
    assert relevant_history(runs, fresh("GPU-A"), fresh("GPU-B"), fresh(TIMER_CUPTI)) == [1e-3, 2e-3]


def test_the_words_give_the_assumed_spread_and_the_absolute_floor_exactly():
    floors = NoiseFloors(host_copy_spread=0.5)
    words = detectable_change(SPREAD, SPREAD, same_gpu=True, host_copies=True, floors=floors).because
    assert "50.0% assumed between processes for host copies" in words
    huge = detectable_change(SPREAD, SPREAD, same_gpu=True, floors=NoiseFloors(absolute_s=0.9)).because
    assert huge == "900000 µs absolute floor"


# ---- kernels/registry.py (partly run) -----------------------------------------------------------

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
