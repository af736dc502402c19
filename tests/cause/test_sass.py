"""src/kernelwatch/cause/sass.py on the CPU: where nvdisasm is found, how a cubin is handed to it and its listing read
(a fake nvdisasm, a shell script, stands in for the real one), and the histogram of instruction classes."""

from __future__ import annotations

import struct
from collections import Counter

import pytest

from kernels.compile import BASE_OPTIONS, define_options, load_source
from kernels.registry import MATMUL_KERNELS
from kernelwatch.cause import sass

LISTING = """\
\t.section\t.text.k,"ax",@progbits
        /*0000*/                   FFMA R1, R2, R3, R4 ;
        /*0010*/                   EXIT ;
"""


def _executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def fresh_caches():
    """nvdisasm's location and the opcodes of each cubin are kept per process: start and end without them."""
    sass.nvdisasm.cache_clear()
    sass._opcodes.cache_clear()
    yield
    sass.nvdisasm.cache_clear()
    sass._opcodes.cache_clear()


@pytest.fixture
def nowhere(monkeypatch, tmp_path, fresh_caches):
    """No nvdisasm named, none in a wheel, on PATH nor under CUDA_HOME: each test puts one where it looks."""
    monkeypatch.delenv(sass.ENV, raising=False)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setattr(sass.sys, "path", [])
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return tmp_path


def test_the_wheels_nvdisasm_on_sys_path_comes_before_one_on_path(nowhere, monkeypatch):
    wheel = _executable(nowhere / "site" / "nvidia" / "cu13" / "bin" / "nvdisasm", "#!/bin/sh\n")
    _executable(nowhere / "bin" / "nvdisasm", "#!/bin/sh\n")
    monkeypatch.setattr(sass.sys, "path", [str(nowhere / "missing"), str(nowhere / "site")])
    monkeypatch.setenv("PATH", str(nowhere / "bin"))
    assert sass.nvdisasm() == str(wheel)


def test_the_toolkits_nvdisasm_under_cuda_home_is_found_when_nothing_else_is(nowhere, monkeypatch):
    toolkit = _executable(nowhere / "cuda" / "bin" / "nvdisasm", "#!/bin/sh\n")
    monkeypatch.setenv("CUDA_HOME", str(nowhere / "cuda"))
    assert sass.nvdisasm() == str(toolkit)


def _fake_nvdisasm(monkeypatch, folder, body):
    """An nvdisasm that logs each run to `runs` and then does `body` (a shell script's lines)."""
    tool = _executable(folder / "nvdisasm", f'#!/bin/sh\necho run >> "{folder / "runs"}"\n{body}\n')
    monkeypatch.setenv(sass.ENV, str(tool))
    return lambda: len((folder / "runs").read_text().splitlines()) if (folder / "runs").exists() else 0


def test_a_cubin_is_disassembled_once_a_process_however_often_its_opcodes_are_asked_for(
        monkeypatch, tmp_path, fresh_caches):
    (tmp_path / "listing.txt").write_text(LISTING)
    runs = _fake_nvdisasm(monkeypatch, tmp_path, f'cat "{tmp_path / "listing.txt"}"')
    assert sass.opcodes(b"cubin") == sass.opcodes(b"cubin") == ["FFMA", "EXIT"]
    assert sass.histogram(b"cubin") == Counter({"FFMA": 1, "branch": 1, "all": 2})
    assert runs() == 1
    sass.opcodes(b"cubin", "k")  # another function of it, or another cubin: another run
    sass.opcodes(b"another cubin")
    assert runs() == 3


def test_the_opcodes_of_the_64_cubins_asked_for_last_are_kept_and_an_older_ones_are_not(
        monkeypatch, tmp_path, fresh_caches):
    (tmp_path / "listing.txt").write_text(LISTING)
    runs = _fake_nvdisasm(monkeypatch, tmp_path, f'cat "{tmp_path / "listing.txt"}"')
    cubins = [b"cubin %d" % i for i in range(65)]
    for cubin in cubins[:64]:
        sass.opcodes(cubin)
    sass.opcodes(cubins[0])  # the oldest of 64: still kept (and now the newest)
    assert runs() == 64
    sass.opcodes(cubins[64])  # a 65th: the least recently asked for (cubin 1) gives way
    sass.opcodes(cubins[2])
    assert runs() == 65
    sass.opcodes(cubins[1])
    assert runs() == 66


