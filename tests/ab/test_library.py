"""src/kernelwatch/ab/library.py, the kernel-library protocol: finding a project's library, reading the ini key
outside pytest, and this repository's kernels package as an implementation of it."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kernels
from kernelwatch.ab.library import PROVIDES, LibraryError, configured_name, head_library, library_path
from tests.support.kernel_library import BASE, write_library


def git_init(folder):
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def test_the_library_is_found_at_its_path_in_the_repository_or_said_to_lie_outside_one(tmp_path, monkeypatch):
    repo, other, plain = tmp_path / "repo", tmp_path / "other", tmp_path / "plain"
    (repo / "python").mkdir(parents=True)
    write_library(repo / "python", BASE)
    for folder in (repo, other):
        git_init(folder)
    plain.mkdir()
    monkeypatch.syspath_prepend(str(repo / "python"))
    try:
        library = head_library("tinylib", repo / "python")  # pytest's rootdir: a folder of the repository
        assert (library.name, library.path, library.located()) == ("tinylib", "python/tinylib", "python/tinylib")
        outside = head_library("tinylib", other)
        assert outside.path is None and outside.elsewhere.startswith(
            f"the kernel library 'tinylib' is imported from {(repo / 'python' / 'tinylib').resolve()}, outside the git "
            f"repository {other.resolve()}")
        with pytest.raises(LibraryError, match="outside the git repository"):
            outside.located()
        assert head_library("tinylib", plain).elsewhere.startswith(f"{plain} is in no git repository")
    finally:
        sys.modules.pop("tinylib", None)


def test_outside_pytest_the_library_is_found_by_its_path_in_the_project_folder_or_its_src(tmp_path):
    repo = tmp_path / "repo"
    (repo / "python" / "src").mkdir(parents=True)
    git_init(repo)
    write_library(repo / "python" / "src", BASE)
    (repo / "python" / "single.py").write_text("")
    assert library_path("tinylib", repo / "python") == "python/src/tinylib"
    assert library_path("single", repo / "python") == "python/single.py"
    assert "tinylib" not in sys.modules  # found, not imported
    with pytest.raises(LibraryError, match=r"^no package 'other' in .*python \(nor in its src/\)"):
        library_path("other", repo / "python")
    (tmp_path / "plain").mkdir()
    write_library(tmp_path / "plain", BASE)
    with pytest.raises(LibraryError, match="is in no git repository"):
        library_path("tinylib", tmp_path / "plain")


@pytest.mark.parametrize("file, text, named", [
    ("pytest.ini", "[pytest]\nkernelwatch_kernels = mylib\n", "mylib"),
    ("pyproject.toml", '[tool.pytest.ini_options]\nkernelwatch_kernels = " mylib "\n', "mylib"),
    ("tox.ini", "[pytest]\nmarkers = x\n", ""),  # a configuration that names none
    ("README", "not a configuration\n", ""),
])
def test_the_ini_key_is_read_outside_pytest_from_the_file_pytest_would_read(tmp_path, file, text, named):
    (tmp_path / file).write_text(text)
    assert configured_name(tmp_path) == named


def test_this_repositorys_kernels_implement_the_protocol():
    assert all(callable(getattr(kernels, function)) for function in PROVIDES)
    names = kernels.kernel_names()
    assert len(names) == len(set(names)) == len(kernels.MATMUL_KERNELS) + len(kernels.ELEMENTWISE_KERNELS)
    from kernels.matmul import build_for as matmul_build_for  # the package's `matmul` is a function

    build = kernels.build_for("warptile_128x256", "1000x1000x1000")
    assert build == matmul_build_for("warptile_128x256", 1000, 1000, 1000)
    text, options = kernels.source_of(build)
    assert text == kernels.compile.load_source(build.source)
    assert options == kernels.compile.BASE_OPTIONS + kernels.compile.define_options(build.defines)
    assert kernels.build_for("cublas", "8x8x8") is None and kernels.build_for("cupy_add", "8x8") is None
    add = kernels.build_for("matrix_add_2d_vec4", "8192x8192")
    assert (add.function, add.launch) == ("matrix_add_2d_vec4", "grid=(128, 512, 1) block=(16, 16, 1)")
    assert kernels.build_for("vector_add", "1000").launch == "grid=(4, 1, 1) block=(256, 1, 1)"


@pytest.mark.parametrize("kernel, shape, message", [
    ("naive", "8x8", "the case's shape '8x8' is no matrix product's MxNxK"),
    ("matrix_add_2d", "64", r"matrix_add_2d adds arrays of 2 dimension\(s\), not of shape \(64,\)"),
    ("nope", "8x8x8", "unknown kernel 'nope': neither a matrix product's nor an add's"),
    ("naive", "8xN", "the case's shape '8xN' is no array's shape"),
])
def test_this_repositorys_build_for_says_which_case_it_cannot_build(kernel, shape, message):
    with pytest.raises(ValueError, match=message):
        kernels.build_for(kernel, shape)
