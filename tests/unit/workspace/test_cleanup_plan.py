"""The cleanup use case on the in-memory ports (no git, no store file): `--older-than` against a manual clock,
and the CLI's duration parsing."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import typer

from orchestra_cli.commands.cleanup import parse_age
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.workspace_events import SessionBranchCreated, SessionCleanedUp, WorktreeCreated
from orchestra_core.ports.git import Identity
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record, history
from orchestra_core.session.codec import decode_record
from orchestra_core.testing import InMemoryGit, InMemorySessionLocks, InMemorySessionStore, ManualClock
from orchestra_core.workspace.cleanup import CleanupOptions, CleanupPlanner
from orchestra_core.workspace.cleanup_apply import Cleanup

BRANCH = "orchestra/p/1"
ME = Identity("t", "t@example.com")


def _setup(tmp_path: Path) -> tuple[Cleanup, InMemoryGit, InMemorySessionStore, ManualClock, Path, str]:
    """One finished session whose branch has a commit of its own in a worktree under the project."""
    clock = ManualClock()
    git, store, locks = InMemoryGit(), InMemorySessionStore(clock), InMemorySessionLocks()
    root = git.init_repository(tmp_path / "app", {"a.txt": "a\n"}).resolve()
    base = git.resolve_commit(root, "HEAD")
    assert base is not None
    worktree = tmp_path / ".orchestra" / "worktrees" / "1" / "app"
    git.create_branch(root, BRANCH, base)
    worktree.parent.mkdir(parents=True)
    git.worktree_add(root, worktree, BRANCH)
    (worktree / "b.txt").write_text("b\n", encoding="utf-8")
    git.sync_index(worktree, ["b.txt"])
    head = git.commit(worktree, "b", author=ME, committer=ME)
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, session, SessionBranchCreated(repo="app", branch=BRANCH, base_sha=base))
    append_record(store, session, WorktreeCreated(repo="app", path=str(worktree), branch=BRANCH, base_sha=base))
    append_record(store, session, PipelineLifecycle(LifecycleEvent.COMPLETED, "p", status=StageStatus.SUCCESS))
    settings = WorkspaceSettings(repos={"app": RepoSettings(path=str(root))})
    planner = CleanupPlanner(store, locks, git, clock, settings, tmp_path, tmp_path)
    return Cleanup(planner, store, locks, git, tmp_path), git, store, clock, root, head


def test_older_than_removes_only_sessions_idle_for_longer(tmp_path: Path) -> None:
    cleanup, git, store, clock, root, head = _setup(tmp_path)
    clock.advance(2 * 3600)

    recent = cleanup.run(CleanupOptions(older_than=timedelta(hours=3), force=True))
    assert [(item.reason, item.action) for item in recent.items] == [("too-recent", "keep")]
    assert git.resolve_commit(root, BRANCH) == head

    done = cleanup.run(CleanupOptions(older_than=timedelta(hours=1), force=True))
    [removed] = done.removed
    assert (removed.reason, removed.detail, removed.abandoned_refs) == ("forced", "unmerged", ("refs/orchestra/abandoned/1/1",))
    assert git.resolve_commit(root, BRANCH) is None
    assert git.resolve_commit(root, "refs/orchestra/abandoned/1/1") == head
    assert not (tmp_path / ".orchestra" / "worktrees" / "1").exists()
    [event] = [decode_record(turn) for turn in history(store, "1") if turn.type_id.endswith("SessionCleanedUp")]
    assert isinstance(event, SessionCleanedUp) and event.head_sha == head


def test_a_dry_run_plans_without_changing_anything(tmp_path: Path) -> None:
    cleanup, git, store, _, root, head = _setup(tmp_path)
    turns = len(list(history(store, "1")))
    plan = cleanup.run(CleanupOptions(force=True), dry_run=True)
    assert [item.reason for item in plan.removed] == ["forced"] and plan.removed[0].abandoned_refs == ()
    assert git.resolve_commit(root, BRANCH) == head and git.resolve_commit(root, "refs/orchestra/abandoned/1/1") is None
    assert len(list(history(store, "1"))) == turns


def test_a_session_a_budget_stopped_is_kept_for_its_resume_unless_forced(tmp_path: Path) -> None:
    cleanup, git, store, _, root, head = _setup(tmp_path)
    append_record(store, "1", PipelineLifecycle(LifecycleEvent.BUDGET_EXCEEDED, "p", error="budget reached"))
    [kept] = cleanup.run(CleanupOptions()).items
    assert (kept.reason, kept.action, kept.status) == ("budget-exceeded", "keep", "budget_exceeded")
    assert kept.detail == "a budget stopped it; `orchestra resume 1 --max-cost N` continues it"
    assert git.resolve_commit(root, BRANCH) == head
    [removed] = cleanup.run(CleanupOptions(force=True)).removed
    assert removed.detail.startswith("budget-exceeded")


@pytest.mark.parametrize(("text", "expected"), [
    ("30m", timedelta(minutes=30)), ("12h", timedelta(hours=12)), ("7d", timedelta(days=7)),
    ("2w", timedelta(weeks=2)), (" 1h ", timedelta(hours=1)),
])  # fmt: skip
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_age(text) == expected


@pytest.mark.parametrize("text", ["", "7", "3s", "0d", "-1h", "1.5h", "h", "1 week"])
def test_bad_durations_exit_2(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as raised:
        parse_age(text)
    assert raised.value.exit_code == 2
    assert f"--older-than {text!r}" in capsys.readouterr().err
