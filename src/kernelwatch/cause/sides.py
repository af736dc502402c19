"""The cause card of one case from its two sides' builds: each side's kernel library gives its own source.

`case_card(case, base, head, arch, ...)` takes a `Side` for base and head (the version of the project's
kernel library that prepared the case, and its build, src/kernelwatch/ab/library.py; None for a library
call) and gives the card's markdown lines (card.py). With `ncu`, the dynamic half too: each side launched by launch.py
under Nsight Compute (matrix products only: launch.py knows their signature, MATMUL_PARAMS). Each
side's card costs about ten seconds of GPU time under ncu.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kernelwatch.ab.library import source_and_options
from kernelwatch.cause.card import Cause, card, static_causes
from kernelwatch.cause.static import static_profile

_GRID = re.compile(r"grid=\((\d+), (\d+), (\d+)\)")
_BLOCK = re.compile(r"block=\(([\d, ]+)\)")
LIBRARY_NOTE = ("The kernel is a library's (cuBLAS, or CuPy's own), not the suite's: its machine code is the "
                "library's to explain; the card compares what the suite controls, the launch and the environment.")
NAME_CHARS = 100  # a kernel name is cut to this in the card (cuBLAS's run to 150 characters and more)
LIBRARY_KERNEL_SCORE = 50  # other kernels chosen by the library: above occupancy's base, below spills'


@dataclass(frozen=True)
class Side:
    package: object  # the version of the project's kernel library that built the case (the head's, or a ref's alias)
    build: object  # its build (ab/library.py's Build), or None for a library call
    shape: str | None = None  # "MxNxK" of a matrix product: what its dynamic half needs


def _profile(side: Side, arch: str):
    text, options = source_and_options(side.package, side.build)
    return text, options, static_profile(text, options, arch, side.build.function, side.build.launch, side.build.source)


def _launch_command(side: Side, text: str, options, folder: Path, name: str) -> list[str] | None:
    import sys

    grid, block = _GRID.search(side.build.launch), _BLOCK.search(side.build.launch)
    if side.shape is None or grid is None or block is None:
        return None
    shared = re.search(r"shared=(\d+)", side.build.launch)
    path = folder / f"{name}.cu"
    path.write_text(text)
    return [sys.executable, "-m", "kernelwatch.cause.launch", str(path), side.build.function, f"--shape={side.shape}",
            f"--grid={','.join(grid.groups())}", f"--block={block.group(1).replace(' ', '')}",
            f"--shared={shared.group(1) if shared else 0}", *(f"--option={option}" for option in options)]


def _names(kernels) -> str:
    return ", ".join(f"`{name if len(name) <= NAME_CHARS else name[:NAME_CHARS - 1] + '…'}`" for name in kernels)


def library_card(case: str, launched: tuple | None, environment: dict | None = None) -> list[str]:
    """The card of a library's case: the kernels CUPTI saw it launch on each side (`launched`: base's
    names, head's), a cause where the library chose other kernels."""
    base, head = launched or ((), ())
    if not base and not head:
        return card(case, [], {}, {}, environment, note=LIBRARY_NOTE + " The kernels it launched are not known: "
                    "CUPTI did not record this run (held CUDA events timed it).")
    if list(base) == list(head):
        return card(case, [], {}, {}, environment, note=LIBRARY_NOTE + f" It launched {_names(head)} on both sides.")
    chosen = Cause("library kernel", LIBRARY_KERNEL_SCORE,
                   f"the library launched {_names(base) or 'nothing CUPTI saw'} on the base and "
                   f"{_names(head) or 'nothing CUPTI saw'} on the head: it chose other kernels")
    return card(case, [chosen], {}, {}, environment, note=LIBRARY_NOTE)


def case_card(case: str, base: Side, head: Side, arch: str, *, ncu: str | None = None,
              environment: dict | None = None, launched: tuple | None = None) -> list[str]:
    """The markdown lines of `case`'s cause card: static always, dynamic where `ncu` names a profiler; a
    library's case by the kernels CUPTI saw each side launch (`launched`: base's names, head's)."""
    if base.build is None or head.build is None:
        return library_card(case, launched, environment)
    base_text, base_options, base_static = _profile(base, arch)
    head_text, head_options, head_static = _profile(head, arch)
    causes = static_causes(base_static, head_static)
    base_figures, head_figures = base_static.figures(), head_static.figures()
    note = ""
    if ncu:
        from kernelwatch.cause.dynamic import ProfilerMissing, dynamic_causes, figures, profile

        with tempfile.TemporaryDirectory(prefix="cause-") as scratch:
            commands = [_launch_command(side, text, options, Path(scratch), name) for side, text, options, name in
                        ((base, base_text, base_options, "base"), (head, head_text, head_options, "head"))]
            if None in commands:
                note = "The dynamic half launches matrix products only: this case has the static half alone."
            else:
                try:
                    base_dyn, head_dyn = (profile(command, side.build.function, ncu=ncu)
                                          for command, side in zip(commands, (base, head), strict=True))
                    causes += dynamic_causes(base_dyn, head_dyn)
                    base_figures.update(figures(base_dyn))
                    head_figures.update(figures(head_dyn))
                except ProfilerMissing as error:
                    note = f"No dynamic half: {error}"
    return card(case, causes, base_figures, head_figures, environment, note=note)
