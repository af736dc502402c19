"""This package as a kernel library for kernelwatch (src/kernelwatch/ab/library.py, docs/kernel-library.md).

pyproject.toml's `kernelwatch_kernels = "kernels"` names this package; kernelwatch reads the
three functions below, here and in a git ref's (or a stored run's commit's) copy of the package:

* `source_of(build)`: the CUDA source of a `KernelBuild` (headers spliced in) and its NVRTC options;
* `build_for(kernel, shape)`: a case's build from its kernel's name and shape alone, no GPU;
* `kernel_names()`: the names of both registries (they share none: tests/kernels/test_registry.py).

Prepared cases (`PreparedMatmul`, `PreparedAdd`, `PreparedStreams`) give their own `build()` and
`same_case_in(library)`.
"""

from __future__ import annotations

from .compile import BASE_OPTIONS, KernelBuild, define_options, load_source
from .elementwise import build_for as add_build_for
from .matmul import build_for as matmul_build_for
from .registry import ELEMENTWISE_KERNELS, MATMUL_KERNELS


def source_of(build: KernelBuild) -> tuple[str, tuple[str, ...]]:
    """The text NVRTC compiles for `build` (kernels/cuda/<source>, headers spliced in) and its options."""
    return load_source(build.source), BASE_OPTIONS + define_options(build.defines)


def build_for(kernel: str, shape: str) -> KernelBuild | None:
    """The build a case of `kernel` at `shape` gives, described without a GPU: a matrix product's at "MxNxK", an
    add's at its arrays' shape ("RxC", or "N" for a vector kernel), operands 16-byte aligned as the suite's
    allocations are. None for a library call (cuBLAS, CuPy's add); ValueError for a kernel of neither registry
    or a shape that is not its."""
    try:
        sizes = tuple(int(size) for size in shape.split("x"))
    except ValueError:
        raise ValueError(f"the case's shape {shape!r} is no array's shape (sizes joined by x)") from None
    if kernel in MATMUL_KERNELS:
        if len(sizes) != 3:
            raise ValueError(f"the case's shape {shape!r} is no matrix product's MxNxK")
        return matmul_build_for(kernel, *sizes)
    if kernel in ELEMENTWISE_KERNELS:
        return add_build_for(kernel, sizes)
    raise ValueError(f"unknown kernel {kernel!r}: neither a matrix product's nor an add's")


def kernel_names() -> list[str]:
    """Every kernel of this version: the matrix products' and the adds' registries."""
    return [*MATMUL_KERNELS, *ELEMENTWISE_KERNELS]
