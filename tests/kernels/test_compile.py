"""Every .cu file builds for sm_80 and sm_90 with NVRTC, no GPU needed, and spills nothing:
the suite's kernels under kernels/cuda and the timer's own, src/kernelwatch/timing/kernels.cu."""

import re
from pathlib import Path

import pytest

from kernels.compile import CUDA_DIR, compile_report, cuda_sources, parse_ptxas_log
from maintainers.support import energy_variant
from tests.support.cuda_builds import BUILDS, build_id


def test_every_cu_file_is_built():
    assert {s for s, _ in BUILDS} == {p.name for p in cuda_sources()}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("build", BUILDS, ids=build_id)
def test_cuda_source_compiles_without_spills(build, arch):
    source, defines = build
    report = compile_report(source, arch, defines)
    assert report.cubin_bytes > 0
    assert report.registers, f"ptxas reported no kernel:\n{report.log}"
    assert report.spill_stores == 0, f"{source} spills {report.spill_stores} bytes on {arch}:\n{report.log}"
    assert report.spill_loads == 0
    assert max(report.registers.values()) <= 255


TIMER_KERNELS = Path(__file__).resolve().parents[2] / "src" / "kernelwatch" / "timing" / "kernels.cu"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_timer_kernels_compile_without_spills(arch, monkeypatch):
    import kernels.compile as compile_module

    # compile_report reads sources from CUDA_DIR; the timer's source lives beside the timer
    monkeypatch.setattr(compile_module, "CUDA_DIR", TIMER_KERNELS.parent)
    report = compile_report(TIMER_KERNELS.name, arch)
    assert set(report.registers) == {"hold_stream", "flush_l2", "mark_sample"}, f"unexpected kernels:\n{report.log}"
    assert report.spill_stores == 0 and report.spill_loads == 0, report.log


def test_a_broken_source_reports_the_compiler_log(tmp_path, monkeypatch):
    import kernels.compile as compile_module

    (tmp_path / "broken.cu").write_text('extern "C" __global__ void k() { undeclared = 1; }\n')
    monkeypatch.setattr(compile_module, "CUDA_DIR", tmp_path)
    with pytest.raises(RuntimeError, match="undeclared"):
        compile_report("broken.cu", "sm_90")


BROKEN_KERNEL = """\
// a kernel being added: 13 lines, the shared header spliced in at line 3
#include "common.cuh"

extern "C" __global__ void being_added(const float *__restrict__ a, float *__restrict__ b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        b[i] = a[i] * 2.0f;
    }
    if (i == 0) {
        b[0] = undeclared_here;
    }
}
"""


def test_a_compile_error_is_reported_at_the_line_of_the_kernels_own_file(tmp_path, monkeypatch):
    import shutil

    import kernels.compile as compile_module

    shutil.copy(compile_module.CUDA_DIR / "common.cuh", tmp_path / "common.cuh")
    (tmp_path / "being_added.cu").write_text(BROKEN_KERNEL)
    monkeypatch.setattr(compile_module, "CUDA_DIR", tmp_path)
    with pytest.raises(RuntimeError) as refused:
        compile_report("being_added.cu", "sm_90")
    line = BROKEN_KERNEL.splitlines().index("        b[0] = undeclared_here;") + 1
    assert line == 10
    assert re.search(rf'being_added\.cu\({line}\): error: identifier "undeclared_here" is undefined',
                     str(refused.value)), str(refused.value)


def test_an_error_in_the_shared_header_is_reported_at_the_headers_own_line(tmp_path, monkeypatch):
    import kernels.compile as compile_module

    header = (compile_module.CUDA_DIR / "common.cuh").read_text().splitlines()
    header.insert(4, "static_assert(false, \"a broken header\");")  # line 5 of common.cuh
    (tmp_path / "common.cuh").write_text("\n".join(header) + "\n")
    (tmp_path / "user.cu").write_text(BROKEN_KERNEL.replace("undeclared_here", "1.0f"))
    monkeypatch.setattr(compile_module, "CUDA_DIR", tmp_path)
    with pytest.raises(RuntimeError) as refused:
        compile_report("user.cu", "sm_90")
    assert re.search(r'common\.cuh\(5\): error: static assertion failed with "a broken header"', str(refused.value)), \
        str(refused.value)


def test_the_spliced_source_keeps_every_line_of_the_kernels_file_at_its_own_number():
    from kernels.compile import load_source

    spliced = load_source("matmul_01_naive.cu").splitlines()
    own = (CUDA_DIR / "matmul_01_naive.cu").read_text().splitlines()
    resumed = spliced.index('#line 5 "matmul_01_naive.cu"')  # after the header spliced in for line 4
    assert spliced[resumed + 1:] == own[4:]


def test_ptxas_log_parsing_counts_spills():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers\n"
    )
    registers, stores, loads, stack = parse_ptxas_log(log)
    assert registers == {"k": 255} and (stores, loads, stack) == (8, 12, 16)


ENERGY_VARIANT = Path(energy_variant.SOURCE)  # maintainers/support/busy_add.cu


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_energy_variant_compiles_without_spills_and_keeps_its_fmas(arch, monkeypatch):
    """The FMAs that raise the variant's energy must survive the compiler: they are its point."""
    import kernels.compile as compile_module

    monkeypatch.setattr(compile_module, "CUDA_DIR", ENERGY_VARIANT.parent)
    report = compile_report(ENERGY_VARIANT.name, arch)
    assert set(report.registers) == {"busy_add"} and report.spill_stores == 0 and report.spill_loads == 0, report.log
    from kernelwatch.cause.sass import opcodes
    from kernelwatch.cause.static import compiled

    cubin, _ = compiled(ENERGY_VARIANT.read_text(), (), arch, ENERGY_VARIANT.name)
    assert any(op.startswith("FFMA") for op in opcodes(cubin, "busy_add")), "the hidden FMAs were compiled away"



@pytest.mark.parametrize("version, options", [((12, 8), ("-Xptxas=-v",)), ((12, 9), ("-Xptxas=-v", "--no-cache")),
                                              ((13, 0), ("-Xptxas=-v", "--no-cache"))])
def test_the_report_build_turns_nvrtcs_own_cache_off_where_it_has_one(version, options, monkeypatch):
    # NVRTC 12.9 on caches builds, and a cached build runs no ptxas: its log is empty (the H200 hosts' nightly
    # cards read "names no entry function" once the suite had built the same kernel); 12.8 refuses the option
    from cupy.cuda import nvrtc

    from kernels.compile import _report_options

    monkeypatch.setattr(nvrtc, "getVersion", lambda: version)
    assert _report_options() == options
