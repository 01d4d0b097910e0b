"""Per-turn commits: exactly the turn's files, generated messages, author, trailers, fallback, multi-repo."""

from __future__ import annotations

import pytest
from attrs import evolve

from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.commit_messages import CommitMessageRequest
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.workspace import (
    AgentCommitCreated,
    CommitMessageFallback,
    WorkspaceCommitError,
    WritesNotCommitted,
)
from orchestra_core.workspace.session import WorkspaceSession
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory
from tests.support.git_repos import GitRepo, git

MESSAGE = "Add greeting module\n\nIntroduce a hello() helper used by the CLI."


def _open(
    harness: Harness, script: list[str | Exception] | None = None, **options: object
) -> WorkspaceSession:
    generator = ScriptedCommitMessages(
        script if script is not None else [MESSAGE], repeat_last=script is None
    )
    harness.generator = generator
    return harness.manager(generator=generator, **options).setup_session(SESSION_ID, "test_git")


def _write(session: WorkspaceSession, repo: str, path: str, text: str) -> None:
    file = session.contexts[repo].worktree_path / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)


@pytest.fixture
def project(harness: Harness) -> GitRepo:
    return harness.repo("project", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})


def test_turn_with_writes_commits_exactly_those_files(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    _write(session, "project", "src/hello.py", "def hello(): ...\n")
    _write(session, "project", "notes.txt", "not written by this turn\n")
    committed = session.commit_turn(turn(["project:src/hello.py"]))
    [commit] = committed.commits
    branch = session.contexts["project"].branch_name
    assert (commit.repo, commit.branch) == ("project", branch) and commit.sha == project.head(branch)
    assert committed.git_sha == commit.sha and committed.commit_message == MESSAGE
    assert project.git("show", "--name-status", "--format=", commit.sha).split("\n")[:-1] == [
        "A\tsrc/hello.py"
    ]
    assert project.head(f"{commit.sha}~1") == session.contexts["project"].base_sha
    assert session.contexts["project"].head_sha == commit.sha == session.snapshot()["project"]
    worktree = session.contexts["project"].worktree_path
    assert project.status(worktree) == "?? notes.txt\n"  # the other dirty file stays uncommitted


def test_only_tracked_writes_are_staged_when_other_files_are_dirty(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    _write(session, "project", "a.py", "a\n")
    _write(session, "project", "README.md", "edited by someone else\n")
    git(session.contexts["project"].worktree_path, "add", "README.md")
    commit = session.commit_turn(turn(["project:a.py"])).commits[0]
    assert project.files_in(commit.sha) == ["README.md", "a.py", "src/app.py"]
    assert project.show(commit.sha, "README.md") == "hello\n"
    assert project.status(session.contexts["project"].worktree_path) == "M  README.md\n"


def test_read_only_turn_makes_no_commit(harness: Harness, project: GitRepo, turn: TurnFactory) -> None:
    session = _open(harness)
    committed = session.commit_turn(turn([]))
    assert committed.commits == () and committed.git_sha is None and committed.commit_message is None
    assert project.head(session.contexts["project"].branch_name) == session.contexts["project"].base_sha
    assert harness.events_of(AgentCommitCreated) == [] and harness.generator.requests == []


def test_rewriting_identical_content_makes_no_commit(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    _write(session, "project", "README.md", "hello\n")
    assert session.commit_turn(turn(["project:README.md"])).commits == ()


def test_three_turns_make_three_commits_with_deletions(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    _write(session, "project", "a.py", "1\n")
    session.commit_turn(turn(["project:a.py"], number=1))
    _write(session, "project", "a.py", "2\n")
    session.commit_turn(turn(["project:a.py"], number=2))
    (session.contexts["project"].worktree_path / "src" / "app.py").unlink()
    session.commit_turn(turn(["project:src/app.py"], number=3))
    branch = session.contexts["project"].branch_name
    assert project.log(f"main..{branch}", "%(trailers:key=Orchestra-Turn,valueonly)") == ["3", "2", "1"]
    assert project.files_in(branch) == ["README.md", "a.py"]
    assert project.status(session.contexts["project"].worktree_path) == ""


def test_message_comes_from_the_generator_with_diff_and_intent(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness, ["Here is the commit message:\n```\nAdded greeting module\n\nBody line.\n```"])
    _write(session, "project", "src/hello.py", "def hello():\n    return 'hi'\n")
    commit = session.commit_turn(turn(["project:src/hello.py"], intent="Creating hello.py now.")).commits[0]
    [request] = harness.generator.requests
    assert isinstance(request, CommitMessageRequest)
    assert "+def hello():" in request.diff and "diff --git a/src/hello.py b/src/hello.py" in request.diff
    assert request.intent == "Creating hello.py now." and request.files == ("src/hello.py",)
    assert (request.repo, request.node_id, request.diff_truncated) == ("project", "code", False)
    assert commit.message == "Add greeting module\n\nBody line."
    assert project.git("log", "-1", "--format=%B", commit.sha).startswith(
        "Add greeting module\n\nBody line.\n\n"
    )


def test_message_format_author_and_trailers(harness: Harness, project: GitRepo, turn: TurnFactory) -> None:
    session = _open(
        harness, ["Implemented a very long summary line that goes on and on well past the limit of git"]
    )
    _write(session, "project", "x.py", "x\n")
    sha = (
        session.commit_turn(turn(["project:x.py"], node="security_reviewer", number=2, model="m-1"))
        .commits[0]
        .sha
    )
    subject, blank, *body = project.git("log", "-1", "--format=%B", sha).split("\n")
    assert len(subject) <= 72 and subject.startswith("Implement a very long summary") and blank == ""
    assert body[0] == "Files: x.py"
    assert project.log(sha, "%an <%ae>|%cn <%ce>")[0] == (
        "security_reviewer (m-1) <orchestra@local>|Orchestra <orchestra@local>"
    )
    trailers = project.git("log", "-1", "--format=%(trailers)", sha).strip().split("\n")
    assert trailers == [
        "Orchestra-Model: m-1",
        "Orchestra-Provider: anthropic",
        "Orchestra-Node: security_reviewer",
        "Orchestra-Pipeline: test_git",
        f"Orchestra-Session: {SESSION_ID}",
        "Orchestra-Turn: 2",
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (TimeoutError("provider timed out"), "TimeoutError: provider timed out"),
        ("", "empty or unusable"),
        ("```\n```", "empty or unusable"),
        ("I'm sorry, I cannot help with that.", "empty or unusable"),
    ],
)
def test_generator_failure_falls_back_and_the_run_goes_on(
    harness: Harness, project: GitRepo, turn: TurnFactory, answer: str | Exception, reason: str
) -> None:
    session = _open(harness, [answer, MESSAGE])
    _write(session, "project", "a.py", "a\n")
    _write(session, "project", "b.py", "b\n")
    first = session.commit_turn(turn(["project:a.py", "project:b.py"], number=1)).commits[0]
    assert first.message == "chore: auto-commit agent changes\n\n- a.py\n- b.py"
    [warning] = harness.events_of(CommitMessageFallback)
    assert reason in warning.reason and warning.level == "warning" and warning.turn_number == 1
    _write(session, "project", "a.py", "changed\n")
    second = session.commit_turn(turn(["project:a.py"], number=2)).commits[0]
    assert second.message == MESSAGE
    sources = [event.message_source for event in harness.events_of(AgentCommitCreated)]
    assert sources == ["fallback", "generator"]


def test_turn_writing_two_repos_commits_in_each(harness: Harness, turn: TurnFactory) -> None:
    backend, frontend = harness.repo("backend"), harness.repo("frontend")
    session = _open(harness)
    _write(session, "backend", "api.py", "api\n")
    _write(session, "frontend", "ui.ts", "ui\n")
    committed = session.commit_turn(turn(["backend:api.py", "frontend:ui.ts"]))
    assert [c.repo for c in committed.commits] == ["backend", "frontend"]
    assert backend.files_in(committed.commits[0].sha) == ["README.md", "api.py"]
    assert frontend.files_in(committed.commits[1].sha) == ["README.md", "ui.ts"]
    assert session.snapshot() == {"backend": committed.commits[0].sha, "frontend": committed.commits[1].sha}
    assert [e.repo for e in harness.events_of(AgentCommitCreated)] == ["backend", "frontend"]


def test_ignored_and_unknown_writes_are_reported_not_committed(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    project.write(".gitignore", "*.log\n")
    project.commit_all("ignore logs")
    session = _open(harness)
    _write(session, "project", "debug.log", "noise\n")
    _write(session, "project", "ok.py", "ok\n")
    committed = session.commit_turn(turn(["project:debug.log", "project:ok.py", "elsewhere:x.py"]))
    assert project.files_in(committed.git_sha) == [".gitignore", "README.md", "ok.py", "src/app.py"]
    reasons = {(e.repo, e.paths, e.reason.split(" ")[0]) for e in harness.events_of(WritesNotCommitted)}
    assert reasons == {("project", ("debug.log",), "ignored"), ("elsewhere", ("x.py",), "not")}


def test_on_turn_wrapper_passes_the_committed_turn_downstream(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    received: list[AgentTurn] = []
    on_turn = session.on_turn_wrapper(received.append)
    _write(session, "project", "a.py", "a\n")
    on_turn(turn(["project:a.py"]))
    on_turn(turn([], number=2))
    assert [t.git_sha is not None for t in received] == [True, False]
    session.on_turn_wrapper()(turn([], number=3))  # no downstream is fine


def test_commit_failure_still_records_the_turn_then_raises(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    worktree = session.contexts["project"].worktree_path
    git(worktree, "checkout", "--quiet", "-b", "agent-went-elsewhere")
    _write(session, "project", "a.py", "a\n")
    received: list[AgentTurn] = []
    with pytest.raises(WorkspaceCommitError, match="not the session branch"):
        session.on_turn_wrapper(received.append)(turn(["project:a.py"]))
    assert len(received) == 1 and received[0].commits == ()
    assert project.head(session.contexts["project"].branch_name) == session.contexts["project"].base_sha


def test_no_generator_uses_the_fallback_silently(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = harness.manager().setup_session(SESSION_ID, "p")
    _write(session, "project", "a.py", "a\n")
    assert session.commit_turn(turn(["project:a.py"])).commit_message.startswith("chore: auto-commit")
    assert harness.events_of(CommitMessageFallback) == []


def test_large_diffs_are_truncated_for_the_generator(
    harness: Harness, project: GitRepo, turn: TurnFactory
) -> None:
    session = _open(harness)
    _write(session, "project", "big.txt", "".join(f"line {n}\n" for n in range(5000)))
    _write(session, "project", "small.txt", "small\n")
    session.commit_turn(turn(["project:small.txt", "project:big.txt"]))
    [request] = harness.generator.requests
    assert request.diff_truncated and len(request.diff) < 13_000
    assert "+small" in request.diff and "more lines of this file not shown" in request.diff


@pytest.mark.parametrize("run_hooks", [False, True])
def test_a_turn_with_captured_versions_commits_them_not_the_files_as_they_are_now(
    harness: Harness, project: GitRepo, turn: TurnFactory, run_hooks: bool
) -> None:
    """A CLI agent has gone on and changed the file again before its earlier turn is committed."""
    session = harness.manager(run_hooks=run_hooks).setup_session(SESSION_ID, "test_git")
    worktree = session.contexts["project"].worktree_path
    git_port = SubprocessGit()
    _write(session, "project", "a.py", "A = 1\n")
    (worktree / "src/app.py").unlink()
    captured = git_port.capture_files(worktree, ["a.py", "src/app.py"])
    _write(session, "project", "a.py", "A = 3\n")  # the later turn's edit, not yet reported
    _write(session, "project", "src/app.py", "back\n")
    versions = {f"project:{path}": version for path, version in captured.items()}
    written = evolve(turn(["project:a.py", "project:src/app.py"]), file_versions=versions)
    commit = session.commit_turn(written).commits[0]
    assert project.show(commit.sha, "a.py") == "A = 1\n"
    assert project.files_in(commit.sha) == ["README.md", "a.py"]
    assert project.status(worktree) == " M a.py\n?? src/app.py\n"  # the later changes, not staged
    later = session.commit_turn(turn(["project:a.py"], number=2)).commits[0]
    assert project.show(later.sha, "a.py") == "A = 3\n" and project.status(worktree) == "?? src/app.py\n"
