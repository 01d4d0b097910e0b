"""A lazy session worktree on real git (a run whose nodes all read through Orchestra's own tools): no file
written at setup, every read through the tools is what `git show` gives, writes are committed alone, a reopened
one is still read from git's objects, a restore resets what an agent wrote, a join brings it along lazily, and one
made full matches `git ls-files -s`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.agents.builtin_tools import list_files, read_file, write_file
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.ports.clock import SystemClock
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.branches import BranchWorktrees
from tests.integration.workspace.test_lazy_branch_worktrees import WHO, _files_on_disk, _matches_index, _repo
from tests.support.git_repos import GitRepo


def _manager(tmp_path: Path, repo: GitRepo) -> WorkspaceManager:
    settings = WorkspaceSettings(repos={"app": RepoSettings(path=str(repo.path))})
    return WorkspaceManager(settings, SubprocessGit(), SystemClock(), tmp_path / "project")


@pytest.fixture
def lazy(tmp_path: Path) -> Any:
    repo = _repo(tmp_path)
    manager = _manager(tmp_path, repo)
    session = manager.setup_session("s1", "pipe", lazy=True)
    yield repo, manager, session
    session.close()


def test_a_lazy_session_worktree_writes_no_file_and_reads_what_git_show_gives(lazy: Any, tmp_path: Path) -> None:
    repo, _, session = lazy
    context = session.repo_contexts()["app"]
    assert context.tree_files is not None and session.lazy_repos() == ("app",)
    assert _files_on_disk(context.root) == [] and repo.status(context.root) == ""
    for path in ("README.md", "src/app.py", "src/pkg/deep/mod.py", "docs/guide.md", "z_last.txt", "app_link.py"):
        resolved = "src/app.py" if path == "app_link.py" else path
        assert read_file(context, path) == repo.show("HEAD", resolved), path
    full = _manager(tmp_path / "full", repo).setup_session("s2", "pipe")
    assert list_files(context) == list_files(full.repo_contexts()["app"])
    assert full.lazy_repos() == () and "src/app.py" in _files_on_disk(full.contexts["app"].worktree_path)


def test_writes_are_committed_alone_and_a_reopened_session_is_still_lazy(lazy: Any) -> None:
    repo, manager, session = lazy
    context = session.repo_contexts()["app"]
    write_file(context, WriteTracker(), "src/app.py", "print('lazy')\n")
    worktree = session.contexts["app"].worktree_path
    sha = SubprocessGit().commit(worktree, "work", author=WHO, committer=WHO, paths=["src/app.py"])
    assert repo.git("diff-tree", "--no-commit-id", "--name-status", "-r", sha).split("\n")[:-1] == ["M\tsrc/app.py"]
    assert repo.status(worktree) == "" and _files_on_disk(worktree) == ["src/app.py"]
    session.close()
    reopened = manager.reopen_session(list(session.contexts.values()))
    again = reopened.repo_contexts()["app"]
    assert again.tree_files is not None
    assert read_file(again, "src/app.py") == "print('lazy')\n" and read_file(again, "README.md") == "hello\n"
    reopened.close()


def test_a_restore_makes_the_worktree_again_lazy_at_the_snapshot(lazy: Any) -> None:
    repo, _, session = lazy
    base = session.contexts["app"].head_sha
    write_file(session.repo_contexts()["app"], WriteTracker(), "README.md", "mine\n")
    session.restore("app", base, reason="resume")
    context = session.repo_contexts()["app"]
    assert context.tree_files is not None and _files_on_disk(context.root) == []
    assert read_file(context, "README.md") == "hello\n" and repo.status(context.root) == ""


def test_discarding_changes_in_a_lazy_worktree_resets_what_an_agent_wrote(lazy: Any) -> None:
    repo, _, session = lazy
    worktree = session.contexts["app"].worktree_path
    write_file(session.repo_contexts()["app"], WriteTracker(), "README.md", "mine\n")
    SubprocessGit().discard_changes(worktree, session.contexts["app"].head_sha)
    assert read_file(session.repo_contexts()["app"], "README.md") == "hello\n"
    assert repo.status(worktree) == ""


def test_a_join_brings_a_lazy_session_worktree_along_and_it_made_full_matches_git_ls_files(lazy: Any) -> None:
    repo, manager, session = lazy
    branches = BranchWorktrees(session, SubprocessGit(), SystemClock(), manager.worktrees_dir("s1"), "pipe", lambda e: None)
    branches.fork("fan", None, ["fan:a"], lazy=["fan:a"])
    branch = branches.session_for("fan:a")
    write_file(branch.repo_contexts()["app"], WriteTracker(), "new.txt", "from the branch\n")
    SubprocessGit().commit(branch.contexts["app"].worktree_path, "branch work", author=WHO, committer=WHO, paths=["new.txt"])
    report = branches.join("fan", None, ["fan:a"], ["fan:a"])
    assert not report.failed
    root = session.repo_contexts()["app"]
    worktree = session.contexts["app"].worktree_path
    assert root.tree_files is not None and _files_on_disk(worktree) == []  # still lazy: nothing written
    assert read_file(root, "new.txt") == "from the branch\n" == repo.show(session.contexts["app"].branch_name, "new.txt")
    assert repo.status(worktree) == ""
    assert branches.materialize(None) == ("app",)
    assert session.repo_contexts()["app"].tree_files is None
    assert _matches_index(repo, worktree) and repo.status(worktree) == ""
    assert (worktree / "new.txt").read_text() == "from the branch\n"