def test_an_nvdisasm_killed_by_a_signal_is_an_error_not_an_empty_listing(monkeypatch, tmp_path, fresh_caches):
    _fake_nvdisasm(monkeypatch, tmp_path, "kill -SEGV $$")
    with pytest.raises(RuntimeError, match="^nvdisasm could not read the cubin: $"):
        sass.opcodes(b"cubin")


def test_nvdisasms_words_are_cut_to_300_characters_in_the_error(monkeypatch, tmp_path, fresh_caches):
    _fake_nvdisasm(monkeypatch, tmp_path, "printf '%0400d' 0 | tr 0 x >&2; exit 1")
    with pytest.raises(RuntimeError) as raised:
        sass.opcodes(b"cubin")
    assert str(raised.value) == "nvdisasm could not read the cubin: " + "x" * 300


def _elf_header(magic: bytes, size: int) -> bytes:
    """`size` bytes beginning with `magic`, whose program headers (two of 56 bytes at 64) end at 176."""
    header = bytearray(size)
    header[:4] = magic
    struct.pack_into("<Q", header, 0x20, 64)
    struct.pack_into("<HH", header, 0x36, 56, 2)
    return bytes(header)


def test_every_instruction_counts_towards_all_those_of_no_class_too(monkeypatch):
    monkeypatch.setattr(sass, "opcodes", lambda cubin, function=None: ["NOP", "FFMA", "CCTL.IVALL", "EXIT"])
    assert sass.histogram(b"cubin") == Counter({"other": 2, "FFMA": 1, "branch": 1, "all": 4})


@pytest.mark.parametrize("opcode, kind, width", [
    ("FFMA", "FFMA", 32), ("LDG.E.128.CONSTANT", "LDG", 128), ("LDS.64", "LDS", 64), ("STS.128", "STS", 128),
    ("BAR.SYNC.DEFER_BLOCKING", "BAR", 32), ("BRA", "branch", 32), ("IMAD.WIDE.U32", "integer", 32),
    ("LDL.LU", "LDL/STL (local)", 32), ("STG.E.U8", "STG", 8), ("I2F.U32", "conversion", 32), ("NOP", "other", 32),
    # a base named in a class is that class's, though it begins with another class's (LDG, SHF): these were
    # counted as LDG and integer until a mutant (len(prefix) > 3) showed the prefix rule deciding them
    ("LDGSTS.E.BYPASS.128", "LDC/LDGSTS", 128), ("LDGDEPBAR", "LDC/LDGSTS", 32), ("SHFL.BFLY", "predicate/move", 32),
    ("F2FP.BF16.F32.PACK_AB", "conversion", 32),  # a variant of a named base still falls into its class
])
def test_each_opcode_falls_into_its_class_with_its_width(opcode, kind, width):
    assert sass.class_of(opcode) == kind and sass.width_of(opcode) == width


def test_a_cubin_one_byte_short_is_padded_to_its_program_headers():
    entry = MATMUL_KERNELS["tiled32"]
    from kernelwatch.cause.static import compiled

    cubin, _ = compiled(load_source(entry.source), (*BASE_OPTIONS, *define_options(entry.defines)), "sm_90", "t.cu")
    whole = sass.padded(cubin)
    assert len(whole) >= len(cubin) and sass.padded(whole) == whole
    assert sass.padded(b"not an ELF") == b"not an ELF"
    # whatever bytes stand where an ELF header's program headers would be: not an ELF, not padded
    below_magic = bytearray(64)  # its first bytes sort below b"\x7fELF"
    struct.pack_into("<Q", below_magic, 0x20, 0x100)
    struct.pack_into("<HH", below_magic, 0x36, 56, 1)
    assert sass.padded(bytes(below_magic)) == bytes(below_magic)


