"""Uncommitted work is saved before a worktree is reset, rebuilt or removed (issue 31, item 6): restore (resume),
rollback, rollback on failure, and parallel branches' worktrees at fork and join, with real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.workspace_events import UncommittedWorkSaved, WorkspaceRestored
from orchestra_core.ports.git import GitError
from orchestra_core.testing.clock import ManualClock
from orchestra_core.workspace import WorkspaceError
from orchestra_core.workspace.branches import BranchWorktrees
from orchestra_core.workspace.rollback import roll_back_session
from orchestra_core.workspace.session import WorkspaceSession
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import committed_files, trailers

PREFIX = f"refs/orchestra/abandoned/{SESSION_ID}"


def _edit_like_a_user(worktree: Path) -> None:
    """An edit, a new file, a deletion, a rename and an ignored file: what someone may leave in a worktree."""
    (worktree / "app.py").write_text("my edit\n")
    (worktree / "notes.txt").write_text("my notes\n")
    (worktree / "old.txt").unlink()
    git(worktree, "mv", "move.txt", "moved.txt")
    (worktree / "local.env").write_text("SECRET=1\n")  # ignored: not work, not saved


def _files() -> dict[str, str]:
    return {"app.py": "v1\n", "old.txt": "old\n", "move.txt": "move\n", ".gitignore": "*.env\n"}


def _assert_saved(repo: GitRepo, event: UncommittedWorkSaved, parent: str, reason: str) -> None:
    assert event.reason == reason and event.abandoned_ref.startswith(PREFIX) and event.level == "warning"
    assert sorted(event.paths) == ["app.py", "move.txt", "moved.txt", "notes.txt", "old.txt"]
    assert repo.head(event.abandoned_ref) == event.sha and repo.head(f"{event.sha}~1") == parent
    assert committed_files(repo, event.sha) == ["app.py", "move.txt", "moved.txt", "notes.txt", "old.txt"]
    assert repo.show(event.sha, "app.py") == "my edit\n" and repo.show(event.sha, "moved.txt") == "move\n"
    assert "local.env" not in repo.files_in(event.sha)
    assert trailers(repo, event.sha) == {
        "Orchestra-Pipeline": "p", "Orchestra-Session": SESSION_ID, "Orchestra-Saved": reason,
    }  # fmt: skip


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_restore_saves_a_users_edits_before_it_resets_the_worktree(
    harness: Harness, turn: TurnFactory, isolation: str
) -> None:
    repo = harness.repo("project", _files())
    session = harness.manager(isolation=isolation).setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    worktree = context.worktree_path
    (worktree / "b.txt").write_text("b\n")
    head = session.commit_turn(turn(["project:b.txt"])).git_sha
    _edit_like_a_user(worktree)
    session.restore("project", context.base_sha, reason="resume")
    [saved] = harness.events_of(UncommittedWorkSaved)
    _assert_saved(repo, saved, head, "resume")
    assert saved.worktree_path == str(worktree) and saved.branch == context.branch_name
    [restored] = harness.events_of(WorkspaceRestored)
    assert restored.abandoned_ref == f"{PREFIX}/1" and saved.abandoned_ref == f"{PREFIX}/2"
    assert repo.status(worktree) == "" and (worktree / "app.py").read_text() == "v1\n"
    # `git cherry-pick REF` brings the work back on top of the restored branch.
    git(worktree, "-c", "user.name=u", "-c", "user.email=u@e", "cherry-pick", saved.abandoned_ref)
    assert (worktree / "app.py").read_text() == "my edit\n" and not (worktree / "old.txt").exists()


def test_a_clean_worktree_saves_nothing(harness: Harness) -> None:
    repo = harness.repo("project", _files())
    session = harness.manager().setup_session(SESSION_ID, "p")
    (session.contexts["project"].worktree_path / "local.env").write_text("ignored\n")
    session.restore("project", session.contexts["project"].base_sha, reason="resume")
    assert harness.events_of(UncommittedWorkSaved) == []
    assert repo.git("for-each-ref", "refs/orchestra/") == ""


class _FailingCommits(SubprocessGit):
    def commit_tree(self, repo: Path, tree: str, **kwargs: Any) -> str:
        raise GitError(repo, ["commit-tree"], "disk full", 128)


def test_when_the_work_cannot_be_saved_nothing_is_discarded(harness: Harness) -> None:
    harness.repo("project", _files())
    session = harness.manager(git=_FailingCommits()).setup_session(SESSION_ID, "p")
    worktree = session.contexts["project"].worktree_path
    _edit_like_a_user(worktree)
    with pytest.raises(WorkspaceError, match="disk full"):
        session.rollback("project")
    assert (worktree / "app.py").read_text() == "my edit\n" and (worktree / "notes.txt").exists()


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_rollback_on_failure_saves_the_session_and_branch_worktrees_first(
    harness: Harness, turn: TurnFactory, isolation: str
) -> None:
    repo = harness.repo("project", _files())
    manager = harness.manager(isolation=isolation)
    session = manager.setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    branches = BranchWorktrees(
        session, SubprocessGit(), ManualClock(), manager.worktrees_dir(SESSION_ID), "p", harness.events.append
    )
    branches.fork("fan", None, ["fan:a"])
    branch_tree = branches.worktree_path("fan:a", "project")
    (branch_tree / "branch.txt").write_text("left in the branch\n")
    _edit_like_a_user(context.worktree_path)
    roll_back_session(session, SubprocessGit(), manager.worktrees_dir(SESSION_ID), harness.events.append)
    saved = {event.worktree_path: event for event in harness.events_of(UncommittedWorkSaved)}
    assert set(saved) == {str(context.worktree_path), str(branch_tree)}
    _assert_saved(repo, saved[str(context.worktree_path)], context.base_sha, "rollback")
    in_branch = saved[str(branch_tree)]
    assert in_branch.paths == ("branch.txt",) and repo.show(in_branch.abandoned_ref, "branch.txt") == "left in the branch\n"
    assert not branch_tree.exists()


def test_a_branch_worktree_removed_at_join_or_forked_again_has_its_leftovers_saved_not_merged(
    harness: Harness, turn: TurnFactory
) -> None:
    repo = harness.repo("project", _files())
    manager = harness.manager()
    session: WorkspaceSession = manager.setup_session(SESSION_ID, "p")
    branches = BranchWorktrees(
        session, SubprocessGit(), ManualClock(), manager.worktrees_dir(SESSION_ID), "p", harness.events.append
    )
    branches.fork("fan", None, ["fan:a"])
    worktree = branches.worktree_path("fan:a", "project")
    (worktree / "left.txt").write_text("nobody committed this\n")
    branches.fork("fan", None, ["fan:a"])  # the node runs again: the old worktree goes, its leftovers kept
    (worktree / "again.txt").write_text("nor this\n")
    report = branches.join("fan", None, ["fan:a"], ["fan:a"])
    assert not report.failed and report.merged == {}
    forked, joined = harness.events_of(UncommittedWorkSaved)
    assert (forked.reason, forked.paths, joined.reason, joined.paths) == ("fork", ("left.txt",), "join", ("again.txt",))
    base = session.contexts["project"].base_sha
    assert repo.head(session.contexts["project"].branch_name) == base  # nothing unattributed was merged
    assert repo.head(f"{joined.sha}~1") == base and repo.show(joined.abandoned_ref, "again.txt") == "nor this\n"
