"""tinylib: a kernel library of a few lines implementing src/kernelwatch/ab/library.py's protocol, written into a
project's folder by the tests of the library (tests/ab/) and of the plugin's A/B (tests/plugin/)."""

from __future__ import annotations

KERNEL = 'extern "C" __global__ void {name}(float *x) {{ x[threadIdx.x] = x[threadIdx.x] {operation}; }}\n'

# the protocol in a few lines: source_of, build_for and kernel_names, and prepared cases with run, build and
# same_case_in (a kernel this version lacks: a ValueError that starts with "unknown")
TINYLIB = '''
import sys
from dataclasses import dataclass

OPERATIONS = {operations!r}
KERNEL = {kernel!r}


@dataclass(frozen=True)
class Build:
    source: str
    function: str
    launch: str


def source_of(build):
    return KERNEL.format(name=build.function, operation=OPERATIONS[build.function]), ("-std=c++17",)


def build_for(kernel, shape):
    return Build(kernel + ".cu", kernel, f"grid=(1, 1, 1) block=({{shape}}, 1)")


def kernel_names():
    return list(OPERATIONS)


class Prepared:
    def __init__(self, kernel):
        if kernel not in OPERATIONS:
            raise ValueError(f"unknown kernel {{kernel!r}}")
        self.kernel = kernel

    def run(self, stream):
        pass

    def build(self):
        return build_for(self.kernel, "32")

    def same_case_in(self, library):
        return library.prepare(self.kernel)


def prepare(kernel):
    return Prepared(kernel)
'''


def write_library(folder, operations: dict[str, str]) -> None:
    """tinylib in `folder`: its kernels `operations` (name -> the operation each applies)."""
    (folder / "tinylib").mkdir(exist_ok=True)
    (folder / "tinylib" / "__init__.py").write_text(TINYLIB.format(operations=operations, kernel=KERNEL))


# the library's kernels at the base of an A/B
BASE = {"scale": "* 2.0f", "shift": "+ 1.0f", "gone": "- 1.0f"}
