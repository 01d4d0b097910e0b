"""InMemoryGit beside real git: the same object ids, status and diffs for the same work, and no git process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.ports.git import Git, Identity
from orchestra_core.testing.contracts.git import AUTHOR, COMMITTER, WHEN
from orchestra_core.testing.git import InMemoryGit
from tests.support.git_repos import make_repo

FILES = {"README.md": "hello\n", "src/app.py": "print('hi')\n", "a-b": "1", "a.b": "2", "a/x": "3", "ü/x y": "4"}
CHANGED = ["README.md", "src/app.py", "src/new.py", "a/x", "a0", "run.sh", "link", "gone"]


def _work(root: Path) -> None:
    """The same edits in either repository: changes, additions, a deletion, an executable, a symlink."""
    (root / "README.md").write_text("hello\nworld\n")
    (root / "src/app.py").unlink()
    (root / "src/new.py").write_text("print('new')\n")
    (root / "a/x").write_text("three\n")
    (root / "a0").write_text("sorted after a/\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("src/new.py", root / "link")
    (root / "untracked.txt").write_text("left alone\n")


def _pair(tmp_path: Path) -> tuple[tuple[Git, Path], tuple[Git, Path]]:
    real = make_repo(tmp_path / "real", FILES).path
    fake = InMemoryGit()
    return (SubprocessGit(), real), (fake, fake.init_repository(tmp_path / "fake", FILES))


def test_trees_and_commits_get_the_ids_git_gives_them(tmp_path: Path) -> None:
    (real_git, real), (fake_git, fake) = _pair(tmp_path)
    assert real_git.tree_with_files(real, "HEAD", []).tree == fake_git.tree_with_files(fake, "HEAD", []).tree
    _work(real)
    _work(fake)
    real_tree = real_git.tree_with_files(real, "HEAD", CHANGED).tree
    assert fake_git.tree_with_files(fake, "HEAD", CHANGED).tree == real_tree
    made = [
        git.commit_tree(root, real_tree, parents=[], message="Root\n\nKey: v\n", author=AUTHOR, committer=COMMITTER)
        for git, root in ((real_git, real), (fake_git, fake))
    ]
    assert made[0] == made[1]


def test_status_and_diffs_read_like_gits(tmp_path: Path) -> None:
    (real_git, real), (fake_git, fake) = _pair(tmp_path)
    for git, root in ((real_git, real), (fake_git, fake)):
        _work(root)
        git.sync_index(root, ["README.md", "src/app.py", "src/new.py"])
    assert fake_git.status(fake) == real_git.status(real)
    assert fake_git.diff(fake) == real_git.diff(real)
    assert fake_git.diff(fake, "HEAD", paths=["a", "run.sh"]) == real_git.diff(real, "HEAD", paths=["a", "run.sh"])
    trees = [git.tree_with_files(root, "HEAD", CHANGED) for git, root in ((real_git, real), (fake_git, fake))]
    assert fake_git.diff(fake, trees[1].base_tree, trees[1].tree) == real_git.diff(real, trees[0].base_tree, trees[0].tree)


def test_it_never_starts_a_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    git = InMemoryGit()
    repo = git.init_repository(tmp_path / "repo", FILES)
    git.create_branch(repo, "work", git.resolve_commit(repo, "HEAD") or "")
    git.worktree_add(repo, tmp_path / "wt", "work")
    _work(tmp_path / "wt")
    written = [path for path in CHANGED if path != "gone"]
    sha = git.commit(tmp_path / "wt", "Work", author=AUTHOR, committer=COMMITTER, paths=written)
    assert git.log(repo, "work", max_count=1)[0].sha == sha
    assert {c.path for c in git.changed_files(repo, sha)} == set(written)


def test_repositories_of_one_fake_are_apart_and_identities_get_a_time(tmp_path: Path) -> None:
    git = InMemoryGit()
    one, two = git.init_repository(tmp_path / "one", {"a": "1"}), git.init_repository(tmp_path / "two", {})
    assert git.branches(one) == ("main",) and git.branches(two) == ()
    assert git.repository(two).common_dir == (tmp_path / "two" / ".git").resolve()
    (two / "b").write_text("2")
    git.sync_index(two, ["b"])
    undated = Identity("n", "e@x")
    sha = git.commit(two, "first", author=undated, committer=Identity("c", "c@x", WHEN))
    entry = git.log(two, sha)[0]
    assert entry.parents == () and entry.authored_at.endswith("+00:00") and git.resolve_commit(one, sha) is None
