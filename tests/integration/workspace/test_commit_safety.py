"""Commit safety: protected branches, hooks, concurrent writers from threads and processes."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.settings import RepoSettings
from orchestra_core.testing.clock import ManualClock
from orchestra_core.workspace import ProtectedBranchError, WorkspaceCommitError, WorkspaceContext
from orchestra_core.workspace.session import WorkspaceSession
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory
from tests.support.git_repos import GitRepo, git

ROOT = Path(__file__).resolve().parents[3]


def _hook(repo: GitRepo, name: str, body: str) -> Path:
    marker = repo.path.parent / f"{name}.ran"
    hook = repo.path / ".git" / "hooks" / name
    hook.write_text(f'#!/bin/sh\ntouch "{marker}"\n{body}\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return marker


@pytest.mark.parametrize("branch", ["main", "master", "release/2.0"])
def test_nothing_is_ever_committed_to_a_protected_branch(
    harness: Harness, turn: TurnFactory, branch: str
) -> None:
    repo = harness.repo("project")
    if branch != "main":
        repo.git("branch", branch)
    before = repo.head(branch)
    context = WorkspaceContext(
        repo_name="project",
        repo_root=repo.path,
        worktree_path=repo.path,
        branch_name=branch,
        base_ref="HEAD",
        base_sha=before,
        head_sha=before,
        session_id=SESSION_ID,
        pipeline_name="p",
        isolation="in_place",
        created_at=ManualClock().now(),
    )
    session = WorkspaceSession(
        SESSION_ID,
        [context],
        {"project": RepoSettings(path=str(repo.path))},
        SubprocessGit(),
        ManualClock(),
        None,
        print,
    )
    repo.write("a.py", "a")
    with pytest.raises(WorkspaceCommitError, match=f"protected branch '{branch}'"):
        session.commit_turn(turn(["project:a.py"]))
    with pytest.raises(ProtectedBranchError):
        session.rollback("project")
    assert repo.head(branch) == before


def test_hooks_are_skipped_on_agent_commits_by_default(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    marker = _hook(repo, "pre-commit", "exit 1")
    session = harness.manager().setup_session(SESSION_ID, "p")
    (session.contexts["project"].worktree_path / "a.py").write_text("a")
    assert session.commit_turn(turn(["project:a.py"])).git_sha is not None
    assert not marker.exists()


def test_run_hooks_runs_them_and_a_rejecting_hook_fails_the_commit(
    harness: Harness, turn: TurnFactory
) -> None:
    repo = harness.repo("project")
    _hook(repo, "commit-msg", 'git interpret-trailers --in-place --trailer "Reviewed-by: hook" "$1"')
    session = harness.manager(run_hooks=True).setup_session(SESSION_ID, "p")
    worktree = session.contexts["project"].worktree_path
    (worktree / "a.py").write_text("a")
    (worktree / "other.py").write_text("left alone")
    sha = session.commit_turn(turn(["project:a.py"])).git_sha
    assert sha is not None
    trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", sha)
    assert "Orchestra-Turn: 1" in trailers and "Reviewed-by: hook" in trailers
    assert repo.files_in(sha) == ["README.md", "a.py"]
    assert repo.log(sha, "%an")[0] == "code (claude-test)"
    marker = _hook(repo, "pre-commit", "echo 'lint failed' >&2; exit 1")
    (worktree / "a.py").write_text("b")
    with pytest.raises(WorkspaceCommitError, match="lint failed"):
        session.commit_turn(turn(["project:a.py"], number=2))
    assert marker.exists() and repo.head(session.contexts["project"].branch_name) == sha
    assert (worktree / "a.py").read_text() == "b"  # the work is still there


def test_two_threads_committing_to_one_branch_lose_nothing(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    session = harness.manager().setup_session(SESSION_ID, "p")
    worktree = session.contexts["project"].worktree_path
    errors: list[BaseException] = []

    def agent(name: str) -> None:
        try:
            for number in range(8):
                (worktree / f"{name}-{number}.txt").write_text(f"{name} {number}\n")
                session.commit_turn(turn([f"project:{name}-{number}.txt"], node=name, number=number))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=agent, args=(name,)) for name in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    branch = session.contexts["project"].branch_name
    shas = repo.log(f"main..{branch}")
    assert len(shas) == 16 and len(repo.git("rev-list", "--merges", branch).split()) == 0
    for sha in shas:
        assert len(repo.git("show", "--name-only", "--format=", sha).split()) == 1
    assert len(repo.files_in(branch)) == 17
    assert session.contexts["project"].head_sha == repo.head(branch)
    assert repo.status(worktree) == ""
    git(repo.path, "fsck", "--no-progress")


def test_two_sessions_in_one_repo_commit_side_by_side(harness: Harness, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    sessions = [harness.manager().setup_session(sid, "p") for sid in ("aaaa1111", "bbbb2222")]

    def agent(session: WorkspaceSession) -> None:
        for number in range(5):
            (session.contexts["project"].worktree_path / f"f{number}").write_text(
                session.contexts["project"].branch_name
            )
            session.commit_turn(turn([f"project:f{number}"], number=number))

    threads = [threading.Thread(target=agent, args=(session,)) for session in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for session in sessions:
        assert len(repo.log(f"main..{session.contexts['project'].branch_name}")) == 5
    git(repo.path, "fsck", "--no-progress")


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from orchestra_adapters.git import SubprocessGit
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
    from orchestra_core.ports.clock import SystemClock
    from orchestra_core.workspace import WorkspaceContext, WorkspaceManager

    repo, worktree, branch, base, name = sys.argv[1:6]
    context = WorkspaceContext(
        repo_name="project", repo_root=Path(repo), worktree_path=Path(worktree), branch_name=branch,
        base_ref="HEAD", base_sha=base, head_sha=base, session_id="s", pipeline_name="p",
        isolation="worktree", created_at=SystemClock().now(),
    )
    settings = WorkspaceSettings(repos={"project": RepoSettings(path=repo)})
    session = WorkspaceManager(settings, SubprocessGit(), SystemClock(), Path(worktree)).reopen_session([context])
    for number in range(6):
        Path(worktree, f"{name}-{number}").write_text(name)
        session.commit_turn(AgentTurn(name, number, "m", "p", files_written=[f"project:{name}-{number}"]))
    """
)


@pytest.mark.slow
def test_two_processes_committing_to_one_branch_lose_nothing(harness: Harness) -> None:
    repo = harness.repo("project")
    session = harness.manager().setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    args = [str(repo.path), str(context.worktree_path), context.branch_name, context.base_sha]
    processes = [
        subprocess.Popen([sys.executable, "-c", _WRITER, *args, name], cwd=ROOT, stderr=subprocess.PIPE)
        for name in ("one", "two")
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr.decode()
    assert len(repo.log(f"main..{context.branch_name}")) == 12
    assert len(repo.files_in(context.branch_name)) == 13
    git(repo.path, "fsck", "--no-progress")
