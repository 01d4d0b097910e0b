"""The safety net's commits: an untracked turn gets the Orchestra-Untracked trailer and a warning event."""

from __future__ import annotations

from attrs import evolve

from orchestra_core.workspace import AgentCommitCreated, UntrackedWritesCommitted
from orchestra_core.workspace.correlation import OrchestraTrailers
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory


def test_an_untracked_turn_is_committed_with_the_trailer_and_a_warning(
    harness: Harness, turn: TurnFactory
) -> None:
    project = harness.repo("project", {"README.md": "hello\n"})
    session = harness.manager().setup_session(SESSION_ID, "test_git")
    worktree = session.contexts["project"].worktree_path
    (worktree / "out.txt").write_text("made by a shell redirect\n")
    (worktree / "gen").mkdir()
    (worktree / "gen" / "a.py").write_text("a = 1\n")
    untracked = evolve(turn(["project:gen/a.py", "project:out.txt"], number=3), untracked=True)
    committed = session.commit_turn(untracked)
    [commit] = committed.commits
    assert committed.untracked
    trailers = project.git("log", "-1", "--format=%(trailers)", commit.sha).strip().split("\n")
    assert trailers == [
        "Orchestra-Model: claude-test",
        "Orchestra-Provider: anthropic",
        "Orchestra-Node: code",
        "Orchestra-Pipeline: test_git",
        f"Orchestra-Session: {SESSION_ID}",
        "Orchestra-Turn: 3",
        "Orchestra-Untracked: true",
    ]
    [event] = harness.events_of(UntrackedWritesCommitted)
    assert (event.repo, event.node_id, event.turn_number, event.paths, event.sha) == (
        "project",
        "code",
        3,
        ("gen/a.py", "out.txt"),
        commit.sha,
    )
    assert event.level == "warning" and event.session_id == SESSION_ID
    assert [e.sha for e in harness.events_of(AgentCommitCreated)] == [commit.sha]
    parsed = OrchestraTrailers.parse(
        dict(line.split(": ", 1) for line in trailers)  # type: ignore[arg-type]
    )
    assert parsed is not None and parsed.untracked and parsed.turn_number == 3


def test_a_tracked_turn_has_no_untracked_trailer_or_event(harness: Harness, turn: TurnFactory) -> None:
    project = harness.repo("project", {"README.md": "hello\n"})
    session = harness.manager().setup_session(SESSION_ID, "test_git")
    (session.contexts["project"].worktree_path / "x.py").write_text("x\n")
    sha = session.commit_turn(turn(["project:x.py"])).commits[0].sha
    assert "Orchestra-Untracked" not in project.git("log", "-1", "--format=%B", sha)
    assert harness.events_of(UntrackedWritesCommitted) == []
