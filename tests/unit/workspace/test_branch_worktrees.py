"""BranchWorktrees on the in-memory Git: nested fan-outs fork from the enclosing branch, a fan-out that runs
again starts fresh and keeps the old commits under refs/orchestra/abandoned, failed branches are not merged."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.workspace_events import WorkspaceEvent
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.git import Identity
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.branches import BranchWorktrees, conflict_hunks

WHO = Identity("t", "t@example.com")


def _setup(tmp_path: Path) -> tuple[InMemoryGit, BranchWorktrees, list[WorkspaceEvent]]:
    git = InMemoryGit()
    repo = git.init_repository(tmp_path / "repo", {"README.md": "hello\n"})
    events: list[WorkspaceEvent] = []
    manager = WorkspaceManager(
        WorkspaceSettings(repos={"app": RepoSettings(path=str(repo))}), git, SystemClock(), tmp_path / "project",
        on_event=events.append,
    )
    session = manager.setup_session("s1", "pipe")
    return git, BranchWorktrees(session, git, SystemClock(), manager.worktrees_dir("s1"), "pipe", events.append), events


def _commit(git: InMemoryGit, branches: BranchWorktrees, path: str, name: str, text: str) -> str:
    context = branches.session_for(path).contexts["app"]
    (context.worktree_path / name).parent.mkdir(parents=True, exist_ok=True)
    (context.worktree_path / name).write_text(text)
    git.sync_index(context.worktree_path, [name])
    return git.commit(context.worktree_path, f"write {name}", author=WHO, committer=WHO)


def test_a_nested_fan_out_forks_from_the_enclosing_branch_and_merges_back_into_it(tmp_path: Path) -> None:
    git, branches, _ = _setup(tmp_path)
    branches.fork("outer", None, ["outer:a"])
    _commit(git, branches, "outer:a", "a.txt", "a\n")
    branches.fork("inner", "outer:a", ["outer:a/inner:x", "outer:a/inner:y"])
    inner = branches.session_for("outer:a/inner:x").contexts["app"]
    assert inner.branch_name == "orchestra/pipe/s1--outer-a--inner-x"
    assert inner.worktree_path.parts[-3:] == ("outer:a", "inner:x", "app")
    assert (inner.worktree_path / "a.txt").exists()  # forked from the enclosing branch's head
    assert branches.session_for("outer:a/inner:x/deeper:z") is branches.session_for("outer:a/inner:x")
    _commit(git, branches, "outer:a/inner:x", "x.txt", "x\n")
    _commit(git, branches, "outer:a/inner:y", "y.txt", "y\n")
    report = branches.join("inner", "outer:a", ["outer:a/inner:x", "outer:a/inner:y"], ["outer:a/inner:x", "outer:a/inner:y"])
    assert not report.failed and set(report.merged) == {"outer:a/inner:x", "outer:a/inner:y"}
    outer = branches.session_for("outer:a").contexts["app"]
    assert {p.name for p in outer.worktree_path.iterdir()} >= {"a.txt", "x.txt", "y.txt"}
    assert branches.join("outer", None, ["outer:a"], ["outer:a"]).merged["outer:a"]["app"]
    session = branches.session_for(None).contexts["app"]
    assert {"a.txt", "x.txt", "y.txt"} <= {p.name for p in session.worktree_path.iterdir()}
    assert git.branches(session.repo_root) == ("main", "orchestra/pipe/s1")


def test_running_a_fan_out_again_starts_fresh_and_keeps_the_old_commits(tmp_path: Path) -> None:
    git, branches, _ = _setup(tmp_path)
    branches.fork("fan", None, ["fan:a"])
    old = _commit(git, branches, "fan:a", "a.txt", "first try\n")
    branches.fork("fan", None, ["fan:a"])
    context = branches.session_for("fan:a").contexts["app"]
    assert not (context.worktree_path / "a.txt").exists()
    assert git.resolve_commit(context.repo_root, context.branch_ref) == context.base_sha
    assert git.resolve_commit(context.repo_root, "refs/orchestra/abandoned/s1/1") == old


def test_a_failed_branch_is_not_merged_but_its_commits_are_kept(tmp_path: Path) -> None:
    git, branches, _ = _setup(tmp_path)
    branches.fork("fan", None, ["fan:a", "fan:b"])
    _commit(git, branches, "fan:a", "a.txt", "a\n")
    failed = _commit(git, branches, "fan:b", "b.txt", "b\n")
    report = branches.join("fan", None, ["fan:a", "fan:b"], ["fan:a"])
    assert set(report.merged) == {"fan:a"}
    session = branches.session_for(None).contexts["app"]
    assert (session.worktree_path / "a.txt").exists() and not (session.worktree_path / "b.txt").exists()
    assert git.resolve_commit(session.repo_root, "refs/orchestra/abandoned/s1/1") == failed


def test_conflict_hunks_keep_the_marker_regions_only() -> None:
    text = "head\n<<<<<<< a\nmine\n=======\ntheirs\n>>>>>>> b\nmiddle\n<<<<<<< a\n1\n=======\n2\n>>>>>>> b\ntail\n"
    assert conflict_hunks(text) == "<<<<<<< a\nmine\n=======\ntheirs\n>>>>>>> b\n<<<<<<< a\n1\n=======\n2\n>>>>>>> b\n"
    assert conflict_hunks("<<<<<<< a\n" + "x" * 100, limit=20).endswith("[... truncated]\n")
