"""The workspace layer speaks only to the Git port: a whole session runs on InMemoryGit, no git installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.model.workspace_events import AgentCommitCreated, SessionBranchCreated
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.workspace import WorkspaceManager, WorkspaceSession

SESSION_ID = "3f2a9c1e-7b4d-4e21-9a0b-5c6d7e8f9a01"
MESSAGE = "Add greeting module\n\nIntroduce a hello() helper used by the CLI."


def _turn(*writes: str, number: int = 1) -> AgentTurn:
    return AgentTurn(
        node_id="code",
        turn_number=number,
        model="claude-test",
        provider="anthropic",
        messages=({"role": "user", "content": "task"}, {"role": "assistant", "content": "I will add it."}),
        files_written=writes,
    )


@pytest.fixture
def git() -> InMemoryGit:
    return InMemoryGit()


def _open(git: InMemoryGit, tmp_path: Path, events: list[Any], **options: Any) -> tuple[Path, WorkspaceSession]:
    repo = git.init_repository(tmp_path / "repos" / "backend", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})
    (tmp_path / "project").mkdir()
    manager = WorkspaceManager(
        WorkspaceSettings(repos={"backend": RepoSettings(path=str(repo), **options)}),
        git,
        ManualClock(),
        tmp_path / "project",
        commit_messages=ScriptedCommitMessages([MESSAGE], repeat_last=True),
        on_event=events.append,
    )
    return repo, manager.setup_session(SESSION_ID, "greeter")


def test_a_turn_is_committed_on_the_session_branch_in_its_worktree(git: InMemoryGit, tmp_path: Path) -> None:
    events: list[Any] = []
    repo, session = _open(git, tmp_path, events)
    context = session.contexts["backend"]
    assert context.worktree_path != repo and (context.worktree_path / "src/app.py").read_text() == "print('hi')\n"
    assert [e.branch for e in events if isinstance(e, SessionBranchCreated)] == [context.branch_name]
    (context.worktree_path / "src/hello.py").write_text("def hello(): ...\n")
    (context.worktree_path / "notes.txt").write_text("not written by this turn\n")

    committed = session.commit_turn(_turn("backend:src/hello.py"))

    [commit] = committed.commits
    assert commit.sha == git.resolve_commit(repo, context.branch_name) == session.snapshot()["backend"]
    assert committed.commit_message == MESSAGE
    assert [(c.path, c.status) for c in git.changed_files(repo, commit.sha)] == [("src/hello.py", "A")]
    entry = git.log(repo, commit.sha, max_count=1)[0]
    assert entry.parents == (context.base_sha,) and entry.author_name == "code (claude-test)"
    assert entry.trailers["Orchestra-Session"] == SESSION_ID and entry.trailers["Orchestra-Turn"] == "1"
    assert [(e.path, e.index) for e in git.status(context.worktree_path)] == [("notes.txt", "?")]
    assert git.resolve_commit(repo, "main") == context.base_sha  # the user's branch never moves
    assert [e.sha for e in events if isinstance(e, AgentCommitCreated)] == [commit.sha]


def test_turns_chain_and_rollback_restores_the_base(git: InMemoryGit, tmp_path: Path) -> None:
    repo, session = _open(git, tmp_path, [])
    worktree = session.contexts["backend"].worktree_path
    (worktree / "a.py").write_text("a\n")
    first = session.commit_turn(_turn("backend:a.py")).commits[0]
    (worktree / "a.py").unlink()
    (worktree / "b.py").write_text("b\n")
    second = session.commit_turn(_turn("backend:a.py", "backend:b.py", number=2)).commits[0]
    assert git.log(repo, second.sha, max_count=2)[1].sha == first.sha
    assert {(c.path, c.status) for c in git.changed_files(repo, second.sha)} == {("a.py", "D"), ("b.py", "A")}
    assert session.commit_turn(_turn("backend:b.py", number=3)).commits == ()  # nothing changed

    restored = session.rollback("backend")

    assert restored.head_sha == restored.base_sha == git.resolve_commit(repo, restored.branch_name)
    assert not (worktree / "b.py").exists() and (worktree / "README.md").read_text() == "hello\n"
    assert git.status(worktree) == ()


def test_in_place_sessions_switch_the_repository_itself(git: InMemoryGit, tmp_path: Path) -> None:
    repo, session = _open(git, tmp_path, [], isolation="in_place")
    context = session.contexts["backend"]
    assert context.worktree_path == repo.resolve() and git.current_branch(repo) == context.branch_name
    (repo / "c.py").write_text("c\n")
    commit = session.commit_turn(_turn("backend:c.py")).commits[0]
    assert git.resolve_commit(repo, "HEAD") == commit.sha and git.status(repo) == ()
