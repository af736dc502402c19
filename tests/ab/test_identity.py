"""kernelwatch.ab.identity: a kernel's identity from its machine code, launch and the data it is built with."""

import importlib.metadata
import io
import re
import struct
from types import SimpleNamespace

import pytest
from elftools.elf.elffile import ELFFile

from kernels.compile import BASE_OPTIONS, define_options, load_source
from kernels.registry import MATMUL_KERNELS
from kernelwatch.ab import identity as kernel_identity
from kernelwatch.ab.identity import arch_of, build_identity

SCALE_KERNEL = r"""
#define SCALED(x) ((x) * SCALE + OFFSET)
extern "C" __global__ void scale(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = SCALED(in[i]);
}
"""

# The same tokens with other spacing and blank lines, and a comment in the macro's line.
SCALE_KERNEL_RESPACED = r"""

#define   SCALED(x)   ( (x)  *  SCALE  +  OFFSET )   // the operation
extern "C"
__global__ void scale( float *out , const float *in , int n )
{

        int i = blockIdx.x*blockDim.x+threadIdx.x;


        if ( i < n )   out[ i ] = SCALED( in[ i ] );
}
"""

TWO_KERNELS = r"""
extern "C" __global__ void first(float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = out[i] * 2.0f;
}
extern "C" __global__ void second(float *out, int n) {
    float acc[UNROLL];
    for (int k = 0; k < UNROLL; ++k) acc[k] = out[threadIdx.x + k * n];
    float total = 0.0f;
    for (int k = 0; k < UNROLL; ++k) total += acc[k] * acc[UNROLL - 1 - k];
    out[threadIdx.x] = total;
}
"""

OPTIONS = ("-std=c++17", "-DSCALE=3.0f", "-DOFFSET=1.0f")


@pytest.fixture(autouse=True)
def fresh_compiles():
    """Every test compiles for itself: the per-process cache would make 'twice' compile once."""
    kernel_identity._cached_identity.cache_clear()
    yield
    kernel_identity._cached_identity.cache_clear()


def identity(source=SCALE_KERNEL, options=OPTIONS, arch="sm_90", name="scale.cu", **kwargs):
    kernel_identity._cached_identity.cache_clear()
    return build_identity(source, options, arch, name, **kwargs)


def test_identity_is_a_sha256_hex_digest():
    assert re.fullmatch(r"[0-9a-f]{64}", identity())


def test_same_source_compiled_twice_has_one_identity():
    assert identity() == identity()


def test_comment_only_change_keeps_the_identity():
    commented = "// scales a vector\n" + SCALE_KERNEL.replace("{\n", "{  /* one thread per element */\n", 1)
    assert commented != SCALE_KERNEL
    assert identity(commented) == identity()


def test_whitespace_only_change_keeps_the_identity():
    assert identity(SCALE_KERNEL_RESPACED) == identity()


def test_renamed_file_keeps_the_identity():
    assert identity(name="renamed_scale.cu") == identity()


def test_unused_define_keeps_the_identity():
    assert identity(options=(*OPTIONS, "-DNOT_USED_ANYWHERE=7")) == identity()


def test_comment_under_lineinfo_moves_the_cubin_but_not_the_identity():
    """The reason the whole cubin is not hashed: with -lineinfo its line table follows the source lines."""
    options = (*OPTIONS, "-lineinfo")
    commented = "// one line more\n" + SCALE_KERNEL
    cubin = kernel_identity._cubin(SCALE_KERNEL, options, "sm_90", "scale.cu")
    commented_cubin = kernel_identity._cubin(commented, options, "sm_90", "scale.cu")
    assert cubin != commented_cubin
    assert identity(commented, options) == identity(options=options)


def test_different_constant_in_the_source_changes_the_identity():
    changed = SCALE_KERNEL.replace("* SCALE + OFFSET", "* SCALE - OFFSET")
    assert identity(changed) != identity()


def test_different_define_option_changes_the_identity():
    assert identity(options=("-std=c++17", "-DSCALE=4.0f", "-DOFFSET=1.0f")) != identity()


def test_different_architecture_changes_the_identity():
    assert identity(arch="sm_80") != identity(arch="sm_90")


def test_source_that_does_not_compile_raises_with_nvrtc_log():
    broken = SCALE_KERNEL.replace("int i =", "int i = undeclared_name +")
    with pytest.raises(RuntimeError, match=r"broken\.cu.*does not compile(.|\n)*undeclared_name"):
        identity(broken, name="broken.cu")


@pytest.mark.parametrize("arch", ["compute_90", "90", "sm90", ""])
def test_architecture_that_is_not_a_real_one_is_an_error(arch):
    with pytest.raises(ValueError, match="arch must name a real architecture"):
        identity(arch=arch)


