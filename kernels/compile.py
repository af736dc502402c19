"""Compiling the CUDA sources under kernels/cuda.

Two paths share one source loader:

* `get_function` builds a module for the current device through CuPy's
  `RawModule` (NVRTC, cached by CuPy on disk and here in memory) and returns
  one of its kernels. It needs a CUDA device.
* `compile_report` compiles a source to a cubin for a named architecture with
  NVRTC alone, no device needed, and returns ptxas's resource report
  (registers, shared memory, spills). The CPU tests use it to prove that
  every `.cu` file builds for sm_80 and sm_90 without spilling.

Sources include `common.cuh` by name; the loader splices headers in
textually, so CuPy's cache key (the source text and options) changes whenever
a header does. `#line` directives around each spliced header keep the
compiler's messages at each file's own lines: an error at line 10 of a kernel's
.cu file reads `name.cu(10)`, one in the header `common.cuh(5)`. (They change
no machine code: line tables are only emitted with -lineinfo or -G.)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

CUDA_DIR = Path(__file__).resolve().parent / "cuda"

# No fast-math: the error tolerances in registry.py assume IEEE float32
# arithmetic (fused multiply-add contraction, on by default, is fine: it
# rounds once instead of twice).
BASE_OPTIONS = ("-std=c++17",)

# an #include of a header of this folder, on a line of its own (the line's end is not part of the match)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.MULTILINE)


def cuda_sources() -> list[Path]:
    """Every `.cu` file of the suite, sorted by name."""
    return sorted(CUDA_DIR.glob("*.cu"))


def load_source(name: str) -> str:
    """The text of kernels/cuda/<name> with its local headers spliced in, each between `#line` directives: the
    compiler counts the header's lines as the header's and, after it, the file's own from the line after the
    #include."""
    path = CUDA_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"no CUDA source {name!r} in {CUDA_DIR}")
    text = path.read_text()

    def splice(match: re.Match) -> str:
        header = CUDA_DIR / match.group(1)
        body = header.read_text().replace("#pragma once", "")
        after = text.count("\n", 0, match.start()) + 2  # the #include's own line number, plus one
        return (f"// ---- {match.group(1)} ----\n#line 1 \"{match.group(1)}\"\n{body}\n"
                f"// ---- end {match.group(1)} ----\n#line {after} \"{name}\"")

    return _INCLUDE.sub(splice, text)


_KERNEL = re.compile(r"\b__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")


def kernel_functions(name: str) -> set[str]:
    """The `__global__` functions kernels/cuda/<name> defines, read from its text (no compiler): what a registry
    entry's `function` must be one of."""
    return set(_KERNEL.findall((CUDA_DIR / name).read_text()))


def define_options(defines: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    return tuple(f"-D{key}={value}" for key, value in defines)


@functools.cache
def _module(source: str, defines: tuple[tuple[str, int], ...], device_id: int):
    import cupy

    return cupy.RawModule(
        code=load_source(source),
        options=BASE_OPTIONS + define_options(defines),
        backend="nvrtc",
    )


@dataclass(frozen=True)
class KernelBuild:
    """What a prepared case launches: the build of its CUDA function and the launch itself.

    Two cases with the same build and the same `launch` text run the same
    machine code the same way (src/kernelwatch/ab/against_ref.py compares them across git
    refs without timing them).
    """

    source: str  # file under kernels/cuda
    function: str
    defines: tuple[tuple[str, int], ...]
    launch: str  # grid, block, shared memory, and anything else the host side decides


def get_function(source: str, function: str, defines: tuple[tuple[str, int], ...] = ()):
    """The kernel `function` of `source` built for the current device."""
    import cupy

    return _module(source, defines, cupy.cuda.Device().id).get_function(function)


@dataclass(frozen=True)
class CompileReport:
    """What ptxas said about one source built for one architecture."""

    source: str
    arch: str
    defines: tuple[tuple[str, int], ...]
    cubin_bytes: int
    registers: dict[str, int]  # kernel name -> registers per thread
    spill_stores: int  # bytes, summed over the kernels
    spill_loads: int
    stack_frame: int
    log: str


_FUNCTION = re.compile(r"Compiling entry function '(\w+)'")
_REGISTERS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas_log(log: str) -> tuple[dict[str, int], int, int, int]:
    """Registers per kernel, and spill stores, spill loads and stack frame in bytes."""
    registers: dict[str, int] = {}
    current = None
    stores = loads = stack = 0
    for line in log.splitlines():
        if m := _FUNCTION.search(line):
            current = m.group(1)
        elif (m := _REGISTERS.search(line)) and current:
            registers[current] = int(m.group(1))
        elif m := _SPILLS.search(line):
            stack += int(m.group(1))
            stores += int(m.group(2))
            loads += int(m.group(3))
    return registers, stores, loads, stack


def _report_options() -> tuple[str, ...]:
    """ptxas's report on, and NVRTC's own cache off where it has one (12.9 on): a compile that hits the cache
    runs no ptxas and leaves the log empty (seen on the H200 hosts' NVRTC 13.0 once a process or a machine
    had built the same program before)."""
    from cupy.cuda import nvrtc

    return ("-Xptxas=-v", "--no-cache") if tuple(nvrtc.getVersion()) >= (12, 9) else ("-Xptxas=-v",)


def ptxas_report(source_text: str, name: str, options, arch: str) -> tuple[bytes, str]:
    """(cubin, ptxas's report) of `source_text` built for `arch` (e.g. "sm_90") with `options`, by NVRTC alone
    (no device needed); RuntimeError carrying NVRTC's log where it does not compile."""
    from cupy.cuda import nvrtc

    program = nvrtc.createProgram(source_text, name, [], [])
    try:
        nvrtc.compileProgram(program, [*options, f"-arch={arch}", *_report_options()])
    except nvrtc.NVRTCError as error:
        log = nvrtc.getProgramLog(program).rstrip("\x00")
        raise RuntimeError(f"{name} ({arch}, options {list(options)}) does not compile:\n{log}") from error
    return nvrtc.getCUBIN(program), nvrtc.getProgramLog(program).rstrip("\x00")


def compile_report(source: str, arch: str, defines: tuple[tuple[str, int], ...] = ()) -> CompileReport:
    """Compile `source` to a cubin for `arch` (e.g. "sm_90") with NVRTC, no device needed.

    Raises RuntimeError carrying NVRTC's log when the source does not compile.
    """
    cubin, log = ptxas_report(load_source(source), source, (*BASE_OPTIONS, *define_options(defines)), arch)
    registers, stores, loads, stack = parse_ptxas_log(log)
    return CompileReport(source, arch, defines, len(cubin), registers, stores, loads, stack, log)