def test_without_nvdisasm_the_error_says_where_to_get_it(monkeypatch, tmp_path):
    sass.nvdisasm.cache_clear()
    monkeypatch.setenv(sass.ENV, str(tmp_path / "none"))
    monkeypatch.setattr(sass.sys, "path", [str(tmp_path)])
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.setattr(sass.Path, "is_file", lambda self: False)
    try:
        with pytest.raises(sass.DisassemblerMissing, match="install the nvidia-cuda-nvdisasm wheel"):
            sass.nvdisasm()
    finally:
        sass.nvdisasm.cache_clear()


SECTIONS = """\
\t.section\t.text.k,"ax",@progbits
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/              @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0020*/                   LDS.U16 R8, [R9] ;
\t.section\t.text.$k$helper,"ax",@progbits
        /*0000*/                   FFMA R1, R2, R3, R4 ;
\t.section\t.text.other,"ax",@progbits
        /*0000*/                   FFMA R1, R2, R3, R4 ;
        /*0010*/                   EXIT ;
"""


@pytest.fixture
def fake_nvdisasm(monkeypatch, tmp_path, fresh_caches):
    listing = tmp_path / "listing.txt"
    listing.write_text(SECTIONS)
    tool = tmp_path / "nvdisasm"
    tool.write_text(f'#!/bin/sh\ncase "$(head -c 3 "$2")" in NUL*) echo "bad cubin" >&2; exit 2;; esac\ncat {listing}\n')
    tool.chmod(0o755)
    monkeypatch.setenv(sass.ENV, str(tool))
    sass.nvdisasm.cache_clear()
    yield
    sass.nvdisasm.cache_clear()


def test_a_functions_opcodes_are_its_sections_and_its_subroutines_and_the_histogram_counts_widths(fake_nvdisasm):
    assert sass.opcodes(b"cubin") == ["MOV", "LDG.E.128", "LDS.U16", "FFMA", "FFMA", "EXIT"]
    assert sass.opcodes(b"cubin", "k") == ["MOV", "LDG.E.128", "LDS.U16", "FFMA"]
    assert sass.opcodes(b"cubin", "other") == ["FFMA", "EXIT"]
    assert sass.histogram(b"cubin", "k") == Counter({"predicate/move": 1, "LDG": 1, "LDG.128": 1, "LDS": 1,
                                                     "LDS.16": 1, "FFMA": 1, "all": 4})


def test_a_cubin_nvdisasm_refuses_is_an_error_with_its_words(fake_nvdisasm):
    with pytest.raises(RuntimeError, match=r"^nvdisasm could not read the cubin: bad cubin$"):
        sass.opcodes(b"NUL and the rest")


def test_a_cubin_is_padded_to_the_end_of_its_program_headers_and_a_short_one_left_alone():
    import struct

    header = bytearray(64)
    header[:4] = b"\x7fELF"
    struct.pack_into("<Q", header, 0x20, 64)  # program headers at 64: two of 56 bytes end at 176
    struct.pack_into("<HH", header, 0x36, 56, 2)
    assert sass.padded(bytes(header)) == bytes(header) + b"\0" * 112
    assert sass.padded(bytes(header) + b"\1" * 200) == bytes(header) + b"\1" * 200  # longer already
    assert sass.padded(b"\x7fELF" + b"\0" * 59) == b"\x7fELF" + b"\0" * 59  # 63 bytes: no header to read
    png = _elf_header(b"\x89PNG", 64)  # program headers where an ELF's would be, but its first bytes sort above
    assert sass.padded(png) == png
    short = _elf_header(b"\x7fELF", 63)  # a byte short of an ELF header: its fields are not to be trusted
    assert sass.padded(short) == short
    assert (sass.width_of("LDG.E.S16"), sass.width_of("LDG.E.S8"), sass.width_of("LD.E.64")) == (16, 8, 64)
    assert sass.class_of("LD.E.64") == "LDG" and sass.class_of("HGMMA.64x128x16.F32") == "MMA"


def test_a_local_memory_instruction_is_counted_under_its_class_and_its_width(monkeypatch):
    monkeypatch.setattr(sass, "opcodes", lambda cubin, function=None: ["STL.64", "LDL", "FFMA"])
    assert sass.histogram(b"cubin") == Counter({"LDL/STL (local)": 2, "LDL/STL.64": 1, "LDL/STL.32": 1, "FFMA": 1,
                                                "all": 3})
