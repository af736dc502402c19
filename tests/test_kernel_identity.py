import dataclasses
import re

import pytest

from harness import kernel_identity
from harness.kernel_identity import build_identity, launch_configuration, launch_identity
from kernels import MATMUL_KERNELS
from kernels.compile import BASE_OPTIONS, define_options, load_source

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


def test_pitched_variant_shares_the_code_but_not_the_launch():
    plain, pitched = MATMUL_KERNELS["row_shared"], MATMUL_KERNELS["row_shared_pitched"]
    assert suite_identity("row_shared") == suite_identity("row_shared_pitched")
    assert launch_identity(plain) != launch_identity(pitched)


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str = "tiny"
    summary: str = "a tiny kernel"
    seed: str = ""
    threads: tuple[int, int] = (32, 8)
    defines: tuple[tuple[str, int], ...] = (("TILE", 32),)


def test_registry_entry_renamed_and_redescribed_keeps_its_launch_identity():
    kernel = MATMUL_KERNELS["tiled32"]
    assert launch_identity(dataclasses.replace(kernel, name="tiled_32", summary="reworded")) == launch_identity(kernel)


def test_launch_identity_ignores_descriptive_fields():
    renamed = Entry(name="other", summary="said differently", seed="001")
    assert launch_identity(renamed) == launch_identity(Entry())


@pytest.mark.parametrize("field, value", [
    ("threads", (256, 1)), ("tile", (64, 64)), ("grid", "rows"), ("defines", (("TILE", 16),)),
    ("shared_bytes", 4096), ("vectorized", True), ("pitched", True), ("source", "other.cu"),
])
def test_launch_identity_follows_each_launch_field(field, value):
    kernel = MATMUL_KERNELS["tiled32"]
    assert getattr(kernel, field) != value
    assert launch_identity(dataclasses.replace(kernel, **{field: value})) != launch_identity(kernel)


def test_excluded_fields_are_a_parameter():
    wider = Entry(threads=(64, 4))
    assert launch_identity(wider) != launch_identity(Entry())
    assert launch_identity(wider, excluded=("name", "summary", "seed", "threads")) == launch_identity(
        Entry(), excluded=("name", "summary", "seed", "threads"))
    assert launch_identity(Entry(name="x"), excluded=()) != launch_identity(Entry(), excluded=())


def test_launch_configuration_lists_the_launch_fields_only():
    assert launch_configuration(Entry()) == {"threads": (32, 8), "defines": (("TILE", 32),)}


def test_launch_identity_is_pinned_so_stored_identities_stay_valid():
    """A change of the encoding would make every stored identity look changed."""
    assert launch_identity(Entry()) == "a227f90b9a2d8a1d9055812a47c9b0e9ac8f591904b7ed8cb4920fa57da107b3"


@pytest.mark.parametrize("entry", [Entry, {"threads": (1, 1)}, None], ids=["class", "dict", "none"])
def test_launch_identity_of_something_not_a_dataclass_instance_is_an_error(entry):
    with pytest.raises(TypeError, match="expected a dataclass instance"):
        launch_identity(entry)


def test_excluded_given_as_one_string_is_an_error():
    with pytest.raises(TypeError, match="sequence of field names"):
        launch_identity(Entry(), excluded="name")


def test_launch_field_that_is_not_plain_data_is_an_error():
    @dataclasses.dataclass(frozen=True)
    class Odd:
        threads: object = dataclasses.field(default_factory=object)

    with pytest.raises(TypeError, match="Odd is not plain data"):
        launch_identity(Odd())
