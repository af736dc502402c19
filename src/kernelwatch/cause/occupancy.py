"""Theoretical occupancy: how many blocks of a launch fit on one multiprocessor, and what limits them.

The CUDA occupancy calculator's rules, for the architectures the suite builds for (NVIDIA's CUDA C++
Programming Guide, "Compute Capabilities"; the Tuning Guides of Ampere and Hopper): warps, blocks,
registers (allocated per warp in units of 256, registers per thread rounded up to a multiple of 8) and
shared memory (the block's static and dynamic bytes plus 1 KB the system reserves per block,
allocated in units of 128 bytes), each a limit; the smallest wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """One architecture's per-multiprocessor resources."""

    threads: int = 2048
    blocks: int = 32
    registers: int = 65536
    register_unit: int = 256  # registers are given to a warp in these units
    shared_bytes: int = 0  # the largest carve-out of shared memory per multiprocessor
    shared_per_block: int = 0  # the most one block may use (opt-in)
    reserved_shared: int = 1024  # the system's per block (compute capability 8.0 on)
    shared_unit: int = 128


ARCHS = {
    "sm_80": Limits(shared_bytes=167936, shared_per_block=166912),  # A100: 164 KB, 163 KB a block
    "sm_86": Limits(threads=1536, blocks=16, shared_bytes=102400, shared_per_block=101376),
    "sm_89": Limits(threads=1536, blocks=24, shared_bytes=102400, shared_per_block=101376),
    "sm_90": Limits(shared_bytes=233472, shared_per_block=232448),  # H100, H200: 228 KB, 227 KB a block
}


@dataclass(frozen=True)
class Occupancy:
    blocks: int  # blocks per multiprocessor (0: the launch does not fit)
    warps: int  # resident warps per multiprocessor
    limited_by: str  # "registers", "shared memory", "warps" or "blocks", or several: "registers and warps"
    of_warps: int  # the architecture's most warps per multiprocessor

    @property
    def fraction(self) -> float:
        return self.warps / self.of_warps

    def words(self) -> str:
        return f"{self.blocks} blocks ({self.warps} of {self.of_warps} warps) per SM, limited by {self.limited_by}"


def occupancy(arch: str, threads_per_block: int, registers_per_thread: int, shared_bytes_per_block: int) -> Occupancy:
    """Blocks of this launch per multiprocessor of `arch` (ValueError for an unknown arch, no threads, or a
    negative count of registers or shared bytes)."""
    if arch not in ARCHS:
        raise ValueError(f"no occupancy limits for {arch!r}; known: {', '.join(sorted(ARCHS))}")
    if threads_per_block < 1:
        raise ValueError(f"a block needs threads, got {threads_per_block}")
    if registers_per_thread < 0 or shared_bytes_per_block < 0:
        raise ValueError(f"registers and shared bytes are counts, got {registers_per_thread} registers and "
                         f"{shared_bytes_per_block} shared bytes")
    limits = ARCHS[arch]
    warps_per_block = math.ceil(threads_per_block / 32)
    per_warp = math.ceil(max(registers_per_thread, 1) * 32 / limits.register_unit) * limits.register_unit
    shared = math.ceil((shared_bytes_per_block + limits.reserved_shared) / limits.shared_unit) * limits.shared_unit
    # in this order where two limits allow the same count: a resource the kernel uses names the cause first
    by = {
        "registers": limits.registers // (per_warp * warps_per_block),
        "shared memory": limits.shared_bytes // shared if shared_bytes_per_block <= limits.shared_per_block else 0,
        "warps": (limits.threads // 32) // warps_per_block,
        "blocks": limits.blocks,
    }
    blocks = min(by.values())
    limited_by = " and ".join(name for name, count in by.items() if count == blocks)
    return Occupancy(blocks, blocks * warps_per_block, limited_by, limits.threads // 32)
