"""Whether a kernel is the same in two trees, decided from its machine code, without a GPU.

`build_identity` compiles a source with NVRTC to a cubin for a named architecture and hashes
only what decides what runs: the executable sections (`.text.*` and their relocations), the
kernel attribute sections (`.nv.info*`: registers, parameters, stack), the shared and
constant memory the kernels use (`.nv.shared.*` sizes, `.nv.constant*` banks, initialised
globals) and the ELF flags that name the architecture. The whole cubin is not hashed: it
also carries the compiler's command line and version (`.note.nv.tkinfo`), and with
`-lineinfo` the source line table, which moves when a comment is added.

It returns a hex SHA-256 digest. The launch (grid, block, shared memory) is not part of it:
each prepared case's build describes its own (`launch`) and src/kernelwatch/ab/library.py
hashes the two together. Nothing here imports the project's kernel library: the caller passes
the source text and options (the library's `source_of`). `ptxas_report` compiles the same way
with ptxas's resource report, for the cause card.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import struct
from collections.abc import Sequence

from elftools.elf.elffile import ELFFile

_ARCH = re.compile(r"sm_\d+[af]?")
_COMPUTE_CAPABILITY = re.compile(r"\d+\.\d+")
_CODE_PREFIXES = (".text.", ".rela.text.", ".rel.text.")
_MEMORY_PREFIXES = (".nv.shared.", ".nv.constant", ".rela.nv.constant", ".nv.global")
# a kernel's own sections: one of these stems, a dot, and the kernel's name (".text.k", ".nv.constant0.k", ...);
# the file's own (".nv.info", ".nv.constant3", ".nv.global") end in no kernel's name, whatever the kernels are called
_KERNELS_OWN = re.compile(r"(?:(?:\.rela?)?\.text|\.nv\.info|\.nv\.shared|(?:\.rela?)?\.nv\.constant\d+)\.(.+)")

# The file-wide .nv.info is a list of records: a format byte, an attribute byte and two
# bytes that, for format 4, give the length of a payload that follows. These attributes
# (frame size, min stack, CRS stack, max stack, registers) carry (symbol index, value) for
# one kernel: with `function` given, those of other kernels are left out.
_SIZED_RECORD = 4
_PER_KERNEL_ATTRIBUTES = {0x11, 0x12, 0x1E, 0x23, 0x2F}


def arch_of(compute_capability: str) -> str:
    """NVRTC's name of the real architecture of a compute capability: "9.0" -> "sm_90"."""
    if not isinstance(compute_capability, str) or not _COMPUTE_CAPABILITY.fullmatch(compute_capability):
        raise ValueError(f"compute capability must read like '9.0', got {compute_capability!r}")
    return "sm_" + compute_capability.replace(".", "")


def _compile(source_text: str, options: tuple[str, ...], arch: str, name: str, extra=()) -> tuple[bytes, str]:
    """(cubin, NVRTC's log) of the source built for `arch`; RuntimeError carrying the log where it does not compile."""
    from cupy.cuda import nvrtc

    program = nvrtc.createProgram(source_text, name, [], [])
    try:
        nvrtc.compileProgram(program, [*options, f"-arch={arch}", *extra])
    except nvrtc.NVRTCError as error:
        log = nvrtc.getProgramLog(program).rstrip("\x00")
        raise RuntimeError(f"{name} ({arch}, options {list(options)}) does not compile:\n{log}") from error
    return nvrtc.getCUBIN(program), nvrtc.getProgramLog(program).rstrip("\x00")


def _cubin(source_text: str, options: tuple[str, ...], arch: str, name: str) -> bytes:
    return _compile(source_text, options, arch, name)[0]


def _report_options() -> tuple[str, ...]:
    """ptxas's report on, and NVRTC's own cache off where it has one (12.9 on): a compile that hits the cache
    runs no ptxas and leaves the log empty (seen on the H200 hosts' NVRTC 13.0 once a process or a machine
    had built the same program before)."""
    from cupy.cuda import nvrtc

    return ("-Xptxas=-v", "--no-cache") if tuple(nvrtc.getVersion()) >= (12, 9) else ("-Xptxas=-v",)


def ptxas_report(source_text: str, name: str, options, arch: str) -> tuple[bytes, str]:
    """(cubin, ptxas's report) of `source_text` built for `arch` (e.g. "sm_90") with `options`, by NVRTC alone
    (no device needed); RuntimeError carrying NVRTC's log where it does not compile. The cause card's static
    half reads it (src/kernelwatch/cause/static.py)."""
    return _compile(source_text, tuple(options), arch, name, _report_options())


