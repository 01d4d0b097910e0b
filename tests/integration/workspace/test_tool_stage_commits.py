"""A tool stage's work committed as its turn, with real repositories (issue 31, item 6): what changed while it ran
(additions, edits, deletions, renames), never what git ignores, the run's own state, or dirt it did not touch."""

from __future__ import annotations

import pytest

from orchestra_core.model.workspace_events import AgentCommitCreated, WritesNotCommitted
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.workspace import WorkspaceCommitError
from orchestra_core.workspace.tool_stage import ToolStageRun
from tests.integration.workspace.conftest import SESSION_ID, Harness
from tests.support.git_repos import git
from tests.support.orchestra_project import committed_files, trailers

EXITED = CommandResult(1, "", "", 0.25)


def test_what_the_command_changed_is_committed_as_the_stages_turn(harness: Harness) -> None:
    repo = harness.repo(
        "app", {"keep.txt": "k\n", "edit.txt": "1\n", "gone.txt": "g\n", "old.txt": "o\n", ".gitignore": "build/\n"}
    )
    session = harness.manager().setup_session(SESSION_ID, "pipe")
    worktree = session.contexts["app"].worktree_path
    watch = session.watch_tool_stage()
    (worktree / "edit.txt").write_text("2\n")
    (worktree / "gone.txt").unlink()
    git(worktree, "mv", "old.txt", "new.txt")
    (worktree / "src").mkdir()
    (worktree / "src" / "made.py").write_text("M = 1\n")
    (worktree / "build").mkdir()
    (worktree / "build" / "huge.bin").write_bytes(b"\0" * 4096)  # ignored: never committed
    turn = watch.finish(ToolStageRun("build", "make\nall", EXITED))
    assert turn is not None and turn.by_tool_stage
    assert sorted(turn.files_written) == ["app:edit.txt", "app:gone.txt", "app:new.txt", "app:old.txt", "app:src/made.py"]
    [commit] = turn.commits
    branch = session.contexts["app"].branch_name
    assert repo.head(branch) == commit.sha == turn.git_sha and commit.branch == branch
    assert committed_files(repo, commit.sha) == ["edit.txt", "gone.txt", "new.txt", "old.txt", "src/made.py"]
    assert sorted(repo.files_in(commit.sha)) == [".gitignore", "edit.txt", "keep.txt", "new.txt", "src/made.py"]
    assert trailers(repo, commit.sha) == {
        "Orchestra-Model": "tool_command",
        "Orchestra-Provider": "tool",
        "Orchestra-Node": "build",
        "Orchestra-Pipeline": "pipe",
        "Orchestra-Session": SESSION_ID,
        "Orchestra-Turn": "0",
        "Orchestra-Command": "make all",
        "Orchestra-Exit-Code": "1",
    }
    author = repo.git("log", "-1", "--format=%an <%ae>|%s", commit.sha).strip()
    assert author == "build (tool_command) <orchestra@local>|Tool stage build: make all"
    assert repo.status(worktree) == ""
    assert (worktree / "build" / "huge.bin").exists()
    [event] = harness.events_of(AgentCommitCreated)
    assert (event.node_id, event.message_source) == ("build", "fixed")


def test_dirt_from_before_the_stage_is_left_alone_unless_the_stage_touched_it(harness: Harness) -> None:
    repo = harness.repo("app", {"a.txt": "a\n", "b.txt": "b\n"})
    session = harness.manager().setup_session(SESSION_ID, "pipe")
    worktree = session.contexts["app"].worktree_path
    (worktree / "a.txt").write_text("a user's edit\n")
    (worktree / "b.txt").write_text("a user's edit\n")
    watch = session.watch_tool_stage()
    (worktree / "b.txt").write_text("the stage's edit\n")
    (worktree / "c.txt").write_text("new\n")
    turn = watch.finish(ToolStageRun("s", "x", EXITED))
    assert turn is not None and committed_files(repo, turn.git_sha) == ["b.txt", "c.txt"]
    assert repo.status(worktree) == " M a.txt\n"


def test_a_stage_that_changed_nothing_makes_no_turn(harness: Harness) -> None:
    repo = harness.repo("app")
    session = harness.manager().setup_session(SESSION_ID, "pipe")
    before = repo.head(session.contexts["app"].branch_name)
    assert session.watch_tool_stage().finish(ToolStageRun("s", "true", EXITED)) is None
    assert repo.head(session.contexts["app"].branch_name) == before and harness.events_of(AgentCommitCreated) == []


def test_every_repo_the_stage_could_write_gets_its_commit(harness: Harness) -> None:
    app, lib = harness.repo("app"), harness.repo("lib")
    session = harness.manager().setup_session(SESSION_ID, "pipe")
    watch = session.watch_tool_stage()
    for name in ("app", "lib"):
        (session.contexts[name].worktree_path / f"{name}.txt").write_text(name)
    turn = watch.finish(ToolStageRun("s", "gen", EXITED))
    assert turn is not None and [c.repo for c in turn.commits] == ["app", "lib"]
    assert committed_files(app, turn.commits[0].sha) == ["app.txt"]
    assert committed_files(lib, turn.commits[1].sha) == ["lib.txt"]


def test_the_runs_own_state_and_refused_paths_are_never_committed(harness: Harness) -> None:
    repo = harness.repo("app")
    session = harness.manager(isolation="in_place").setup_session(SESSION_ID, "pipe")
    logs = repo.path / "logs"  # a --logs-root inside the checkout
    watch = session.watch_tool_stage(protected=[logs])
    (logs / "s").mkdir(parents=True)
    (logs / "s" / "status.json").write_text("{}")
    (repo.path / ".gitattributes").write_text("* filter=x" + " " * 5000 + "\n" * 10 + "a" * 2048 + "\n")
    (repo.path / "out.txt").write_text("out\n")
    turn = watch.finish(ToolStageRun("s", "gen", EXITED))
    assert turn is not None and committed_files(repo, turn.git_sha) == ["out.txt"]
    assert "app:logs/s/status.json" not in turn.files_written
    [refused] = harness.events_of(WritesNotCommitted)
    assert refused.paths == (".gitattributes",) and "fsck" in refused.reason


def test_a_commit_that_fails_fails_with_the_turn_and_keeps_the_files(harness: Harness) -> None:
    harness.repo("app")
    session = harness.manager().setup_session(SESSION_ID, "pipe")
    worktree = session.contexts["app"].worktree_path
    watch = session.watch_tool_stage()
    git(worktree, "checkout", "--quiet", "-b", "elsewhere")
    (worktree / "x.txt").write_text("x\n")
    with pytest.raises(WorkspaceCommitError, match="not the session branch") as raised:
        watch.finish(ToolStageRun("s", "git checkout -b elsewhere", EXITED))
    assert raised.value.turn is not None and raised.value.turn.files_written == ("app:x.txt",)
    assert (worktree / "x.txt").exists()
