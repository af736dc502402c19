"""kernelwatch.ab.ref_tree: the git worktree a reference commit is built from, and its errors."""

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kernelwatch.ab.ref_tree import RefError, RefTree
from tests.support.git_repos import git

ALIAS = "kernelwatch_base_kernels"


def write_fake_kernels(repo: Path, tile: int) -> None:
    """A tiny package with the suite's layout whose relative imports show which tree they came from."""
    package = repo / "kernels"
    (package / "cuda").mkdir(parents=True, exist_ok=True)
    (package / "cuda" / "scale.cu").write_text('extern "C" __global__ void scale(float *x) { x[0] *= 2; }\n')
    (package / "registry.py").write_text(f"TILE = {tile}\n")
    (package / "compile.py").write_text("from .registry import TILE\n\n\ndef describe():\n    return f'tile {TILE}'\n")
    (package / "__init__.py").write_text("from .compile import describe\nfrom .registry import TILE\n")


@pytest.fixture
def suite_repo(tmp_path, monkeypatch):
    """A git repository with two commits of a fake suite: TILE = 16 (HEAD~1), then TILE = 32 (HEAD).
    Temporary worktrees go under tmp_path/scratch, so that leftovers can be seen."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_fake_kernels(repo, tile=16)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tile 16")
    git(repo, "tag", "tile16")
    write_fake_kernels(repo, tile=32)
    git(repo, "commit", "-q", "-am", "tile 32")
    return repo


def worktrees(repo):
    return [line for line in git(repo, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]


def assert_no_worktree_left(repo):
    assert worktrees(repo) == [f"worktree {repo}"]
    assert list(Path(tempfile.gettempdir()).iterdir()) == []
    assert ALIAS not in sys.modules


@pytest.fixture
def fake_head_kernels(suite_repo, monkeypatch):
    """`import kernels` gives the fake repository's working tree for the duration of the test;
    the suite's own kernels modules are put back afterwards."""
    def kernels_modules():
        return [m for m in sys.modules if m == "kernels" or m.startswith("kernels.")]

    saved = {m: sys.modules.pop(m) for m in kernels_modules()}
    monkeypatch.syspath_prepend(str(suite_repo))
    head = importlib.import_module("kernels")
    assert Path(head.__file__).parent == suite_repo / "kernels"
    yield head
    for m in kernels_modules():
        del sys.modules[m]
    sys.modules.update(saved)


def test_base_alias_sees_the_old_constant_while_head_kernels_sees_the_new(suite_repo, fake_head_kernels):
    with RefTree(suite_repo, "HEAD~1") as tree:
        base = tree.load_package("kernels", ALIAS)
        assert (base.TILE, base.describe()) == (16, "tile 16")
        assert base.__name__ == ALIAS
        assert sys.modules[f"{ALIAS}.registry"].TILE == 16
        import kernels

        assert kernels is fake_head_kernels
        assert (kernels.TILE, kernels.describe()) == (32, "tile 32")
        assert sys.modules["kernels.registry"].TILE == 32
    assert_no_worktree_left(suite_repo)


def test_loading_the_base_leaves_the_suites_own_kernels_package_alone(suite_repo):
    import kernels

    before = {m: module for m, module in sys.modules.items() if m == "kernels" or m.startswith("kernels.")}
    with RefTree(suite_repo, "tile16") as tree:
        assert tree.load_package("kernels", ALIAS).TILE == 16
    after = {m: module for m, module in sys.modules.items() if m == "kernels" or m.startswith("kernels.")}
    assert after == before
    assert sys.modules["kernels"] is kernels


def test_sha_and_path_name_the_checked_out_commit(suite_repo):
    expected = git(suite_repo, "rev-parse", "tile16")
    with RefTree(suite_repo, "tile16") as tree:
        assert tree.sha == expected
        assert (tree.path / "kernels" / "registry.py").read_text() == "TILE = 16\n"
        assert f"worktree {tree.path}" in worktrees(suite_repo)
        path = tree.path
    assert not path.exists()
    assert_no_worktree_left(suite_repo)


