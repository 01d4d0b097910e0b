"""Lazy branch worktrees on real git: nothing is written at fork, every read through the tools is what
`git show` gives, listing and searching see the whole tree, symbolic links follow the same rules as in a full
checkout, writes are committed alone, and a worktree made full matches `git ls-files -s`."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.git.command import GitCommand
from orchestra_core.agents.builtin_tools import (
    ToolUsageError,
    edit_file,
    list_files,
    read_file,
    search_code,
    write_file,
)
from orchestra_core.agents.path_guard import ToolPathError
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.git import Identity
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.branches import BranchWorktrees
from tests.support.git_repos import GitRepo, make_repo

WHO = Identity("t", "t@example.com")
FILES = {
    "README.md": "hello\n",
    "src/app.py": "print('hi')\n",
    "src/pkg/deep/mod.py": "VALUE = 1\n",
    "src/pkg/deep/other.py": "OTHER = 2\n",
    "docs/guide.md": "# Guide\nhello again\n",
    "z_last.txt": "last\n",
    ".orchestra/notes.txt": "state\n",
}


class CountingCommand(GitCommand):
    """Counts the git processes started."""

    def __init__(self) -> None:
        super().__init__()
        self.started = 0

    def _spawn(self, cwd: Path, argv: list[str], args: Sequence[str], stdin: bytes | None, env: Any, ok: Any) -> Any:
        self.started += 1
        return super()._spawn(cwd, argv, args, stdin, env, ok)

    def popen(self, cwd: Path, args: Sequence[str]) -> subprocess.Popen[bytes]:
        self.started += 1
        return super().popen(cwd, args)


def _repo(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "repo", FILES)
    (repo.path / "tool.sh").write_text("#!/bin/sh\necho tool\n")
    (repo.path / "tool.sh").chmod(0o755)
    os.symlink("src/app.py", repo.path / "app_link.py")
    os.symlink("src/pkg", repo.path / "pkg_link")
    os.symlink("../outside.txt", repo.path / "escape.txt")
    os.symlink("/etc/hostname", repo.path / "absolute.txt")
    os.symlink(".git/config", repo.path / "git_config")
    (tmp_path / "outside.txt").write_text("secret\n")
    repo.commit_all("links and a script")
    return repo


def _branches(tmp_path: Path, repo: GitRepo, git: SubprocessGit | None = None) -> BranchWorktrees:
    git = git or SubprocessGit()
    manager = WorkspaceManager(
        WorkspaceSettings(repos={"app": RepoSettings(path=str(repo.path))}), git, SystemClock(), tmp_path / "project"
    )
    session = manager.setup_session("s1", "pipe")
    return BranchWorktrees(session, git, SystemClock(), manager.worktrees_dir("s1"), "pipe", lambda event: None)


def _files_on_disk(root: Path) -> list[str]:
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if d != ".git"]
        found += [Path(directory, name).relative_to(root).as_posix() for name in files if name != ".git"]
    return sorted(found)


def _repo_context(branches: BranchWorktrees, path: str) -> RepoContext:
    return branches.session_for(path).repo_contexts()["app"]


@pytest.fixture
def forked(tmp_path: Path) -> tuple[GitRepo, BranchWorktrees, RepoContext, RepoContext]:
    repo = _repo(tmp_path)
    branches = _branches(tmp_path, repo)
    branches.fork("fan", None, ["fan:lazy", "fan:full"], lazy=["fan:lazy"])
    yield repo, branches, _repo_context(branches, "fan:lazy"), _repo_context(branches, "fan:full")
    for session in branches.sessions():
        session.close()


def test_a_lazy_branch_worktree_writes_no_file_and_git_sees_no_change(forked: Any) -> None:
    repo, _, lazy, full = forked
    assert _files_on_disk(lazy.root) == [] and lazy.tree_files is not None
    assert repo.status(lazy.root) == "" and repo.git("-C", str(lazy.root), "rev-parse", "HEAD").strip() == repo.head()
    assert full.tree_files is None and "src/app.py" in _files_on_disk(full.root)


def test_every_read_through_the_tools_is_what_git_show_gives(forked: Any) -> None:
    repo, _, lazy, _ = forked
    tracked = [path for path in repo.files_in("HEAD") if not path.startswith((".orchestra/", "escape", "absolute", "git_"))]
    for path in tracked:
        target = os.readlink(repo.path / path) if (repo.path / path).is_symlink() else path
        resolved = (Path(path).parent / target).as_posix() if (repo.path / path).is_symlink() else path
        if (repo.path / resolved).is_dir():
            continue
        assert read_file(lazy, path) == repo.show("HEAD", resolved), path
    assert read_file(lazy, "pkg_link/deep/mod.py") == repo.show("HEAD", "src/pkg/deep/mod.py")
    assert read_file(lazy, "docs/guide.md", start_line=2, end_line=2) == "hello again\n"
    assert _files_on_disk(lazy.root) == []  # reads write nothing


def test_listing_and_searching_a_lazy_worktree_see_what_a_full_checkout_shows(forked: Any) -> None:
    _, _, lazy, full = forked
    assert list_files(lazy) == list_files(full)
    assert list_files(lazy, pattern="*.py", path="src") == list_files(full, pattern="*.py", path="src")
    assert list_files(lazy, path="pkg_link") == list_files(full, path="pkg_link")
    assert search_code(lazy, "hello") == search_code(full, "hello")
    assert search_code(lazy, "VALUE", path="src/pkg") == search_code(full, "VALUE", path="src/pkg")
    listed = list_files(lazy).split("\n")
    assert "app_link.py" in listed and not {"escape.txt", "absolute.txt", "git_config"} & set(listed)
    assert not any(path.startswith(".orchestra") for path in listed)


def test_a_symbolic_link_read_lazily_does_not_escape(forked: Any) -> None:
    _, _, lazy, full = forked
    for context in (lazy, full):
        for path in ("escape.txt", "absolute.txt", "git_config", ".orchestra/notes.txt", ".git/config"):
            with pytest.raises(ToolPathError):
                read_file(context, path)
        with pytest.raises(ToolPathError):
            write_file(context, WriteTracker(), "escape.txt", "x")
    with pytest.raises(ToolUsageError, match="is a directory"):
        read_file(lazy, "src/pkg")
    with pytest.raises(ToolUsageError, match="no such file"):
        read_file(lazy, "src/missing.py")


def test_writes_are_materialised_and_committed_alone(forked: Any) -> None:
    repo, branches, lazy, _ = forked
    tracker = WriteTracker()
    edit_file(lazy, tracker, "src/app.py", "hi", "lazy")
    write_file(lazy, tracker, "pkg_link/deep/new.py", "NEW = 3\n")
    assert _files_on_disk(lazy.root) == ["src/app.py", "src/pkg/deep/new.py"]
    context = branches.session_for("fan:lazy").contexts["app"]
    git = SubprocessGit()
    sha = git.commit(context.worktree_path, "work", author=WHO, committer=WHO, paths=["src/app.py", "src/pkg/deep/new.py"])
    assert sorted(repo.git("diff-tree", "--no-commit-id", "--name-status", "-r", sha).split("\n")[:-1]) == [
        "A\tsrc/pkg/deep/new.py",
        "M\tsrc/app.py",
    ]
    assert repo.status(lazy.root) == ""
    assert read_file(lazy, "src/app.py") == "print('lazy')\n" and read_file(lazy, "README.md") == "hello\n"
    with pytest.raises(ToolUsageError):
        write_file(lazy, WriteTracker(), "README.md/inside.txt", "a file is not a directory")


def test_a_lazy_worktree_made_full_matches_git_ls_files(forked: Any) -> None:
    repo, branches, lazy, full = forked
    write_file(lazy, WriteTracker(), "README.md", "mine\n")
    assert branches.materialize("fan:lazy/inner:x") == ("app",)
    assert branches.materialize("fan:lazy") == () and branches.materialize(None) == ()
    assert branches.session_for("fan:lazy").repo_contexts()["app"].tree_files is None
    assert (lazy.root / "README.md").read_text() == "mine\n"
    (lazy.root / "README.md").write_text("hello\n")
    for context in (lazy, full):
        assert _matches_index(repo, context.root)
        assert repo.status(context.root) == ""


def _matches_index(repo: GitRepo, root: Path) -> bool:
    """Every entry of `git ls-files -s` is on disk with that mode and blob."""
    for line in repo.git("-C", str(root), "ls-files", "-s").split("\n")[:-1]:
        meta, path = line.split("\t")
        mode, blob, _stage = meta.split()
        file = root / path
        data = os.readlink(file).encode() if file.is_symlink() else file.read_bytes()
        actual = "120000" if file.is_symlink() else ("100755" if os.access(file, os.X_OK) else "100644")
        if (actual, hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()) != (mode, blob):
            return False
    return True


def test_a_lazy_fork_costs_two_git_processes_more_than_a_full_one_and_the_merge_is_the_same(tmp_path: Path) -> None:
    counts = {}
    trees = {}
    for kind in ("full", "lazy"):
        repo = _repo(tmp_path / kind)
        command = CountingCommand()
        git = SubprocessGit(command)
        branches = _branches(tmp_path / kind, repo, git)
        before = command.started
        branches.fork("fan", None, ["fan:a", "fan:b"], lazy=["fan:a", "fan:b"] if kind == "lazy" else [])
        counts[kind] = command.started - before
        for path, name in (("fan:a", "a.txt"), ("fan:b", "src/app.py")):
            context = branches.session_for(path).repo_contexts()["app"]
            write_file(context, WriteTracker(), name, f"{path}\n")
            worktree = branches.session_for(path).contexts["app"].worktree_path
            git.commit(worktree, f"write {name}", author=WHO, committer=WHO, paths=[name])
        report = branches.join("fan", None, ["fan:a", "fan:b"], ["fan:a", "fan:b"])
        assert not report.failed and len(report.merged) == 2
        trees[kind] = repo.git("rev-parse", "orchestra/pipe/s1^{tree}").strip()
        assert repo.branches() == ["main", "orchestra/pipe/s1"] and len(repo.git("worktree", "list").split("\n")) == 3
        assert not (tmp_path / kind / "project" / ".orchestra" / "worktrees" / "s1" / "fan:a").exists()
    assert trees["lazy"] == trees["full"]
    # per branch: `read-tree` (the index, without writing files) and the check of the filters it could run
    assert counts["lazy"] == counts["full"] + 4