def _kernel_names(elf: ELFFile) -> set[str]:
    """The entry kernels of a cubin: each has its own `.nv.info.<kernel>` section."""
    return {s.name[len(".nv.info."):] for s in elf.iter_sections() if s.name.startswith(".nv.info.")}


def _owner(symbol: str, kernels: set[str]) -> str | None:
    """The kernel a symbol belongs to: the kernel itself, or one of its `$kernel$...` subroutines."""
    for kernel in kernels:
        if symbol == kernel or symbol.startswith(f"${kernel}$"):
            return kernel
    return None


def _file_info_for(data: bytes, symbols, kernels: set[str], function: str) -> bytes:
    """The records of the file-wide .nv.info without other kernels' ones; `function`'s own
    name their symbol instead of its index, which moves when the rest of the file changes."""
    kept = []
    offset = 0
    while offset + 4 <= len(data):
        fmt, attribute, length = struct.unpack_from("<BBH", data, offset)
        end = offset + 4 + (length if fmt == _SIZED_RECORD else 0)
        record = data[offset:end]
        offset = end
        if fmt == _SIZED_RECORD and attribute in _PER_KERNEL_ATTRIBUTES and length == 8:
            symbol = symbols.get_symbol(struct.unpack_from("<I", record, 4)[0]).name
            owner = _owner(symbol, kernels)
            if owner not in (None, function):
                continue
            if owner == function:
                record = record[:4] + symbol.encode() + b"\0" + record[8:]
        kept.append(record)
    return b"".join(kept)


def _selected_sections(elf: ELFFile, function: str | None):
    """The sections that decide what runs, for the whole file or for one of its kernels."""
    kernels = _kernel_names(elf)
    if function is not None and function not in kernels:
        raise ValueError(f"no kernel {function!r} in the cubin; it has {sorted(kernels)}")
    others = kernels - {function} if function is not None else set()
    for section in elf.iter_sections():
        name = section.name
        wanted = name.startswith(_CODE_PREFIXES + _MEMORY_PREFIXES + (".nv.info.",)) or name == ".nv.info"
        own = _KERNELS_OWN.fullmatch(name)
        if wanted and not (own and own.group(1) in others):
            yield section


def _identity_of_cubin(cubin: bytes, function: str | None) -> str:
    elf = ELFFile(io.BytesIO(cubin))
    digest = hashlib.sha256()
    digest.update(struct.pack("<I", elf.header["e_flags"]))
    for section in _selected_sections(elf, function):
        name = section.name
        if function is not None and name == ".nv.info":
            data = _file_info_for(section.data(), elf.get_section_by_name(".symtab"), _kernel_names(elf), function)
        elif section["sh_type"] == "SHT_NOBITS":
            data = b""  # no bytes in the file: only its size counts
        else:
            data = section.data()
        digest.update(f"{name}\0{section['sh_type']}\0{section['sh_size']}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


@functools.lru_cache(maxsize=256)
def _cached_identity(source_text: str, options: tuple[str, ...], arch: str, name: str,
                     function: str | None) -> str:
    return _identity_of_cubin(_cubin(source_text, options, arch, name), function)


def build_identity(source_text: str, options: Sequence[str], arch: str, name: str = "kernel.cu", *,
                   function: str | None = None) -> str:
    """Hex SHA-256 of the machine code NVRTC builds from `source_text` for `arch` (e.g. "sm_90").

    `options` are NVRTC's (`-std=c++17`, `-DTILE=16`, ...; `-arch` is added here). With
    `function` (a kernel's symbol name, as declared `extern "C"`), only that kernel's code
    and attributes plus what the file's kernels share count, so that editing one kernel of
    a file leaves its neighbours' identities alone. Adding or removing a kernel in the file
    may renumber symbols and change the neighbours' identities too: they are then timed,
    never wrongly skipped. Results are cached per process.

    Raises RuntimeError with NVRTC's log when the source does not compile, ValueError for
    an architecture that is not a real one (sm_80, sm_90a, ...) or an unknown `function`.
    """
    if isinstance(options, str):
        raise ValueError(f"options must be a sequence of NVRTC options, got the string {options!r}")
    if not isinstance(arch, str) or not _ARCH.fullmatch(arch):
        raise ValueError(f"arch must name a real architecture such as 'sm_90', got {arch!r}")
    return _cached_identity(source_text, tuple(options), arch, name, function)
