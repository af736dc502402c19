"""The kernel library: what a project's package of kernels gives kernelwatch, and how kernelwatch finds it.

Timing, correctness, verdicts against stored runs and a GPU's history, energy and the
history commands need no library. Four features do: `--kernelwatch-compare-ref` (and
`bisect`, built on it), the machine-code identity of a record (its `sass`), the cause
card of a slower case, and the `removed` verdict. A project that wants them names its
library in the ini key `kernelwatch_kernels` (pyproject.toml's [tool.pytest.ini_options]
or pytest.ini): an importable package (or module). kernelwatch imports it by that name for
the head side (`head_library`), and loads the same path, relative to the top of the git
repository, from another commit's tree (a git ref's, a stored run's) under an alias of its
own (ref_tree.py), so both versions live side by side in one process.

What the package provides, at its top level (`KernelLibrary`):

    source_of(build) -> (source_text, options)
        The CUDA source NVRTC compiles for `build` (its headers spliced in) and NVRTC's
        options for it (`-arch` is kernelwatch's to add). Each version reads its own files.
    build_for(kernel: str, shape: str) -> build or None
        The build a case of `kernel` at `shape` (the `kernel=` and `shape=` a test gave
        `kernelwatch_bench.time`) would have, described without a GPU: a stored run's
        case, for its cause card. None for a library call (cuBLAS); ValueError where it
        cannot say.
    kernel_names() -> iterable of str
        Every kernel this version has: a name a ref's version has and the head's lacks is
        `removed` in a `--kernelwatch-compare-ref` run.

A build (`Build`: what `prepared.build()` and `build_for` return) has `source` (the name of
its source, for NVRTC and messages), `function` (the kernel's `extern "C"` name) and
`launch` (the host side's choices as text, "grid=(8, 8, 1) block=(256, 1) shared=16384
...": the identity hashes it, the card reads `block=` and `shared=`). A prepared case
(`PreparedCase`: what a test hands `kernelwatch_bench.time`) has `run(stream)`, `build()`
(None for a library call) and `same_case_in(library)`: the same case, the same inputs,
prepared by another version of the library; a ValueError whose message starts with
"unknown" where that version lacks the kernel (the case is then `new`).
"""

from __future__ import annotations

import hashlib
import importlib
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Protocol

from kernelwatch.ab.identity import build_identity

INI_KEY = "kernelwatch_kernels"
PROVIDES = ("source_of", "build_for", "kernel_names")  # what KernelLibrary names, checked on the head's package
DOCUMENT = "docs/kernel-library.md"


class Build(Protocol):
    source: str
    function: str
    launch: str


class PreparedCase(Protocol):
    def run(self, stream) -> None: ...

    def build(self) -> Build | None: ...

    def same_case_in(self, library: ModuleType) -> PreparedCase: ...


def is_prepared_case(value) -> bool:
    """`value` offers what a prepared case must (run, build, same_case_in), not only a callable."""
    return all(callable(getattr(value, name, None)) for name in ("run", "build", "same_case_in"))


class KernelLibrary(Protocol):
    def source_of(self, build: Build) -> tuple[str, Sequence[str]]: ...

    def build_for(self, kernel: str, shape: str) -> Build | None: ...

    def kernel_names(self) -> Iterable[str]: ...


class LibraryError(RuntimeError):
    """The kernel library cannot be used: not named, not importable, outside the repository, incomplete."""


NOT_NAMED = f"the project names no kernel library (the ini key {INI_KEY}; {DOCUMENT})"


@dataclass(frozen=True)
class Library:
    """The project's kernel library: the head's package, and its path in the git repository."""

    name: str  # the ini key's value: the head's import name
    package: ModuleType
    # its folder (a module: its file) relative to the repository's top, "kernels" or "python/mylib"; None where
    # it lies in no git repository (`elsewhere` says why): then no other commit's version can be read
    path: str | None
    elsewhere: str = ""

    def located(self) -> str:
        """`path`; LibraryError saying why where there is none."""
        if self.path is None:
            raise LibraryError(self.elsewhere)
        return self.path


