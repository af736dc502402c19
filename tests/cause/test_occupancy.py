"""src/kernelwatch/cause/occupancy.py: blocks per multiprocessor by the CUDA occupancy calculator's rules, worked by hand.

Each architecture's limits, from NVIDIA's CUDA C++ Programming Guide ("Compute Capabilities") and the
Ampere and Hopper Tuning Guides:

    arch    warps/SM  blocks/SM  registers/SM  shared memory/SM  most a block may use
    sm_80      64        32         65536       164 KB (167936)    163 KB (166912)
    sm_86      48        16         65536       100 KB (102400)     99 KB (101376)
    sm_89      48        24         65536       100 KB (102400)     99 KB (101376)
    sm_90      64        32         65536       228 KB (233472)    227 KB (232448)

Registers are given to a warp in units of 256 (a thread's count rounded up to a multiple of 8, times
32); a block's shared memory is its bytes plus the 1 KB the system reserves, rounded up to 128 bytes.
Each limit gives a number of blocks; the smallest is the occupancy, named by every limit that gives it.
"""

from __future__ import annotations

import dataclasses

import pytest

from kernelwatch.cause.occupancy import ARCHS, Occupancy, occupancy

KB = 1024

# (arch, threads per block, registers per thread, shared bytes per block) -> (blocks per SM, limited by)
CASES = [
    # --- sm_80 ---
    # 4 warps of 64 registers: 2048 a warp, 8192 a block, 65536 // 8192 = 8 (warps would allow 16)
    pytest.param("sm_80", 128, 64, 0, 8, "registers", id="sm_80-registers-at-64"),
    # 65 registers are 72 a thread: 2304 a warp, 9216 a block, 65536 // 9216 = 7
    pytest.param("sm_80", 128, 65, 0, 7, "registers", id="sm_80-registers-past-64"),
    # 81 KB + 1 KB = 82 KB (83968): 167936 // 83968 = 2 exactly (registers and warps allow 8)
    pytest.param("sm_80", 256, 32, 81 * KB, 2, "shared memory", id="sm_80-shared-two-fill-164-kb"),
    # a byte more: 84096 after rounding to 128, 167936 // 84096 = 1
    pytest.param("sm_80", 256, 32, 81 * KB + 1, 1, "shared memory", id="sm_80-shared-past-two"),
    # 163 KB, the most a block may use: with the 1 KB it is all 164 KB, one block
    pytest.param("sm_80", 128, 32, 166912, 1, "shared memory", id="sm_80-shared-per-block-max"),
    pytest.param("sm_80", 128, 32, 166913, 0, "shared memory", id="sm_80-shared-past-per-block-max"),
    # 3 warps a block: 64 // 3 = 21 (registers: 65536 // 1536 = 42)
    pytest.param("sm_80", 96, 16, 0, 21, "warps", id="sm_80-warps-3-a-block"),
    # one warp a block: warps would allow 64, registers 128, the 32 blocks limit them
    pytest.param("sm_80", 32, 16, 0, 32, "blocks", id="sm_80-blocks"),
    # two warps a block: 64 // 2 = 32, as many as the blocks allow
    pytest.param("sm_80", 64, 16, 0, 32, "warps and blocks", id="sm_80-warps-and-blocks"),
    # --- sm_86 ---
    # 40 registers: 1280 a warp, 10240 a block of 8 warps, 65536 // 10240 = 6, as many as 48 // 8 warps allow
    pytest.param("sm_86", 256, 40, 0, 6, "registers and warps", id="sm_86-registers-at-40"),
    # 41 registers are 48: 1536 a warp, 12288 a block, 65536 // 12288 = 5
    pytest.param("sm_86", 256, 41, 0, 5, "registers", id="sm_86-registers-past-40"),
    # 49 KB + 1 KB = 50 KB: 102400 // 51200 = 2 exactly (registers 16, warps 12)
    pytest.param("sm_86", 128, 32, 49 * KB, 2, "shared memory", id="sm_86-shared-two-fill-100-kb"),
    # a byte more: 51328 after rounding, 102400 // 51328 = 1
    pytest.param("sm_86", 128, 32, 49 * KB + 1, 1, "shared memory", id="sm_86-shared-past-two"),
    # 99 KB, the most a block may use: with the 1 KB it is all 100 KB
    pytest.param("sm_86", 128, 32, 101376, 1, "shared memory", id="sm_86-shared-per-block-max"),
    pytest.param("sm_86", 128, 32, 101377, 0, "shared memory", id="sm_86-shared-past-per-block-max"),
    # 16 warps a block: 48 // 16 = 3 (registers: 65536 // 8192 = 8)
    pytest.param("sm_86", 512, 16, 0, 3, "warps", id="sm_86-warps-16-a-block"),
    # 2 warps a block: warps would allow 24, the 16 blocks limit them
    pytest.param("sm_86", 64, 16, 0, 16, "blocks", id="sm_86-blocks"),
    # 3 warps a block: 48 // 3 = 16, as many as the blocks allow
    pytest.param("sm_86", 96, 16, 0, 16, "warps and blocks", id="sm_86-warps-and-blocks"),
    # --- sm_89 ---
    # 64 registers: 2048 a warp, 16384 a block of 8 warps, 65536 // 16384 = 4 (warps allow 6)
    pytest.param("sm_89", 256, 64, 0, 4, "registers", id="sm_89-registers-at-64"),
    # 65 registers are 72: 2304 a warp, 18432 a block, 65536 // 18432 = 3
    pytest.param("sm_89", 256, 65, 0, 3, "registers", id="sm_89-registers-past-64"),
    # 33024 + 1024 = 34048 (266 units of 128): 102400 // 34048 = 3 (102144 bytes)
    pytest.param("sm_89", 128, 32, 33024, 3, "shared memory", id="sm_89-shared-three"),
    # a byte more: 34176, three would need 102528 > 102400: 2
    pytest.param("sm_89", 128, 32, 33025, 2, "shared memory", id="sm_89-shared-past-three"),
    # 16 warps a block: 48 // 16 = 3
    pytest.param("sm_89", 512, 16, 0, 3, "warps", id="sm_89-warps-16-a-block"),
    # a thread more is 17 warps: 48 // 17 = 2 (registers: 65536 // 8704 = 7)
    pytest.param("sm_89", 513, 16, 0, 2, "warps", id="sm_89-warps-17-a-block"),
    # one warp a block: warps would allow 48, the 24 blocks limit them
    pytest.param("sm_89", 32, 16, 0, 24, "blocks", id="sm_89-blocks"),
    # 2 warps a block: 48 // 2 = 24, as many as the blocks allow
    pytest.param("sm_89", 64, 16, 0, 24, "warps and blocks", id="sm_89-warps-and-blocks"),
    # --- sm_90 ---
    # 128 registers: 4096 a warp, 32768 a block of 8 warps, 65536 // 32768 = 2
    pytest.param("sm_90", 256, 128, 0, 2, "registers", id="sm_90-registers-at-128"),
    # 129 registers are 136: 4352 a warp, 34816 a block: 1
    pytest.param("sm_90", 256, 129, 0, 1, "registers", id="sm_90-registers-past-128"),
    # 255 registers, the most a thread may have, are 256: 8192 a warp, all 65536 for one block of 8 warps
    pytest.param("sm_90", 256, 255, 0, 1, "registers", id="sm_90-registers-255"),
    # 113 KB + 1 KB = 114 KB: 233472 // 116736 = 2 exactly
    pytest.param("sm_90", 256, 32, 113 * KB, 2, "shared memory", id="sm_90-shared-two-fill-228-kb"),
    pytest.param("sm_90", 256, 32, 113 * KB + 1, 1, "shared memory", id="sm_90-shared-past-two"),
    # 227 KB, the most a block may use: with the 1 KB it is all 228 KB
    pytest.param("sm_90", 128, 32, 232448, 1, "shared memory", id="sm_90-shared-per-block-max"),
    pytest.param("sm_90", 128, 32, 232449, 0, "shared memory", id="sm_90-shared-past-per-block-max"),
    # 3 warps a block: 64 // 3 = 21 (registers: 65536 // 1536 = 42)
    pytest.param("sm_90", 96, 16, 0, 21, "warps", id="sm_90-warps-3-a-block"),
    # a thread more is 4 warps: 64 // 4 = 16 (registers: 32)
    pytest.param("sm_90", 97, 16, 0, 16, "warps", id="sm_90-warps-4-a-block"),
    pytest.param("sm_90", 32, 16, 0, 32, "blocks", id="sm_90-blocks"),
    pytest.param("sm_90", 64, 16, 0, 32, "warps and blocks", id="sm_90-warps-and-blocks"),
]

