"""harness/cause/sass.py on the CPU: where nvdisasm is found, how a cubin is handed to it and its listing read
(a fake nvdisasm, a shell script, stands in for the real one), and the histogram of instruction classes."""

from __future__ import annotations

import struct
from collections import Counter

import pytest

from harness.cause import sass

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


def test_an_elf_is_padded_to_its_program_headers_and_a_file_that_is_no_elf_is_left_alone():
    assert sass.padded(_elf_header(b"\x7fELF", 64)) == _elf_header(b"\x7fELF", 64) + b"\0" * 112
    png = _elf_header(b"\x89PNG", 64)  # its first bytes sort above an ELF's
    assert sass.padded(png) == png
    short = _elf_header(b"\x7fELF", 63)  # a byte short of an ELF header: its fields are not to be trusted
    assert sass.padded(short) == short


def test_every_instruction_counts_towards_all_those_of_no_class_too(monkeypatch):
    monkeypatch.setattr(sass, "opcodes", lambda cubin, function=None: ["NOP", "FFMA", "CCTL.IVALL", "EXIT"])
    assert sass.histogram(b"cubin") == Counter({"other": 2, "FFMA": 1, "branch": 1, "all": 4})
