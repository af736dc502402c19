import re

import pytest

from harness.ab import identity as kernel_identity
from harness.ab.identity import arch_of, build_identity
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


def test_pitched_variant_shares_the_code_with_the_plain_one():
    # the two differ only in their launch, which KernelBuild.launch carries (harness/ab/against_ref.py)
    assert suite_identity("row_shared") == suite_identity("row_shared_pitched")


@pytest.mark.parametrize("capability, arch", [("9.0", "sm_90"), ("8.6", "sm_86"), ("10.0", "sm_100")])
def test_arch_of_names_nvrtcs_real_architecture(capability, arch):
    assert arch_of(capability) == arch
    identity(arch=arch_of(capability))  # NVRTC accepts the name


@pytest.mark.parametrize("capability", ["90", "9.0a", "sm_90", "", None, 9.0])
def test_arch_of_something_not_a_compute_capability_is_an_error(capability):
    with pytest.raises(ValueError, match="compute capability must read like '9.0'"):
        arch_of(capability)