WARPS_PER_SM = {"sm_80": 64, "sm_86": 48, "sm_89": 48, "sm_90": 64}


@pytest.mark.parametrize("arch, threads, registers, shared, blocks, limited_by", CASES)
def test_blocks_per_sm_are_the_smallest_limit_of_the_architecture(arch, threads, registers, shared, blocks,
                                                                  limited_by):
    found = occupancy(arch, threads, registers, shared)
    warps_per_block = -(-threads // 32)
    assert (found.blocks, found.limited_by) == (blocks, limited_by)
    assert (found.warps, found.of_warps) == (blocks * warps_per_block, WARPS_PER_SM[arch])


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_a_block_of_the_most_shared_memory_its_architecture_allows_fits_once_and_a_byte_more_never(arch):
    # the architecture's own figure, as a caller reading the table would pass it
    most = ARCHS[arch].shared_per_block
    assert occupancy(arch, 128, 32, most).blocks == 1
    assert occupancy(arch, 128, 32, most + 1).blocks == 0


def test_the_counts_are_whole_numbers_in_the_words():
    # sm_90, 3 warps a block: 64 // 3 = 21 blocks, 63 warps
    found = occupancy("sm_90", 96, 16, 0)
    assert found.words() == "21 blocks (63 of 64 warps) per SM, limited by warps"
    assert type(found.blocks) is int and type(found.warps) is int
    assert found.fraction == pytest.approx(63 / 64)


def test_a_kernel_of_no_registers_is_given_the_smallest_allocation():
    # ptxas may report 0 registers for a kernel that does nothing: still a unit of 256 a warp, as 8 a thread
    assert occupancy("sm_90", 256, 0, 0) == occupancy("sm_90", 256, 8, 0)
    assert occupancy("sm_90", 1024, 0, 0) == Occupancy(2, 64, "warps", 64)  # registers would allow 8


def test_the_architectures_limits_and_an_occupancy_are_values_that_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ARCHS["sm_90"].threads = 4096
    found = occupancy("sm_90", 256, 32, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.blocks = 9
    # equal occupancies are one key: a card may count launches by their occupancy
    assert len({found, occupancy("sm_90", 256, 32, 0), occupancy("sm_90", 256, 33, 0)}) == 2
    assert len({ARCHS["sm_86"], ARCHS["sm_89"], ARCHS["sm_86"]}) == 2


def test_occupancy_rounds_registers_to_eight_a_thread_and_names_every_tied_limit():
    # 256 threads, 32 registers: 8 warps a block of 1024 registers each, 65536 // 8192 = 8 blocks, as many as the
    # 64 warps allow
    full = occupancy("sm_90", 256, 32, 0)
    assert (full.blocks, full.warps, full.limited_by, full.of_warps) == (8, 64, "registers and warps", 64)
    assert full.fraction == 1.0 and full.words() == "8 blocks (64 of 64 warps) per SM, limited by registers and warps"
    # 33 registers are 40 a thread: 1280 a warp, 65536 // 10240 = 6 blocks
    assert (occupancy("sm_90", 256, 33, 0).blocks, occupancy("sm_90", 256, 33, 0).limited_by) == (6, "registers")
    assert occupancy("sm_90", 256, 40, 0).blocks == 6 and occupancy("sm_90", 256, 41, 0).blocks == 5
    assert occupancy("sm_90", 256, 64, 0).fraction == 0.5
    # 33 threads are two warps; sm_86's 48 warps hold 24 such blocks, its 16 blocks limit them
    small = occupancy("sm_86", 33, 16, 0)
    assert (small.blocks, small.warps, small.limited_by, small.of_warps) == (16, 32, "blocks", 48)
    assert occupancy("sm_86", 256, 16, 0).blocks == 6 and occupancy("sm_86", 256, 16, 0).limited_by == "warps"


def test_occupancy_refuses_an_unknown_arch_a_block_without_threads_and_negative_counts():
    with pytest.raises(ValueError, match=r"^no occupancy limits for 'sm_70'; known: sm_80, sm_86, sm_89, sm_90$"):
        occupancy("sm_70", 256, 32, 0)
    with pytest.raises(ValueError, match=r"^a block needs threads, got 0$"):
        occupancy("sm_90", 0, 32, 0)
    assert occupancy("sm_90", 1, 32, 0).warps == 32  # one thread is one warp: the 32-block limit
    # a negative count would give negative blocks (or divide by zero at -1024 shared bytes): refused, naming both
    for registers, shared in ((-1, 0), (32, -1), (32, -1024)):
        with pytest.raises(ValueError, match=rf"^registers and shared bytes are counts, got {registers} registers and "
                                             rf"{shared} shared bytes$"):
            occupancy("sm_90", 256, registers, shared)
    assert occupancy("sm_90", 256, 0, 0).blocks == 8  # none of either is a count


def test_occupancy_follows_the_calculators_rules():
    # tiled32: 1024 threads of 32 registers: two blocks, as many as the warps allow
    tiled = occupancy("sm_90", 1024, 32, 8192)
    assert (tiled.blocks, tiled.warps, tiled.limited_by) == (2, 64, "registers and warps")
    # warptile_128x256: 256 threads of 245 registers (248 a thread, 7936 a warp): one block
    assert occupancy("sm_90", 256, 245, 49664).words() == "1 blocks (8 of 64 warps) per SM, limited by registers"
    # 120 KB a block: one of them in sm_90's 228 KB; 170 KB is more than sm_80 gives a block (163 KB): none
    assert occupancy("sm_90", 1024, 32, 120 * 1024).limited_by == "shared memory"
    assert occupancy("sm_80", 256, 32, 170 * 1024).blocks == 0
    assert occupancy("sm_90", 256, 16, 0).limited_by == "warps"  # 8 blocks of 8 warps; registers would allow 16
    with pytest.raises(ValueError, match="no occupancy limits for 'sm_70'"):
        occupancy("sm_70", 256, 32, 0)


def test_sm_89_gives_a_block_at_most_99_kb_of_shared_memory():
    assert occupancy("sm_89", 128, 32, 101376).blocks == 1 and occupancy("sm_89", 128, 32, 101377).blocks == 0


def test_shared_memory_is_given_in_128_byte_units_with_the_systems_kilobyte():
    # 56 KB + 1 KB reserved = 57 KB exactly, four of them in sm_90's 228 KB (the occupancy calculator's)
    assert occupancy("sm_90", 128, 32, 56 * 1024).blocks == 4
    assert occupancy("sm_90", 128, 32, 56 * 1024 + 1).blocks == 3  # one byte more: another 128-byte unit
