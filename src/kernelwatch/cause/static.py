"""The static half of a cause card: what a kernel's build is, read from NVRTC's cubin and ptxas's report.

`static_profile(source_text, options, arch, function, launch)` compiles the source (NVRTC, with
ptxas's resource report, no GPU needed) and returns a `StaticProfile`: registers per thread, spill
stores and loads, stack (local memory), static and dynamic shared memory, constant bank bytes, named
barriers, the theoretical occupancy of the launch (occupancy.py), and the SASS by instruction class
(sass.py). `launch` is the build's launch text as the project's kernel library writes it
(a build's `launch`, src/kernelwatch/ab/library.py: "grid=(8, 8, 1) block=(256, 1) shared=16384 ..."):
the block's threads and its dynamic shared memory are read from it.
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections import Counter
from dataclasses import dataclass, field

from kernelwatch.ab import identity
from kernelwatch.cause.occupancy import Occupancy, occupancy
from kernelwatch.cause.sass import histogram

_FUNCTION = re.compile(r"Compiling entry function '([^']+)'")
_REGISTERS = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_BLOCK = re.compile(r"block=\((\d+)(?:, (\d+))?(?:, (\d+))?\)")
_SHARED = re.compile(r"shared=(\d+)")


@dataclass(frozen=True)
class StaticProfile:
    """One kernel's build for one architecture and launch."""

    function: str
    arch: str
    registers: int
    spill_stores: int  # bytes
    spill_loads: int
    stack_bytes: int  # local memory: the stack frame
    static_shared: int
    dynamic_shared: int
    constant_bytes: int
    barriers: int  # named barriers the kernel uses
    threads: int  # per block
    occupancy: Occupancy
    sass: Counter = field(compare=False, repr=False)

    def figures(self) -> dict[str, float]:
        """Every figure of the card's table, by name (the SASS classes as "SASS <class>")."""
        values = {"registers per thread": self.registers, "spill stores (bytes)": self.spill_stores,
                  "spill loads (bytes)": self.spill_loads, "local memory (stack bytes)": self.stack_bytes,
                  "static shared memory (bytes)": self.static_shared,
                  "dynamic shared memory (bytes)": self.dynamic_shared,
                  "constant bank (bytes)": self.constant_bytes, "threads per block": self.threads,
                  "blocks per SM": self.occupancy.blocks, "occupancy (warps per SM)": self.occupancy.warps}
        values.update({f"SASS {name}": count for name, count in sorted(self.sass.items())})
        return values


def launch_shape(launch: str) -> tuple[int, int]:
    """(threads per block, dynamic shared bytes) of a launch text; ValueError where it names no block."""
    block = _BLOCK.search(launch or "")
    if block is None:
        raise ValueError(f"the launch {launch!r} names no block=(x, y): no occupancy can be said")
    threads = math.prod(int(part) for part in block.groups() if part)
    shared = _SHARED.search(launch)
    return threads, int(shared.group(1)) if shared else 0


@functools.lru_cache(maxsize=128)
def compiled(source_text: str, options: tuple[str, ...], arch: str, name: str) -> tuple[bytes, str]:
    """(cubin, ptxas's report) of the source for `arch`; RuntimeError with NVRTC's log where it fails."""
    return identity.ptxas_report(source_text, name, options, arch)


def _report_of(log: str, function: str) -> dict[str, int]:
    """ptxas's figures for one entry function of its report."""
    found: dict[str, int] = {}
    current = None
    for line in log.splitlines():
        if (entry := _FUNCTION.search(line)) is not None:
            current = entry.group(1)
            continue
        if current != function:
            continue
        if (spills := _SPILLS.search(line)) is not None:
            found.update(stack=int(spills.group(1)), stores=int(spills.group(2)), loads=int(spills.group(3)))
        if (registers := _REGISTERS.search(line)) is not None:
            found["registers"] = int(registers.group(1))
            barriers, smem = _BARRIERS.search(line), _SMEM.search(line)
            found["barriers"] = int(barriers.group(1)) if barriers else 0
            found["smem"] = int(smem.group(1)) if smem else 0
    if "registers" not in found:
        named = sorted(set(_FUNCTION.findall(log)))
        what = (f"it names {', '.join(map(repr, named))}" if named else
                f"NVRTC's log: {log.strip()[:200]!r}" if log.strip() else "NVRTC's log is empty")
        raise ValueError(f"ptxas's report names no entry function {function!r} ({what})")
    return found


def _constant_bytes(cubin: bytes, function: str) -> int:
    """The constant banks the kernel reads: its own (.nv.constant0.<function>: its parameters) and the
    file's (__constant__ data)."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(cubin))
    total = 0
    for section in elf.iter_sections():
        name = section.name
        if name.startswith(".nv.constant") and (name.endswith(f".{function}") or name.count(".") == 2):
            total += section["sh_size"]
    return total


def static_profile(source_text: str, options, arch: str, function: str, launch: str,
                   name: str = "kernel.cu") -> StaticProfile:
    """The `StaticProfile` of `function` in `source_text` built for `arch` with `options`, as `launch` runs it."""
    cubin, log = compiled(source_text, tuple(options), arch, name)
    report = _report_of(log, function)
    threads, dynamic_shared = launch_shape(launch)
    shared = report["smem"] + dynamic_shared
    return StaticProfile(function, arch, report["registers"], report.get("stores", 0), report.get("loads", 0),
                         report.get("stack", 0), report["smem"], dynamic_shared, _constant_bytes(cubin, function),
                         report["barriers"], threads, occupancy(arch, threads, report["registers"], shared),
                         histogram(cubin, function))
