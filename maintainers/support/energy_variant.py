"""A test-only add whose energy can rise while its time does not: `extra` FMAs per thread under its memory time.

Used by maintainers/checks/energy_check.py to test the energy verdict on the GPU: base and head are the same
kernel (busy_add.cu), head with `extra` > 0. Inputs are fixed and seeded, as the suite's are.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = Path(__file__).with_name("busy_add.cu")
THREADS = 256


class BusyAdd:
    """c = a + b of side x side floats, float4 per thread, with `extra` hidden FMAs per thread."""

    def __init__(self, side: int, extra: int, seed: int = 1):
        import cupy
        import numpy as np

        rng = cupy.random.default_rng(seed)
        self.a = rng.random(side * side, dtype=np.float32)
        self.b = rng.random(side * side, dtype=np.float32)
        self.c = cupy.empty_like(self.a)
        self.n4, self.extra = side * side // 4, extra
        self.function = cupy.RawModule(code=SOURCE.read_text(), backend="nvrtc").get_function("busy_add")

    def run(self, stream=None) -> None:
        import numpy as np

        blocks = (self.n4 + THREADS - 1) // THREADS
        self.function((blocks,), (THREADS,), (self.a, self.b, self.c, np.int64(self.n4), np.int32(self.extra)),
                      stream=stream)

    def check(self) -> None:
        import cupy

        assert bool(cupy.array_equal(self.c, self.a + self.b)), "busy_add computed a wrong sum"