def test_unknown_ref_is_an_error_naming_ref_and_repository(suite_repo):
    with pytest.raises(RefError, match=f"^unknown git ref 'no-such-branch' in {suite_repo}$"):
        with RefTree(suite_repo, "no-such-branch"):
            pass
    assert_no_worktree_left(suite_repo)


@pytest.mark.parametrize("ref", ["", "  ", "--all", None])
def test_ref_that_is_empty_or_looks_like_an_option_is_refused(suite_repo, ref):
    with pytest.raises(RefError, match="not a git ref"):
        RefTree(suite_repo, ref)


def test_directory_outside_git_is_an_error(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RefError, match="is not a git repository"):
        with RefTree(plain, "HEAD"):
            pass


def test_a_package_in_a_folder_of_the_tree_and_a_module_file_load_from_their_paths(suite_repo):
    """The project's kernel library lies wherever the project keeps it (a folder of the repository, pytest's rootdir
    below its top): the path is relative to the tree's top; a module file loads as well as a package."""
    (suite_repo / "python" / "mylib").mkdir(parents=True)
    (suite_repo / "python" / "mylib" / "__init__.py").write_text("from .sizes import TILE\n")
    (suite_repo / "python" / "mylib" / "sizes.py").write_text("TILE = 8\n")
    (suite_repo / "python" / "single.py").write_text("TILE = 4\n")
    git(suite_repo, "add", "-A")
    git(suite_repo, "commit", "-q", "-m", "a library in a folder")
    with RefTree(suite_repo, "HEAD") as tree:
        assert tree.load_package("python/mylib", ALIAS).TILE == 8
        assert sys.modules[f"{ALIAS}.sizes"].TILE == 8
        assert tree.load_package("python/single.py", "kernelwatch_base_single").TILE == 4
        with pytest.raises(RefError, match=r"^'HEAD' \([0-9a-f]{12}\) has no package at python/other$"):
            tree.load_package("python/other", "kernelwatch_base_other")
    assert "kernelwatch_base_single" not in sys.modules
    assert_no_worktree_left(suite_repo)


def test_worktree_is_removed_after_an_exception_inside_the_with_block(suite_repo):
    with pytest.raises(RuntimeError, match="a timing failed"):
        with RefTree(suite_repo, "HEAD~1") as tree:
            tree.load_package("kernels", ALIAS)
            assert len(worktrees(suite_repo)) == 2
            raise RuntimeError("a timing failed")
    assert_no_worktree_left(suite_repo)


def test_dirty_working_tree_is_fine_and_left_as_it_was(suite_repo):
    (suite_repo / "kernels" / "registry.py").write_text("TILE = 64\n")
    (suite_repo / "kernels" / "cuda" / "new_kernel.cu").write_text("// not committed\n")
    (suite_repo / "staged.txt").write_text("in the index only\n")
    git(suite_repo, "add", "staged.txt")
    status = git(suite_repo, "status", "--porcelain")
    staged = git(suite_repo, "diff", "--cached")
    assert status  # the tree really is dirty
    with RefTree(suite_repo, "HEAD") as tree:
        assert tree.load_package("kernels", ALIAS).TILE == 32
        assert not (tree.path / "kernels" / "cuda" / "new_kernel.cu").exists()
    assert git(suite_repo, "status", "--porcelain") == status
    assert git(suite_repo, "diff", "--cached") == staged
    assert (suite_repo / "kernels" / "registry.py").read_text() == "TILE = 64\n"
    assert_no_worktree_left(suite_repo)


def test_user_checkout_hooks_do_not_run_for_the_worktree(suite_repo):
    marker = suite_repo.parent / "hook-ran"
    hook = suite_repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(suite_repo, "checkout", "-q", "HEAD~1")
    assert marker.exists()  # the hook works for the user's own checkouts
    marker.unlink()
    with RefTree(suite_repo, "HEAD"):
        pass
    assert not marker.exists()


def test_load_package_outside_the_with_block_is_an_error(suite_repo):
    with pytest.raises(RuntimeError, match="inside the with-block"):
        RefTree(suite_repo, "HEAD").load_package("kernels", ALIAS)


@pytest.mark.parametrize("alias", ["kernels", "numpy"])
def test_alias_that_would_shadow_a_package_is_refused(suite_repo, alias):
    with RefTree(suite_repo, "HEAD") as tree:
        with pytest.raises(ValueError, match=f"alias '{alias}' would shadow"):
            tree.load_package("kernels", alias=alias)
    assert sys.modules["numpy"].__name__ == "numpy"


