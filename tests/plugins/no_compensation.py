"""Test-only: the suite's Kahan kernels without their compensation, as the slowdown plugins do for time.

    pytest suites ... -p tests.plugins.no_compensation

kernels/cuda/common.cuh's `kahan_add` becomes a plain `sum += a * b` in every source that
`kernels.compile.load_source` gives from then on (naive_kahan and row_shared include it): the same
product, rounded as the naive kernel rounds it. On the fake GPU a RawKernel is compiled by g++
(tests/plugins/fake_cupy.py), so the variant really computes less accurately: naive_kahan's maximum
relative error at K = 4096 goes from about 6e-8 to about 2e-6, and the check reads `less accurate`.
`strip_compensation` is also what maintainers/device/plugin_on_gpu.sh's `accuracy` part commits in a
scratch clone, on a real GPU.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

KAHAN_ADD = re.compile(r"(void\s+kahan_add\s*\(\s*float\s*&\s*sum\s*,\s*float\s*&\s*comp\s*,\s*float\s+a\s*,"
                       r"\s*float\s+b\s*\)\s*)\{.*?\n\}", re.DOTALL)
PLAIN = "{\n    (void)comp;\n    sum += a * b;  // compensation removed (tests/plugins/no_compensation.py)\n}"


def strip_compensation(source: str) -> str:
    """`source` with kahan_add's body replaced by a plain multiply-add; ValueError where it has none."""
    stripped, count = KAHAN_ADD.subn(lambda match: match.group(1) + PLAIN, source)
    if count == 0:
        raise ValueError("no kahan_add(float &sum, float &comp, float a, float b) { ... } in the source")
    return stripped


def pytest_configure(config):
    from kernels import compile as compiling

    original = compiling.load_source

    def load_source_without_compensation(name: str) -> str:
        text = original(name)
        return strip_compensation(text) if "kahan_add" in text else text

    compiling.load_source = load_source_without_compensation
    config.add_cleanup(lambda: setattr(compiling, "load_source", original))


if __name__ == "__main__":  # strip the compensation from a file in place: python -m tests.plugins.no_compensation FILE
    path = Path(sys.argv[1])
    path.write_text(strip_compensation(path.read_text()))