def test_options_given_as_one_string_are_an_error():
    with pytest.raises(ValueError, match="sequence of NVRTC options"):
        build_identity(SCALE_KERNEL, "-DSCALE=3.0f", "sm_90")


def test_editing_one_kernel_leaves_its_neighbour_identity_alone():
    before = ("-DUNROLL=2",)
    after = ("-DUNROLL=16",)
    assert identity(TWO_KERNELS, before) != identity(TWO_KERNELS, after)
    assert identity(TWO_KERNELS, before, function="second") != identity(TWO_KERNELS, after, function="second")
    assert identity(TWO_KERNELS, before, function="first") == identity(TWO_KERNELS, after, function="first")


def test_neighbour_edit_changes_the_shared_attribute_section_that_is_filtered():
    """Without filtering the file-wide .nv.info (it holds every kernel's register count),
    the neighbour test above would fail: check that the edit really changes that section."""
    import io

    from elftools.elf.elffile import ELFFile

    def file_info(options):
        elf = ELFFile(io.BytesIO(kernel_identity._cubin(TWO_KERNELS, options, "sm_90", "two.cu")))
        return elf.get_section_by_name(".nv.info").data()

    assert file_info(("-DUNROLL=2",)) != file_info(("-DUNROLL=16",))


def test_unknown_function_is_an_error_naming_the_kernels():
    with pytest.raises(ValueError, match=r"no kernel 'third'.*\['first', 'second'\]"):
        identity(TWO_KERNELS, ("-DUNROLL=2",), function="third")


def suite_identity(kernel_name):
    kernel = MATMUL_KERNELS[kernel_name]
    options = BASE_OPTIONS + define_options(kernel.defines)
    return build_identity(load_source(kernel.source), options, "sm_90", kernel.source, function=kernel.function)


def test_suite_kernels_of_one_source_with_other_defines_differ():
    assert suite_identity("tiled16") != suite_identity("tiled32")
    assert suite_identity("warptile") != suite_identity("warptile_128x256")


def test_pitched_variant_shares_the_code_with_the_plain_one():
    # the two differ only in their launch, which KernelBuild.launch carries (src/kernelwatch/ab/against_ref.py)
    assert suite_identity("row_shared") == suite_identity("row_shared_pitched")


@pytest.mark.parametrize("capability, arch", [("9.0", "sm_90"), ("8.6", "sm_86"), ("10.0", "sm_100")])
def test_arch_of_names_nvrtcs_real_architecture(capability, arch):
    assert arch_of(capability) == arch
    identity(arch=arch_of(capability))  # NVRTC accepts the name


@pytest.mark.parametrize("capability", ["90", "9.0a", "sm_90", "", None, 9.0])
def test_arch_of_something_not_a_compute_capability_is_an_error(capability):
    with pytest.raises(ValueError, match="compute capability must read like '9.0'"):
        arch_of(capability)


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


def sections(source: str, options: tuple[str, ...]) -> dict[str, tuple[int, bytes]]:
    """Every section of the sm_90 cubin: name -> (size, bytes; empty for NOBITS)."""
    elf = ELFFile(io.BytesIO(kernel_identity._cubin(source, options, "sm_90", "probe.cu")))
    return {s.name: (s["sh_size"], b"" if s["sh_type"] == "SHT_NOBITS" else s.data()) for s in elf.iter_sections()}


def pinned_nvrtc() -> bool:
    try:
        return importlib.metadata.version("nvidia-cuda-nvrtc") == "13.0.88"
    except importlib.metadata.PackageNotFoundError:
        return False


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


def test_a_neighbour_named_like_a_file_wide_section_leaves_that_section_in_a_kernels_identity():
    # kernels named "info" and "constant3": the file's .nv.info and .nv.constant3 end in their names
    neighbours = (STATIC_SHARED.replace("stage", "info") + STATIC_SHARED.replace("stage", "constant3")
                  + CONSTANT_TABLE)
    elf = ELFFile(io.BytesIO(kernel_identity._cubin(neighbours, ("-DSIZE=64", "-DLAST=5.0f"), "sm_90", "probe.cu")))
    poly = {section.name for section in kernel_identity._selected_sections(elf, "poly")}
    assert {".nv.info", ".nv.constant3", ".nv.info.poly", ".text.poly"} <= poly
    assert not {".nv.info.info", ".text.info", ".nv.info.constant3", ".text.constant3"} & poly


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


def test_a_symbol_belongs_to_the_kernel_of_its_name_or_of_its_subroutines_prefix_only():
    kernels = {"matmul_tiled"}
    assert kernel_identity._owner("matmul_tiled", kernels) == "matmul_tiled"
    assert kernel_identity._owner("$matmul_tiled$__internal_0", kernels) == "matmul_tiled"
    assert kernel_identity._owner("matmul_warptile", kernels) is None  # sorts after it: another kernel's
    assert kernel_identity._owner("$other$__internal_0", kernels) is None
