"""A session started again from the beginning, on the Git port (InMemoryGit): a recorded branch that is gone is made
again at its recorded base; a worktree the stopped run made in the session's directory without recording it is
removed with its branch, whose commits (if any beyond the base) stay under an abandoned ref."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.workspace_events import SessionCleanedUp
from orchestra_core.ports.git import Identity
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.workspace.context import WorkspaceContext
from orchestra_core.workspace.errors import WorkspaceError
from orchestra_core.workspace.start_again import UNRECORDED, discard_unrecorded, recreate_branches

WHO = Identity("t", "t@example.com")


@pytest.fixture
def git() -> InMemoryGit:
    return InMemoryGit()


def _context(repo: Path, branch: str, base: str) -> WorkspaceContext:
    return WorkspaceContext(
        repo_name="app", repo_root=repo, worktree_path=repo.parent / "wt", branch_name=branch, base_ref="HEAD",
        base_sha=base, head_sha=base, session_id="7", pipeline_name="p", isolation="worktree",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_a_recorded_branch_that_is_gone_is_made_again_at_its_recorded_base(git: InMemoryGit, tmp_path: Path) -> None:
    repo = git.init_repository(tmp_path / "app", {"a.txt": "a\n"})
    base = git.resolve_commit(repo, "HEAD")
    assert base is not None
    (repo / "b.txt").write_text("b\n")
    git.sync_index(repo, ["b.txt"])
    later = git.commit(repo, "later", author=WHO, committer=WHO)
    git.create_branch(repo, "orchestra/p/kept", later)
    recreate_branches(git, [_context(repo, "orchestra/p/7", base), _context(repo, "orchestra/p/kept", base)])
    assert base != later
    assert git.resolve_commit(repo, "orchestra/p/7") == base  # at the recorded base, not main's head
    assert git.resolve_commit(repo, "orchestra/p/kept") == later  # one that is there is left alone
    with pytest.raises(WorkspaceError, match="recorded base"):
        recreate_branches(git, [_context(repo, "orchestra/p/8", "f" * 40)])


@pytest.mark.parametrize("committed", [False, True])
def test_an_unrecorded_worktree_of_the_session_is_removed_with_its_branch(
    git: InMemoryGit, tmp_path: Path, committed: bool
) -> None:
    repo = git.init_repository(tmp_path / "app", {"a.txt": "a\n"})
    base = git.resolve_commit(repo, "HEAD")
    worktrees = tmp_path / "project" / ".orchestra" / "worktrees" / "7"
    git.create_branch(repo, "orchestra/p/7", str(base))
    worktrees.mkdir(parents=True)
    git.worktree_add(repo, worktrees / "app", "orchestra/p/7")
    head = base
    if committed:  # someone worked there: the commit is kept
        (worktrees / "app" / "c.txt").write_text("c\n")
        git.sync_index(worktrees / "app", ["c.txt"])
        head = git.commit(worktrees / "app", "by hand", author=WHO, committer=WHO)
    events: list[Any] = []
    repos = {"app": RepoSettings(path=str(repo)), "gone": RepoSettings(path=str(tmp_path / "missing"))}
    assert discard_unrecorded(git, repos, tmp_path, worktrees, "7", events.append) == ["app"]
    assert not (worktrees / "app").exists() and "orchestra/p/7" not in git.branches(repo)
    [event] = events
    assert isinstance(event, SessionCleanedUp) and event.reason == UNRECORDED
    assert (event.repo, event.branch, event.head_sha, event.worktree_path) == ("app", "orchestra/p/7", head, str(worktrees / "app"))
    if committed:
        assert event.abandoned_ref == "refs/orchestra/abandoned/7/1"
        assert git.resolve_commit(repo, event.abandoned_ref) == head
    else:
        assert event.abandoned_ref == ""
    assert discard_unrecorded(git, repos, tmp_path, worktrees, "7", events.append) == []  # nothing left: idempotent
