"""The work of a turn's commit, counted (never timed): the git processes it starts, from git's own trace, and the
files they are given. It follows the files the turn wrote, not the size of the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.git.command import GitCommand
from orchestra_core.model.turn import AgentTurn
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.workspace.session import WorkspaceSession
from tests.integration.workspace.conftest import SESSION_ID, Harness

# A turn's commit of files read from the worktree: which paths git ignores, the trees on the way to them, the
# blobs (filter drivers looked up first), the new trees, the message's diff of two trees, the commit, the branch,
# and the worktree's index brought to the commit (drivers looked up first).
READ_FROM_WORKTREE = [
    "check-ignore", "cat-file", "config", "hash-object", "mktree", "diff", "commit-tree", "update-ref", "config",
    "update-index",
]  # fmt: skip
# The same of versions a CLI agent's tools captured as blobs when they wrote: no file is read again.
CAPTURED = ["check-ignore", "cat-file", "mktree", "diff", "commit-tree", "update-ref", "update-index"]
# Commands whose cost follows the size of the worktree or of its history.
WHOLE_TREE = {"status", "add", "ls-files", "diff-files", "diff-index", "write-tree", "read-tree", "commit", "log"}


class TracedGit:
    """A SubprocessGit whose every git process writes its start to a GIT_TRACE2_EVENT file."""

    def __init__(self, trace: Path) -> None:
        self.trace = trace
        self.command = GitCommand(base_env={**os.environ, "GIT_TRACE2_EVENT": str(trace)})
        self.git = SubprocessGit(self.command)

    def started(self) -> list[list[str]]:
        """The argv (after `git` and its global options) of each process started since the last call."""
        lines = self.trace.read_text().splitlines() if self.trace.exists() else []
        self.trace.unlink(missing_ok=True)
        events = [json.loads(line) for line in lines]
        return [_command(event["argv"]) for event in events if event["event"] == "start"]


def _command(argv: list[str]) -> list[str]:
    position = 1
    while position < len(argv) and argv[position].startswith("-"):
        position += 2 if argv[position] in ("-c", "-C") else 1
    return argv[position:]


def _session(harness: Harness, traced: TracedGit, files: int) -> WorkspaceSession:
    tree = {f"pkg{number % 7}/mod{number % 5}/file{number}.py": f"VALUE = {number}\n" for number in range(files)}
    harness.repo("big", tree)
    generator = ScriptedCommitMessages(["Update values\n\nA change."], repeat_last=True)
    session = harness.manager(generator=generator, git=traced.git).setup_session(SESSION_ID, "p")
    worktree = session.contexts["big"].worktree_path
    (worktree / "pkg0/mod0/file0.py").write_text("warm-up\n")  # the first commit reads the repository's settings
    session.commit_turn(_turn(["big:pkg0/mod0/file0.py"], 1))
    traced.started()
    return session


def _turn(writes: list[str], number: int, **fields: object) -> AgentTurn:
    return AgentTurn("code", number, "model", "provider", files_written=tuple(writes), **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("files", [10, 600])
def test_a_turn_commit_starts_the_same_few_git_processes_whatever_the_repository_size(
    harness: Harness, tmp_path: Path, files: int
) -> None:
    traced = TracedGit(tmp_path / "trace.json")
    session = _session(harness, traced, files)
    worktree = session.contexts["big"].worktree_path
    (worktree / "pkg1/mod1/file1.py").write_text("changed\n")
    (worktree / "pkg2/mod2/new.py").write_text("NEW = True\n")
    result = session.commit_turn(_turn(["big:pkg1/mod1/file1.py", "big:pkg2/mod2/new.py"], 2))
    started = traced.started()
    assert result.git_sha is not None
    assert [argv[0] for argv in started] == READ_FROM_WORKTREE
    assert not {argv[0] for argv in started} & WHOLE_TREE
    diff = next(argv for argv in started if argv[0] == "diff")
    assert "--cached" not in diff  # two trees, no index or worktree read
    assert git_status(worktree) == ""  # the index holds what was committed


def test_the_commit_hands_git_only_the_files_the_turn_wrote(harness: Harness, tmp_path: Path) -> None:
    traced = TracedGit(tmp_path / "trace.json")
    session = _session(harness, traced, 50)
    worktree = session.contexts["big"].worktree_path
    written = ["pkg3/mod3/file3.py", "pkg4/mod4/new.py"]
    for path in written:
        (worktree / path).write_text("written\n")
    (worktree / "pkg5/mod0/file5.py").write_text("changed, but not by this turn\n")
    given: list[str] = []
    command = traced.command
    original = command.run

    def recording_run(cwd: Path, args: list[str], **options: object):  # type: ignore[no-untyped-def]
        if args[0] in ("hash-object", "update-index"):
            given.extend(p.decode() for p in (options.get("stdin") or b"").replace(b"\0", b"\n").split(b"\n") if p)
        return original(cwd, args, **options)  # type: ignore[arg-type]

    command.run = recording_run  # type: ignore[method-assign]
    session.commit_turn(_turn([f"big:{path}" for path in written], 2))
    assert sorted(given) == sorted(written * 2)  # hashed once, then put in the index once
    assert git_status(worktree) == " M pkg5/mod0/file5.py\n"


def test_a_commit_of_captured_versions_reads_no_file_again(harness: Harness, tmp_path: Path) -> None:
    traced = TracedGit(tmp_path / "trace.json")
    session = _session(harness, traced, 50)
    worktree = session.contexts["big"].worktree_path
    (worktree / "pkg1/mod1/file1.py").write_text("captured\n")
    versions = traced.git.capture_files(worktree, ["pkg1/mod1/file1.py"])
    traced.started()
    (worktree / "pkg1/mod1/file1.py").write_text("a later turn's\n")
    turn_ = _turn(["big:pkg1/mod1/file1.py"], 2, file_versions={"big:pkg1/mod1/file1.py": versions["pkg1/mod1/file1.py"]})
    session.commit_turn(turn_)
    assert [argv[0] for argv in traced.started()] == CAPTURED
    assert git_status(worktree) == " M pkg1/mod1/file1.py\n"


def git_status(worktree: Path) -> str:
    from tests.support.git_repos import git

    return git(worktree, "status", "--porcelain=v1", "--untracked-files=all")
