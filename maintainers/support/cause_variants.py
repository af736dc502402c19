"""Eight deliberately broken variants of the suite's own kernels, each with the cause a card must blame.

A variant is an edit of a registry kernel's real source (`kernels.compile.load_source`), or of its build
options or launch: when the kernel changes so that an edit no longer applies, `source_text` says so and
the tests fail, rather than a variant drifting from what it breaks. `static` says whether the compiler's
output alone shows the cause (the CPU test asks the static card to name it first); the others
(uncoalesced loads, bank conflicts, divergence) show only in a profile (the GPU check,
maintainers/checks/cause_check.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.compile import BASE_OPTIONS, define_options, load_source
from kernels.registry import MATMUL_KERNELS

TILED_LOOP = "for (int k = 0; k < TILE; ++k) sum += a_tile[ty][k] * b_tile[k][tx];"


@dataclass(frozen=True)
class Variant:
    name: str
    kernel: str  # the registry name of the suite's kernel it breaks
    cause: str  # the key the card must name first (src/kernelwatch/cause/card.py, dynamic.py)
    static: bool  # the compiler's output shows it
    what: str
    edits: tuple[tuple[str, str], ...] = ()  # (old, new): each old text must occur exactly once
    defines: tuple[tuple[str, int], ...] | None = None  # instead of the kernel's
    options: tuple[str, ...] = ()  # NVRTC options added
    threads: tuple[int, int] | None = None  # the block instead of the kernel's
    shared_bytes: int | None = None  # dynamic shared memory instead of the kernel's

    @property
    def original(self):
        return MATMUL_KERNELS[self.kernel]

    def source_text(self) -> str:
        text = load_source(self.original.source)
        for old, new in self.edits:
            if text.count(old) != 1:
                raise AssertionError(f"variant {self.name}: {old!r} occurs {text.count(old)} times in "
                                     f"{self.original.source}, not once: the kernel changed, mend the variant")
            text = text.replace(old, new)
        return text

    def build_options(self) -> tuple[str, ...]:
        defines = self.original.defines if self.defines is None else self.defines
        return (*BASE_OPTIONS, *define_options(defines), *self.options)

    def block(self) -> tuple[int, int]:
        return self.threads or self.original.threads

    def dynamic_shared(self) -> int:
        return self.original.shared_bytes if self.shared_bytes is None else self.shared_bytes

    def launch(self) -> str:
        return f"block={self.block()} shared={self.dynamic_shared()}"


def original_launch(kernel: str) -> str:
    entry = MATMUL_KERNELS[kernel]
    return f"block={entry.threads} shared={entry.shared_bytes}"


VARIANTS = (
    Variant("extra_barrier", "tiled32", "barriers", True, "a __syncthreads() inside the k loop",
            edits=((TILED_LOOP, "for (int k = 0; k < TILE; ++k) { sum += a_tile[ty][k] * b_tile[k][tx]; "
                                "__syncthreads(); }"),)),
    Variant("register_cap", "blocktile_2d", "spills", True,
            "__launch_bounds__ asking for 6 blocks per SM: at most 40 registers a thread, so they spill",
            edits=(("__launch_bounds__(THREADS)", "__launch_bounds__(THREADS, 6)"),)),
    Variant("smaller_tile", "tiled32", "global loads per FFMA", True, "16 x 16 tiles instead of 32 x 32",
            defines=(("TILE", 16),), threads=(16, 16)),
    Variant("uncoalesced_load", "tiled32", "uncoalesced global loads", False,
            "A's tile loaded down its columns: a warp's 32 loads 32 rows apart",
            edits=(("__shared__ float a_tile[TILE][TILE];", "__shared__ float a_tile[TILE][TILE + 1];"),
                   ("a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[row * lda + k0 + tx] : 0.0f;",
                    "{ const int r = blockIdx.y * TILE + tx; "
                    "a_tile[tx][ty] = (r < M && k0 + ty < K) ? A[r * lda + k0 + ty] : 0.0f; }"))),
    Variant("bank_conflict", "tiled32", "bank conflicts", False,
            "B's tile stored and read transposed: a warp's 32 accesses in one bank",
            edits=(("b_tile[ty][tx] = (k0 + ty < K && col < N)", "b_tile[tx][ty] = (k0 + ty < K && col < N)"),
                   (TILED_LOOP, "for (int k = 0; k < TILE; ++k) sum += a_tile[ty][k] * b_tile[tx][k];"))),
    Variant("more_shared_memory", "tiled32", "occupancy", True,
            "120 KB of dynamic shared memory asked for (and unused): one block per SM, not two",
            shared_bytes=120 * 1024),
    Variant("unroll_removed", "tiled32", "unrolling", True, "#pragma unroll 1 on the k loop",
            edits=(("#pragma unroll\n", "#pragma unroll 1\n"),)),
    Variant("divergent_branch", "tiled32", "divergence", False,
            "odd and even threads take two loops: each warp runs both, half its threads idle",
            edits=((TILED_LOOP, "if (tx & 1) { for (int k = 0; k < TILE; ++k) sum += a_tile[ty][k] * b_tile[k][tx]; } "
                                "else { for (int k = TILE - 1; k >= 0; --k) sum += a_tile[ty][k] * b_tile[k][tx]; }"),)),
)
