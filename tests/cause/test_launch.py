"""src/kernelwatch/cause/launch.py on the CPU: its command line, the operands it makes, its shared memory opt-in.

CuPy is replaced by a fake whose kernel computes the product with NumPy and keeps CUDA's rule that a
launch asking for more than 48 KiB of dynamic shared memory needs the opt-in attribute set first.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from kernelwatch.cause import launch
from kernelwatch.cause.launch import main

ROOT = Path(__file__).resolve().parents[2]
FIRST_LINE = ("Launch one matrix-multiply build twice, for Nsight Compute to profile the second launch: no suite, "
              "no pytest.")


class FakeKernel:
    def __init__(self):
        self.opt_ins, self.launches, self.operands, self.modules = [], [], [], []
        self._max_dynamic = 48 * 1024

    @property
    def max_dynamic_shared_size_bytes(self):
        return self._max_dynamic

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        self.opt_ins.append(value)
        self._max_dynamic = value

    def __call__(self, grid, block, params, shared_mem=0):
        if shared_mem > self._max_dynamic:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: too much dynamic shared memory without the opt-in")
        a, b, c, m, n, k = params[:6]
        c[...] = a @ b
        self.operands.append((a.copy(), b.copy()))
        self.launches.append((grid, block, shared_mem, (int(m), int(n), int(k))))


@pytest.fixture
def kernel(monkeypatch):
    kernel = FakeKernel()

    class RawModule:
        def __init__(self, code, options, backend):
            kernel.modules.append((code, options, backend))

        def get_function(self, name):
            assert name == "mm"
            return kernel

    cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        RawModule=RawModule, asarray=np.asarray, full=np.full, max=np.max, abs=np.abs, cuda=cuda))
    return kernel


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text('extern "C" __global__ void mm() {}')
    return str(path)


def test_the_help_is_described_by_the_modules_first_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m kernelwatch.cause.launch ")
    assert FIRST_LINE in " ".join(out.split()) and launch.__doc__.splitlines()[0] == FIRST_LINE


@pytest.mark.parametrize("missing", ["--shape", "--grid", "--block"])
def test_a_launch_without_its_shape_grid_or_block_is_refused_before_anything_runs(kernel, source, capsys, missing):
    given = {"--shape": "--shape=8x4x16", "--grid": "--grid=1,2", "--block": "--block=4,8"}
    argv = [source, "mm", *(option for name, option in given.items() if name != missing)]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"the following arguments are required: {missing}" in capsys.readouterr().err
    assert kernel.launches == []


@pytest.mark.parametrize(("shared", "opt_ins"), [(16384, []), (48 * 1024, []), (48 * 1024 + 1, [48 * 1024 + 1]),
                                                 (49 * 1024, [49 * 1024]), (64 * 1024, [64 * 1024])])
def test_the_shared_memory_opt_in_starts_one_byte_past_48_kib(kernel, source, shared, opt_ins):
    argv = [source, "mm", "--shape=8x4x16", "--grid=1,2", "--block=4,8", f"--shared={shared}"]
    assert main(argv) == 0
    assert kernel.opt_ins == opt_ins
    assert kernel.launches == [((1, 2, 1), (4, 8, 1), shared, (8, 4, 16))] * 2


def test_the_operands_are_float32_uniform_in_minus_one_to_one_with_both_signs(kernel, source):
    assert main([source, "mm", "--shape=64x32x48", "--grid=1", "--block=32"]) == 0
    (a, b), again = kernel.operands[0], kernel.operands[1]
    assert a.shape == (64, 48) and b.shape == (48, 32) and a.dtype == b.dtype == np.float32
    for operand in (a, b):
        assert operand.min() >= -1 and operand.max() < 1
        assert operand.min() < -0.9 and operand.max() > 0.9  # the whole range, both signs
    # both launches get the same operands
    assert np.array_equal(again[0], a) and np.array_equal(again[1], b)


def test_the_operands_are_numpys_generator_seeded_0_a_then_b_so_a_run_can_be_reproduced(kernel, source):
    assert main([source, "mm", "--shape=8x4x16", "--grid=1", "--block=32"]) == 0
    rng = np.random.default_rng(0)
    a, b = kernel.operands[0]
    assert np.array_equal(a, rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    assert np.array_equal(b, rng.uniform(-1, 1, (16, 4)).astype(np.float32))


def test_run_as_a_module_it_parses_its_command_line():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "kernelwatch.cause.launch", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=60, env={"PATH": "", "COLUMNS": "200", "PYTHONPATH": str(ROOT)})

    helped = run("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m kernelwatch.cause.launch ")
    refused = run("k.cu", "mm")
    assert refused.returncode == 2
    assert "the following arguments are required: --shape, --grid, --block" in refused.stderr


def test_a_launch_builds_the_source_with_its_options_and_runs_the_kernel_twice_with_the_shape(kernel, source, capsys):
    # as the suite's own launch does (kernels/matmul.py): no shared memory asked, no attribute set
    assert main([source, "mm", "--shape=8x4x16", "--grid=1,2", "--block=4,8", "--option=-DTILE=4"]) == 0
    assert kernel.opt_ins == []
    assert kernel.launches == [((1, 2, 1), (4, 8, 1), 0, (8, 4, 16))] * 2  # a warm-up, then the profiled one
    assert kernel.modules == [('extern "C" __global__ void mm() {}', ("-DTILE=4",), "nvrtc")]
    assert capsys.readouterr().out == "largest relative error against cuBLAS: 0.00e+00\n"


@pytest.mark.parametrize(("off", "status"), [(5e-4, 0), (2e-3, 1)])
def test_the_launch_fails_where_the_kernel_is_off_cublas_by_a_thousandth_or_more(kernel, source, monkeypatch, capsys,
                                                                                 off, status):
    exact = type(kernel).__call__

    def off_by(self, grid, block, params, shared_mem=0):
        exact(self, grid, block, params, shared_mem)
        params[2][...] *= 1 + off

    monkeypatch.setattr(type(kernel), "__call__", off_by)
    assert main([source, "mm", "--shape=8x4x16", "--grid=1,2", "--block=4,8"]) == status
    assert capsys.readouterr().out.startswith("largest relative error against cuBLAS: ")