def test_base_package_that_fails_to_import_is_a_ref_error(suite_repo):
    (suite_repo / "kernels" / "__init__.py").write_text("from .no_such_module import anything\n")
    git(suite_repo, "commit", "-q", "-am", "broken import")
    with RefTree(suite_repo, "HEAD") as tree:
        with pytest.raises(RefError, match=r"^kernels of 'HEAD' \([0-9a-f]{12}\) does not import: .*no_such_module"):
            tree.load_package("kernels", ALIAS)
        assert ALIAS not in sys.modules
    assert_no_worktree_left(suite_repo)


def test_missing_package_is_a_ref_error(suite_repo):
    with RefTree(suite_repo, "HEAD") as tree:
        with pytest.raises(RefError, match=r"^'HEAD' \([0-9a-f]{12}\) has no package at kernelwatch$"):
            tree.load_package("kernelwatch", alias="kernelwatch_base_harness")


def killed_git(step: str, returncode: int):
    """The real git, except that the call whose arguments hold `step` ends with `returncode`."""
    from kernelwatch.ab import ref_tree

    real = ref_tree._git

    def git_(repo_root, *args):
        if step in args:
            return subprocess.CompletedProcess(args, returncode, "", f"git: {step} ended with {returncode}")
        return real(repo_root, *args)
    return git_


@pytest.mark.parametrize("returncode", [128, -9], ids=["failed", "killed by a signal"])
@pytest.mark.parametrize("step, message", [("--git-dir", "is not a git repository"), ("--verify", "unknown git ref")])
def test_a_git_that_fails_or_is_killed_while_resolving_is_an_error(suite_repo, monkeypatch, returncode, step, message):
    from kernelwatch.ab import ref_tree

    monkeypatch.setattr(ref_tree, "_git", killed_git(step, returncode))
    with pytest.raises(RefError, match=message):
        ref_tree.resolve_ref(suite_repo, "HEAD")


@pytest.mark.parametrize("returncode", [128, -9], ids=["failed", "killed by a signal"])
def test_a_worktree_that_git_cannot_add_is_an_error_naming_the_commit(suite_repo, monkeypatch, returncode):
    from kernelwatch.ab import ref_tree

    monkeypatch.setattr(ref_tree, "_git", killed_git("add", returncode))
    sha = git(suite_repo, "rev-parse", "HEAD")
    with pytest.raises(RefError, match=rf"^git could not check out 'HEAD' \({sha[:12]}\): git: add ended with"):
        with RefTree(suite_repo, "HEAD"):
            pass
    assert_no_worktree_left(suite_repo)


def test_an_alias_equal_to_the_package_name_is_refused_even_where_no_such_package_is_imported(suite_repo):
    name = "suite_tools"
    assert name not in sys.modules
    with RefTree(suite_repo, "HEAD") as tree:
        with pytest.raises(ValueError, match="alias 'suite_tools' would shadow"):
            # an equal string spelled anew, as a caller composes one: not the very object `name` is
            tree.load_package(f"tools/{name}", alias="".join(["suite_", "tools"]))
    assert_no_worktree_left(suite_repo)


def test_a_package_failing_to_import_over_an_earlier_one_leaves_nothing_under_an_alias_spelled_anew(tmp_path):
    from kernelwatch.ab.ref_tree import import_package_as

    good, broken = tmp_path / "good", tmp_path / "broken"
    good.mkdir()
    broken.mkdir()
    (good / "__init__.py").write_text("VALUE = 1\n")
    (broken / "__init__.py").write_text("raise ImportError('broken on purpose')\n")
    # src/kernelwatch/cause/stored.py composes its aliases at run time: each call's alias is an equal string, not the
    # object that names the earlier import in sys.modules
    prefix = "kernel_suite_test_"
    assert import_package_as(good, prefix + "reimported").VALUE == 1
    with pytest.raises(ImportError, match="broken on purpose"):
        import_package_as(broken, "".join([prefix, "reimported"]))
    assert prefix + "reimported" not in sys.modules
