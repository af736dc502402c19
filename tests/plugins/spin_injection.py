"""Test-only: how tests/plugins/slowdown.py makes a case slower, and the search for by how much.

Two ways, the first wherever it applies:

* **Inside the kernel** (the suite's own kernels): `SlowedKernels` is a copy of the
  `kernels` package whose CUDA sources begin every `__global__` function with a
  spin of `SPIN_VARIABLE` cycles, a `__constant__` variable set per case (0 until
  then: no spin). The case is prepared again from that copy through `same_case_in`, the
  interface `--kernelwatch-compare-ref` prepares a base side with: the same operands and
  launch, a slower kernel. Every thread waits, so any slowdown can be had,
  however short the case: that is what a regression in a kernel looks like.
* **After the case** (a library's kernel, cuBLAS or CuPy's add, or a plain run):
  a one-thread spin kernel appended on the same stream (maintainers/support/spin_kernel.py). Appending a kernel costs
  3.5-5.1 µs by itself under CUPTI's KERNEL kind (docs/method.md#spin-append-cost), so a case under
  about 170 µs gets more than 3% this way: the least it can.

How many cycles give the slowdown is measured, not assumed (`calibrate`): a spin
in every block adds its time once per wave of blocks, less where the kernel hides
it behind memory traffic, and an appended kernel adds a gap of its own. The
search measures the slowed case at a first guess and closes in on the target
between the largest spin found too short and the smallest found too long.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SPIN_VARIABLE = "kernel_suite_test_spin_cycles"
# In constant memory, read uniformly through the constant cache. The loop is PTX in an
# opaque asm statement, and nothing branches around it (at 0 cycles it reads the clock twice
# and falls through): a C++ loop, or even an empty `if` on the variable, changed how NVVM
# compiled the rest of some kernels (blocktile_1d from 48 registers to 40 and a 16-byte
# stack frame, blocktile_2d to 148 registers), so the copy was slower before it spun at all.
# tests/plugins/test_spin_injection.py checks that every kernel keeps its registers and stack.
_DECLARATION = f'extern "C" {{ __constant__ long long {SPIN_VARIABLE} = 0; }}\n'
_PROLOGUE = ('\n    asm volatile("{ .reg .s64 t0, t1; .reg .pred p; mov.u64 t0, %%clock64;\\n"  // test-only spin\n'
             '                 "SPIN: mov.u64 t1, %%clock64; sub.s64 t1, t1, t0; setp.lt.s64 p, t1, %0; "\n'
             '                 "@p bra SPIN; }" :: "l"(' + SPIN_VARIABLE + '));\n')
_GLOBAL = re.compile(r"\b__global__\b")
SLOWED_ALIAS = "kernel_suite_slowed_kernels"
# A bracket whose ends are more than this many times apart is narrowed in log space: a first
# guess sized for one wave of blocks overshoots a kernel of 60 waves by 60x, and a memory-bound
# kernel hides short spins, so interpolating there creeps up from below one try at a time.
WIDE_BRACKET = 8


def with_spin_prologue(text: str) -> tuple[str, int]:
    """`text` with the spin at the start of every `__global__` function's body, and how many it got.

    A function's body is the first `{` after `__global__` outside parentheses
    (`__launch_bounds__(...)` and the parameter list come first); a declaration,
    which meets `;` first, is left alone.
    """
    pieces, copied, patched = [], 0, 0
    for match in _GLOBAL.finditer(text):
        if match.start() < copied:
            continue
        depth, i = 0, match.end()
        while i < len(text) and not (depth == 0 and text[i] in "{;"):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if i == len(text) or text[i] == ";":
            continue
        pieces += [text[copied:i + 1], _PROLOGUE]
        copied = i + 1
        patched += 1
    pieces.append(text[copied:])
    return _DECLARATION + "".join(pieces), patched


class SlowedKernels:
    """A copy of the `kernels` package, in a temporary folder, whose kernels start with a spin."""

    def __init__(self, kernels_dir: Path | None = None):
        from kernelwatch.ab.ref_tree import import_package_as

        if kernels_dir is None:
            import kernels

            kernels_dir = Path(kernels.__file__).resolve().parent
        self._folder = tempfile.TemporaryDirectory(prefix="kernel-suite-slowed-")
        copy = Path(self._folder.name) / "kernels"
        shutil.copytree(kernels_dir, copy, ignore=shutil.ignore_patterns("__pycache__"))
        self.patched: dict[str, int] = {}  # source file -> kernels given the spin
        for source in sorted((copy / "cuda").glob("*.cu")):
            text, self.patched[source.name] = with_spin_prologue(source.read_text())
            source.write_text(text)
        self.package = import_package_as(copy, SLOWED_ALIAS)

    def prepare(self, case):
        """`case` prepared again by the copy: the same operands and launch, kernels that spin."""
        return case.same_case_in(self.package)

    def set_spin(self, slowed_case, cycles: int) -> None:
        """Every kernel of `slowed_case`'s build spins `cycles` SM cycles from now on."""
        import cupy

        build = slowed_case.build()
        module = self.package.compile._module(build.source, build.defines, cupy.cuda.Device().id)
        value = np.array([cycles], np.int64)
        cupy.cuda.Device().synchronize()  # no launch of the old value still running
        # a copy from the host, the way cudaMemcpyToSymbol writes constant memory; synchronous
        cupy.cuda.runtime.memcpy(module.get_global(SPIN_VARIABLE).ptr, value.ctypes.data, value.nbytes,
                                 cupy.cuda.runtime.memcpyHostToDevice)

    def close(self) -> None:
        from kernelwatch.ab.ref_tree import _forget_modules

        _forget_modules(SLOWED_ALIAS)
        self._folder.cleanup()


