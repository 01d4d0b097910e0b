"""Property: the index-free fast path builds exactly the tree porcelain staging of the same paths gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_adapters.git import SubprocessGit
from tests.support.git_repos import GitRepo, make_repo

NAMES = ["a", "b", "a-b", "a.b", "a0", "ü", "x y"]
BASE_FILES = {"a/a": "1", "a/b/a": "2", "a-b": "3", "b/ü/a0": "4", "a.b": "5", "a0/a/a": "6", "x y/a": "7"}

paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), paths, st.text("xyz\n", max_size=5), st.booleans()),
        st.tuples(st.just("delete"), paths),
        st.tuples(st.just("symlink"), paths, st.sampled_from(["target", "../elsewhere", "b", "a/b"])),
    ),
    min_size=1,
    max_size=6,
)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return make_repo(tmp_path_factory.mktemp("tree-property") / "repo", BASE_FILES)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _make_parents(root: Path, relative: str) -> None:
    parent = root
    for part in Path(relative).parts[:-1]:
        parent = parent / part
        if os.path.lexists(parent) and (parent.is_symlink() or not parent.is_dir()):
            parent.unlink()
        parent.mkdir(exist_ok=True)


def _apply(root: Path, operation: tuple) -> str:
    kind, relative = operation[0], operation[1]
    target = root / relative
    if kind == "delete":
        _remove(target)
        return relative
    _make_parents(root, relative)
    _remove(target)
    if kind == "write":
        target.write_text(operation[2])
        target.chmod(0o755 if operation[3] else 0o644)
    else:
        os.symlink(operation[2], target)
    return relative


def _beyond_symlink(root: Path, relative: str) -> bool:
    parents = Path(relative).parents
    return any((root / parent).is_symlink() for parent in parents if str(parent) != ".")


def _reference_tree(repo: GitRepo, touched: list[str]) -> str:
    for relative in touched:
        target = repo.path / relative
        if _beyond_symlink(repo.path, relative):
            repo.git("rm", "--cached", "-r", "--quiet", "--ignore-unmatch", "--", relative)
        elif target.is_dir() and not target.is_symlink():
            repo.git("add", "-u", "--", relative)
        elif os.path.lexists(target) or repo.git("ls-files", "--", relative):
            repo.git("add", "-A", "--", relative)
    return repo.git("write-tree").strip()


@settings(max_examples=30)
@given(operations=operations)
def test_fast_path_tree_equals_porcelain_tree(base_repo: GitRepo, operations: list[tuple]) -> None:
    base_repo.git("reset", "--quiet", "--hard", "HEAD")
    base_repo.git("clean", "--quiet", "-d", "-x", "--force")
    touched = list(dict.fromkeys(_apply(base_repo.path, operation) for operation in operations))
    change = SubprocessGit().tree_with_files(base_repo.path, "HEAD", touched)
    assert change.tree == _reference_tree(base_repo, touched)
