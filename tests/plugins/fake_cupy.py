"""A NumPy-backed stand-in for the few CuPy calls of examples/cupy, so that the example runs on the fake GPU.

Tests only: tests/plugins/fake_gpu.py installs it as `cupy` under `--fake-gpu-cupy` and puts the real one back
after the run. Arrays are NumPy's (kernelwatch then judges them on the host). A RawKernel's CUDA C source is
compiled for the CPU by the system's C++ compiler, with CUDA's built-in indices as globals, and a launch runs
its threads one after another: the example's own kernel computes the result, so a wrong kernel gives a wrong
one. That holds for kernels of independent threads (no shared memory, barriers or atomics: those fail to
compile here), passed NumPy arrays and NumPy scalars as CuPy wants them; a parameter list may be a macro (the
suite's MATMUL_PARAMS), and float4 and isfinite are there, so the suite's naive kernels
(kernels/cuda/matmul_01_naive.cu, matmul_02_naive_kahan.cu, through kernels.compile.load_source) compile too.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import tempfile
import types
from pathlib import Path

import numpy as np

PRELUDE = r"""
#include <cmath>
using std::isfinite;
struct float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct dim3 { unsigned x, y, z; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
"""

LAUNCHER = r"""
extern "C" void fake_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, {params}) {{
    gridDim = dim3{{gx, gy, gz}};
    blockDim = dim3{{bx, by, bz}};
    for (blockIdx.z = 0; blockIdx.z < gz; ++blockIdx.z) for (blockIdx.y = 0; blockIdx.y < gy; ++blockIdx.y)
    for (blockIdx.x = 0; blockIdx.x < gx; ++blockIdx.x) for (threadIdx.z = 0; threadIdx.z < bz; ++threadIdx.z)
    for (threadIdx.y = 0; threadIdx.y < by; ++threadIdx.y) for (threadIdx.x = 0; threadIdx.x < bx; ++threadIdx.x)
        {name}({args});
}}
"""


class RawKernel:
    """cupy.RawKernel(code, name): compiled at its first launch, as CuPy compiles it."""

    def __init__(self, code: str, name: str, **options):
        self.code, self.name, self._launch = code, name, None

    def _compiled(self):
        if self._launch is None:
            found = re.search(rf"__global__\s+void\s+{re.escape(self.name)}\s*\(([^)]*)\)", self.code)
            if found is None:
                raise ValueError(f"fake cupy: no __global__ void {self.name}(...) in the source")
            params = found.group(1).strip()
            macro = re.search(rf"#define\s+{re.escape(params)}\s+((?:[^\n]*\\\n)*[^\n]*)", self.code)
            if re.fullmatch(r"\w+", params) and macro is not None:  # a parameter list named by a macro
                params = " ".join(macro.group(1).replace("\\\n", " ").split())
            args = ", ".join(re.findall(r"(\w+)\s*$", p.strip())[0] for p in params.split(","))
            source = PRELUDE + self.code + LAUNCHER.format(params=params, name=self.name, args=args)
            with tempfile.TemporaryDirectory() as folder:
                library = Path(folder) / f"{self.name}.so"
                subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-x", "c++", "-", "-o", str(library)],
                               input=source, text=True, check=True, capture_output=True)
                self._launch = ctypes.CDLL(str(library)).fake_launch
        return self._launch

    def __call__(self, grid, block, args, **options):
        dims = [ctypes.c_uint(n) for dims in (grid, block) for n in (tuple(dims) + (1, 1))[:3]]
        self._compiled()(*dims, *(as_c(arg) for arg in args))


def as_c(arg):
    """A kernel argument as ctypes passes it: an array by its pointer, a NumPy scalar by value."""
    if isinstance(arg, np.ndarray):
        return ctypes.c_void_p(arg.ctypes.data)
    if isinstance(arg, np.generic):
        return np.ctypeslib.as_ctypes_type(arg.dtype)(arg.item())
    raise TypeError(f"fake cupy: pass kernel arguments as arrays or NumPy scalars, not {type(arg).__name__}")


# the real CuPy's NVRTC binding stays reachable as cupy.cuda.nvrtc: kernelwatch builds a kernel library's cases
# with it to record their machine code (kernelwatch.ab.identity), which needs no GPU
MODULES = ("cupy", "cupy.cuda", "cupy.cuda.nvrtc")


def modules() -> dict[str, types.ModuleType]:
    """The stand-in `cupy` (NumPy's arrays, types and random numbers, and RawKernel) and its `cupy.cuda.nvrtc`,
    the real one: the entries of sys.modules for MODULES."""
    from cupy.cuda import nvrtc  # the real CuPy's, imported before the stand-in takes its name

    nvrtc.getVersion()  # loads libnvrtc now, through the real CuPy (it imports cupy._environment to find it)

    fake = types.ModuleType("cupy", __doc__)
    fake.__path__ = []  # a package, so that `from cupy.cuda import nvrtc` finds its submodule in sys.modules
    for name in ("asarray", "empty", "empty_like", "zeros", "float16", "float32", "float64", "int32", "int64",
                 "random"):
        setattr(fake, name, getattr(np, name))
    fake.RawKernel = RawKernel
    fake.cuda = types.ModuleType("cupy.cuda")
    fake.cuda.__path__ = []
    fake.cuda.nvrtc = nvrtc
    return {"cupy": fake, "cupy.cuda": fake.cuda, "cupy.cuda.nvrtc": nvrtc}