def head_library(name: str, rootdir: Path) -> Library:
    """The library `name` as this process imports it, and its path in the git repository of `rootdir`; LibraryError,
    in one line, where it does not import or lacks what it must provide."""
    try:
        package = importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 (whatever the import raised, said in one line)
        raise LibraryError(f"{INI_KEY} = {name!r} does not import: {error!r}") from None
    lacking = [function for function in PROVIDES if not callable(getattr(package, function, None))]
    if lacking:
        raise LibraryError(f"{INI_KEY} = {name!r} ({package.__file__}) lacks {', '.join(lacking)} ({DOCUMENT})")
    where = Path(package.__file__).resolve()
    where = where.parent if hasattr(package, "__path__") else where
    done = subprocess.run(["git", "-C", str(rootdir), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        return Library(name, package, None, f"{rootdir} is in no git repository: no commit's version of the kernel "
                                            f"library {name!r} can be read")
    top = Path(done.stdout.strip()).resolve()
    if not where.is_relative_to(top):
        return Library(name, package, None, f"the kernel library {name!r} is imported from {where}, outside the git "
                                            f"repository {top}: no commit's version of it can be read")
    return Library(name, package, where.relative_to(top).as_posix())


def configured_name(folder: Path) -> str:
    """The kernelwatch_kernels of the pytest configuration that pytest would read in `folder` ("" where it names
    none): for the commands that run outside pytest (`python -m kernelwatch.compare`)."""
    from _pytest.config.findpaths import locate_config  # pytest's own search: the same file pytest would read

    found = locate_config(Path(folder).resolve(), [])[2].get(INI_KEY)
    value = getattr(found, "value", found)
    return value.strip() if isinstance(value, str) else ""


def library_path(name: str, folder: Path) -> str:
    """The path, relative to the top of its git repository, of the package `name` in the project folder `folder`
    (`folder/name`, or `folder/src/name`; a module: its .py file), found without importing it: for the commands
    that run outside pytest. LibraryError where there is none."""
    folder = Path(folder).resolve()
    relative = Path(*name.split("."))
    for base in (folder, folder / "src"):
        for found in (base / relative, (base / relative).with_suffix(".py")):
            if (found / "__init__.py").is_file() or (found.suffix == ".py" and found.is_file()):
                done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                                      text=True)
                if done.returncode != 0:
                    raise LibraryError(f"{folder} is in no git repository: no commit's version of {name!r} can be read")
                return found.relative_to(Path(done.stdout.strip()).resolve()).as_posix()
    raise LibraryError(f"no package {name!r} in {folder} (nor in its src/): name the kernel library's package")


def _provided(package: ModuleType, function: str):
    found = getattr(package, function, None)
    if not callable(found):
        raise LibraryError(f"its kernel library ({package.__name__}) has no {function} ({DOCUMENT}: older than the "
                           f"protocol, or not the library)")
    return found


def source_and_options(package: ModuleType, build: Build) -> tuple[str, tuple[str, ...]]:
    """`package.source_of(build)`: the source text NVRTC compiles and its options (a tuple)."""
    text, options = _provided(package, "source_of")(build)
    if isinstance(options, str):
        raise LibraryError(f"{package.__name__}.source_of gave the options as one string {options!r}: give a sequence")
    return text, tuple(options)


def case_identity(package: ModuleType, build: Build | None, arch: str) -> str:
    """Identity of one side's build of a case: machine code plus launch.

    `build` is what `prepared.build()` returns: None for library calls (cuBLAS, CuPy's add:
    the same library on both sides), else a `Build`. The source is read through `package`
    (`source_of`), so each side compiles its own files.
    """
    if build is None:
        return "library"
    text, options = source_and_options(package, build)
    code = build_identity(text, options, arch, name=build.source, function=build.function)
    return f"{code}:{hashlib.sha256(build.launch.encode()).hexdigest()[:16]}"


def build_for(package: ModuleType, kernel: str, shape: str) -> Build | None:
    """`package.build_for(kernel, shape)`: a stored case's build, described without a GPU."""
    return _provided(package, "build_for")(kernel, shape)


def kernel_names(package: ModuleType) -> set[str]:
    """`package.kernel_names()` as a set."""
    return set(_provided(package, "kernel_names")())