def slows_inside(case) -> bool:
    """Whether `case` runs a kernel of the suite's own that a slowed copy can prepare."""
    return hasattr(case, "same_case_in") and hasattr(case, "build") and case.build() is not None


@dataclass
class Calibration:
    """The spin found for one case, and the medians that found it."""

    target_s: float
    cycles: int = 0
    median_s: float = 0.0  # the calibration's median at `cycles`
    least: bool = False  # even 0 cycles slows the case past the target: the least slowdown there is
    reached: bool = False  # a try came within the tolerance of the target
    tried: list[tuple[int, float]] = field(default_factory=list)  # (cycles, median) in the order measured


def calibrate(median_at: Callable[[int], float], unslowed_s: float, percent: float, clock_hz: float,
              tolerance: float = 0.003, max_tries: int = 12, first_guess: int | None = None) -> Calibration:
    """The spin (cycles) that makes `median_at(cycles)` `percent` % more than `unslowed_s`.

    `median_at` times the slowed case with a spin of so many cycles. The search
    starts at 0 (a case that is past the target there gets 0: `least`), then at
    `first_guess` if given (the spin an earlier run found), else at what is
    missing times `clock_hz` (exact for an appended spin; a spin in every
    block adds it once per wave of blocks, so more); while no try is too long it scales the longest short one up
    by what is still missing (at most 16x), and once the target is bracketed
    it interpolates between its ends, halving the pull of a side that stayed
    put twice (the Illinois rule: a kernel hides a short spin behind memory
    traffic, so the response bends); where an interpolation fell short and the
    ends are still `WIDE_BRACKET` times apart, it halves the bracket's
    logarithm instead. It stops within `tolerance`
    of the unslowed median or after `max_tries` medians, keeping the closest.
    """
    target = unslowed_s * (1 + percent / 100)
    found = Calibration(target)

    def tried(cycles: int) -> float:
        median = median_at(cycles)
        found.tried.append((cycles, median))
        if not found.tried[1:] or abs(median - target) < abs(found.median_s - target):
            found.cycles, found.median_s = cycles, median
        return median

    low, low_s = 0, tried(0)
    if low_s >= target:
        found.least = True
        return found
    high = high_s = None
    if first_guess is None:
        first_guess = int((target - low_s) * clock_hz)
    cycles, last_side, low_weight, high_weight = max(1, first_guess), None, 1.0, 1.0
    interpolated = False  # whether `cycles` came from interpolating
    while len(found.tried) < max_tries:
        median = tried(cycles)
        if abs(median - target) <= tolerance * unslowed_s:
            found.reached = True
            break
        side = "low" if median < target else "high"
        if side == "low":
            low, low_s, low_weight = cycles, median, 1.0
        else:
            high, high_s, high_weight = cycles, median, 1.0
        if high is None:
            gained = median - found.tried[0][1]
            scale = 16 if gained <= 0 else min(16, max(1.25, (target - found.tried[0][1]) / gained))
            cycles = max(cycles + 1, int(cycles * scale))
            continue
        if side == last_side:  # the other end stayed put twice: pull harder towards it
            if side == "low":
                high_weight /= 2
            else:
                low_weight /= 2
        last_side = side
        if high - low <= 1:
            break
        if interpolated and side == "low" and high > WIDE_BRACKET * max(low, 1):
            # interpolating fell short by orders of magnitude: the kernel hides short spins,
            # so halve the bracket's logarithm instead
            cycles, interpolated = round(math.sqrt(max(low, high / WIDE_BRACKET ** 2) * high)), False
        else:
            low_pull, high_pull = low_weight * (target - low_s), high_weight * (high_s - target)
            cycles, interpolated = low + round((high - low) * low_pull / (low_pull + high_pull)), True
        cycles = min(high - 1, max(low + 1, cycles))
    return found


def spin_unseen(found: Calibration, percent: float) -> bool:
    """Whether the search suggests the timer does not see the spin at all: it neither reached
    the target nor was past it at 0 cycles, and no spin tried added half of `percent` to the
    0-cycle median. (An appended spin kernel's 0-cycle gap may be most of the target: reaching
    it then takes little more, which is no sign of a blind timer.)"""
    if found.least or found.reached:
        return False
    zero_s = found.tried[0][1]
    return max(median for _, median in found.tried) <= zero_s * (1 + percent / 200)
