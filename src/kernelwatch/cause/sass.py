"""A kernel's machine code by instruction class: nvdisasm over the cubin NVRTC builds, no GPU needed.

nvdisasm comes from the pip wheel nvidia-cuda-nvdisasm (the suite's environments install it) or a CUDA
toolkit: `$KERNELWATCH_NVDISASM`, else the wheel's `nvidia/cu13/bin/nvdisasm`, else `nvdisasm` on PATH,
else the toolkit's under $CUDA_HOME or /usr/local/cuda. Its text is read line by line: each
instruction's opcode, with its width suffix (.64, .128), counted into a class (`CLASSES`).

CuPy's NVRTC binding returns a cubin one byte short of its program headers (the trailing NUL of a C
string dropped); nvdisasm refuses such a file, so it is padded to the length its headers give.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ENV = "KERNELWATCH_NVDISASM"
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_SECTION = re.compile(r"\.section\s+\.text\.([^,\s]+)")
_WIDTH = re.compile(r"\.(64|128|U8|S8|U16|S16)\b")

# (class, opcode prefixes) in the order a card reads them; the first match wins
CLASSES = (
    ("FFMA", ("FFMA", "HFMA2", "DFMA")),
    ("FADD/FMUL", ("FADD", "FMUL", "HADD2", "HMUL2", "DADD", "DMUL", "FMNMX")),
    ("MMA", ("HMMA", "IMMA", "DMMA", "HGMMA")),
    ("LDG", ("LDG", "LD.")),
    ("STG", ("STG", "ST.")),
    ("LDS", ("LDS", "LDSM")),
    ("STS", ("STS",)),
    ("LDL/STL (local)", ("LDL", "STL")),
    ("LDC/LDGSTS", ("LDC", "LDGSTS", "LDGDEPBAR")),
    ("BAR", ("BAR", "DEPBAR")),
    ("branch", ("BRA", "BRX", "JMP", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK")),
    ("integer", ("IMAD", "IADD", "ISETP", "LEA", "SHF", "LOP", "IABS", "IMNMX", "SEL", "ISCADD", "SGXT", "BMSK")),
    ("conversion", ("I2F", "F2I", "F2F", "I2I", "FRND")),
    ("predicate/move", ("MOV", "PLOP", "PSETP", "P2R", "R2P", "S2R", "CS2R", "S2UR", "ULDC", "UMOV", "SHFL")),
)
MEMORY_CLASSES = ("LDG", "STG", "LDS", "STS", "LDL/STL (local)")


class DisassemblerMissing(RuntimeError):
    """No nvdisasm on this machine."""


@functools.cache
def nvdisasm() -> str:
    """The nvdisasm to run (module docstring); DisassemblerMissing naming where it looked."""
    candidates = [os.environ.get(ENV)]
    for folder in sys.path:
        candidates.append(str(Path(folder) / "nvidia" / "cu13" / "bin" / "nvdisasm"))
    candidates.append(shutil.which("nvdisasm"))
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            candidates.append(str(Path(home) / "bin" / "nvdisasm"))
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise DisassemblerMissing(f"no nvdisasm: set ${ENV}, or install the nvidia-cuda-nvdisasm wheel (tox's "
                              f"environments do), or a CUDA toolkit")


def padded(cubin: bytes) -> bytes:
    """The cubin at the length its ELF header's program headers reach (see the module docstring)."""
    if len(cubin) < 64 or cubin[:4] != b"\x7fELF":
        return cubin
    phoff, = struct.unpack_from("<Q", cubin, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", cubin, 0x36)
    end = phoff + phentsize * phnum
    return cubin + b"\0" * max(0, end - len(cubin))


def opcodes(cubin: bytes, function: str | None = None) -> list[str]:
    """Every instruction's opcode with its modifiers (LDG.E.128, BAR.SYNC.DEFER_BLOCKING), in order.

    With `function`, only that kernel's code (its `.text.<function>` section and the subroutines
    named after it); RuntimeError with nvdisasm's words where it cannot read the cubin.
    """
    return list(_opcodes(cubin, function, nvdisasm()))


@functools.lru_cache(maxsize=64)
def _opcodes(cubin: bytes, function: str | None, tool: str) -> tuple[str, ...]:
    """`opcodes`, once per cubin, function and disassembler in a process: nvdisasm takes most of a static
    card's time (0.4-0.8 s a kernel), and a nightly's cases of one kernel at several shapes share one cubin."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as file:
        file.write(padded(cubin))
        file.flush()
        done = subprocess.run([tool, "-c", file.name], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"nvdisasm could not read the cubin: {(done.stderr or done.stdout).strip()[:300]}")
    found, section = [], None
    for line in done.stdout.splitlines():
        if (header := _SECTION.search(line)) is not None:
            section = header.group(1)
        elif (instruction := _INSTRUCTION.search(line)) is not None:
            if function is None or section in (function, ) or (section or "").startswith(f"${function}$"):
                found.append(instruction.group(1))
    return tuple(found)


def class_of(opcode: str) -> str:
    """The class of an opcode: the one that names its base exactly (LDGSTS, SHFL), else the first whose
    prefix it begins with (a dotted one, LD., or a variant of a named base)."""
    base = opcode.split(".", 1)[0]
    for name, prefixes in CLASSES:
        if any(base == prefix or (prefix.endswith(".") and opcode.startswith(prefix)) for prefix in prefixes):
            return name
    for name, prefixes in CLASSES:
        if any(len(prefix) > 2 and not prefix.endswith(".") and base.startswith(prefix) for prefix in prefixes):
            return name
    return "other"


def width_of(opcode: str) -> int:
    """Bits a memory instruction moves per thread: 32, or its .64/.128 (.U8/.U16: 8, 16)."""
    found = _WIDTH.search(opcode)
    if not found:
        return 32
    text = found.group(1)
    return int(text) if text.isdigit() else int(text[1:])


def histogram(cubin: bytes, function: str | None = None) -> Counter:
    """Instructions per class, and the memory classes also per width ("LDG.128": 16)."""
    counts: Counter = Counter()
    for opcode in opcodes(cubin, function):
        name = class_of(opcode)
        counts[name] += 1
        if name in MEMORY_CLASSES:
            counts[f"{name.split(' ')[0]}.{width_of(opcode)}"] += 1
    counts["all"] = sum(counts[name] for name, _ in CLASSES) + counts["other"]
    return counts
