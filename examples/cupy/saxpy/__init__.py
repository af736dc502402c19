"""The example project's kernel library: SAXPY as a CuPy RawKernel (saxpy.cu beside this file).

`Saxpy(a, x, y, out)` is a prepared case, and `source_of`, `build_for` and `kernel_names` are the three
functions of kernelwatch's kernel-library protocol (docs/kernel-library.md of kernelwatch): named in
pyproject.toml's `kernelwatch_kernels`, they give this project's pull requests the same-run A/B against
their base (`pytest --kernelwatch-compare-ref origin/main`), machine-code identity and cause cards.
"""

from collections import namedtuple
from pathlib import Path

import cupy
import numpy as np

THREADS = 256
SOURCE = Path(__file__).with_name("saxpy.cu")
KERNEL = cupy.RawKernel(SOURCE.read_text(), "saxpy")
Build = namedtuple("Build", "source function launch")  # what kernelwatch reads of a build


def saxpy(a, x, y, out, stream=None):
    """out = a * x + y (float32 vectors), launched on `stream`, else CuPy's current stream."""
    n = x.size
    KERNEL(((n + THREADS - 1) // THREADS,), (THREADS,), (np.int32(n), np.float32(a), x, y, out), stream=stream)


class Saxpy:
    """out = a * x + y, prepared: run on a stream, its build, and the same case in another version of the library."""

    def __init__(self, a, x, y, out):
        self.a, self.x, self.y, self.out = a, x, y, out

    def run(self, stream=None):
        saxpy(self.a, self.x, self.y, self.out, stream)

    def build(self):
        return build_for("saxpy", str(self.x.size))

    def same_case_in(self, library):
        if not hasattr(library, "Saxpy"):
            raise ValueError("unknown kernel 'saxpy' in that version of the library")
        return library.Saxpy(self.a, self.x, self.y, self.out)


def source_of(build):
    return SOURCE.read_text(), ()


def build_for(kernel, shape):
    if kernel != "saxpy":
        raise ValueError(f"unknown kernel {kernel!r}: this library has saxpy")
    n = int(shape)
    return Build(SOURCE.name, "saxpy", f"grid=({-(-n // THREADS)}, 1, 1) block=({THREADS}, 1, 1)")


def kernel_names():
    return ["saxpy"]
