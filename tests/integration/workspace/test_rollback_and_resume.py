"""Rollback to the base, restore to a snapshot, reopen a recorded session, and a whole session's life."""

from __future__ import annotations

import shutil

import pytest

from orchestra_core.workspace import WorkspaceError, WorkspaceRestored
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory
from tests.support.git_repos import git


def test_rollback_discards_and_recreates_the_worktree_at_base(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project", {"app.py": "v1\n"})
    session = harness.manager().setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    worktree = context.worktree_path
    (worktree / "app.py").write_text("v2\n")
    session.commit_turn(turn(["project:app.py"]))
    (worktree / "scratch.txt").write_text("uncommitted junk")
    (worktree / "app.py").write_text("half-done edit\n")
    restored = session.rollback("project")
    assert restored.head_sha == context.base_sha == repo.head(context.branch_name)
    assert (worktree / "app.py").read_text() == "v1\n" and not (worktree / "scratch.txt").exists()
    assert (
        repo.status(worktree) == ""
        and git(worktree, "symbolic-ref", "--short", "HEAD").strip() == context.branch_name
    )
    assert session.snapshot() == {"project": context.base_sha}
    [event] = harness.events_of(WorkspaceRestored)
    assert (event.reason, event.sha) == ("rollback", context.base_sha)


def test_restore_to_a_checkpoint_snapshot_then_continue(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    session = harness.manager().setup_session(SESSION_ID, "p")
    worktree = session.contexts["project"].worktree_path
    shas = []
    for number in range(3):
        (worktree / "a.txt").write_text(f"{number}\n")
        shas.append(session.commit_turn(turn(["project:a.txt"], number=number)).git_sha)
    checkpoint = {"project": shas[0]}
    session.restore("project", checkpoint["project"])
    assert (worktree / "a.txt").read_text() == "0\n" and session.snapshot() == checkpoint
    (worktree / "b.txt").write_text("after resume\n")
    sha = session.commit_turn(turn(["project:b.txt"], number=9)).git_sha
    assert repo.head(f"{sha}~1") == shas[0]
    with pytest.raises(WorkspaceError, match="is not a commit"):
        session.restore("project", "0123456789abcdef0123456789abcdef01234567")
    with pytest.raises(WorkspaceError, match="not a repo of this workspace"):
        session.rollback("nope")


def test_rollback_in_place_resets_the_repository(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project", {"app.py": "v1\n"})
    session = harness.manager(isolation="in_place").setup_session(SESSION_ID, "p")
    (repo.path / "app.py").write_text("v2\n")
    session.commit_turn(turn(["project:app.py"]))
    (repo.path / "new.txt").write_text("untracked")
    session.rollback("project")
    assert (repo.path / "app.py").read_text() == "v1\n" and not (repo.path / "new.txt").exists()
    assert repo.head() == session.contexts["project"].base_sha


def test_reopen_recreates_a_missing_worktree_on_the_session_branch(
    harness: Harness, turn: TurnFactory
) -> None:
    repo = harness.repo("project")
    manager = harness.manager()
    first = manager.setup_session(SESSION_ID, "p")
    worktree = first.contexts["project"].worktree_path
    (worktree / "a.txt").write_text("a\n")
    sha = first.commit_turn(turn(["project:a.txt"])).git_sha
    recorded = list(first.contexts.values())
    shutil.rmtree(worktree)  # e.g. a fresh machine, or cleanup ran
    second = manager.reopen_session(recorded)
    assert (worktree / "a.txt").read_text() == "a\n" and second.contexts["project"].head_sha == sha
    assert [e.reason for e in harness.events_of(WorkspaceRestored)] == ["reopen"]
    third = manager.reopen_session(recorded)  # worktree present: nothing to do
    assert third.snapshot() == {"project": sha}
    repo.git("update-ref", "-d", f"refs/heads/{recorded[0].branch_name}")
    with pytest.raises(WorkspaceError, match="no longer exists"):
        manager.reopen_session(recorded)


def test_full_workspace_lifecycle(harness: Harness, turn: TurnFactory) -> None:
    backend, frontend = harness.repo("backend"), harness.repo("frontend")
    main_heads = (backend.head("main"), frontend.head("main"))
    session = harness.manager().setup_session(SESSION_ID, "feature")
    contexts = session.contexts
    tools = session.repo_contexts()
    assert tools["backend"].root == contexts["backend"].worktree_path.resolve()
    assert (tools["backend"].branch, tools["backend"].repo_root) == (
        contexts["backend"].branch_name,
        backend.path.resolve(),
    )
    recorded = []
    for number, (repo, path) in enumerate(
        [("backend", "api.py"), ("frontend", "ui.ts"), ("backend", "db.py")], 1
    ):
        tools[repo].resolve_path(path).write_text(f"turn {number}\n")
        recorded.append(session.commit_turn(turn([f"{repo}:{path}"], number=number)))
    repos = {"backend": backend, "frontend": frontend}
    for agent_turn in recorded:  # from a recorded turn to its code, and from the commit back to the turn
        [commit] = agent_turn.commits
        path = agent_turn.writes_by_repo()[commit.repo][0]
        assert repos[commit.repo].show(commit.sha, path) == f"turn {agent_turn.turn_number}\n"
        trailers = repos[commit.repo].git("log", "-1", "--format=%(trailers:only,unfold)", commit.sha)
        assert (
            f"Orchestra-Node: code\nOrchestra-Pipeline: feature\nOrchestra-Session: {SESSION_ID}" in trailers
        )
        assert trailers.rstrip().endswith(f"Orchestra-Turn: {agent_turn.turn_number}")
    snapshot = session.snapshot()
    assert session.repo_contexts()["backend"].head_sha == snapshot["backend"]
    assert len(backend.log(f"main..{contexts['backend'].branch_name}")) == 2
    assert len(frontend.log(f"main..{contexts['frontend'].branch_name}")) == 1
    assert (backend.head("main"), frontend.head("main")) == main_heads
    for name, repo in (("backend", backend), ("frontend", frontend)):
        for sha in repo.log(f"main..{contexts[name].branch_name}"):
            assert (
                repo.git("log", "-1", "--format=%(trailers:key=Orchestra-Session,valueonly)", sha).strip()
                == SESSION_ID
            )
