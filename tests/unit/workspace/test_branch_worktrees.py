"""BranchWorktrees on the in-memory Git: nested fan-outs fork from the enclosing branch, a fan-out that runs
again starts fresh and keeps the old commits under refs/orchestra/abandoned, failed branches are not merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.workspace_events import WorkspaceEvent
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.git import Identity
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.branches import BranchWorktrees
from orchestra_core.workspace.errors import WorkspaceError
from orchestra_core.workspace.fan_in_merge import conflict_hunks

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
    nested = "<<<<<<< o\n<<<<<<< a\n1\n=======\n2\n>>>>>>> b\n=======\n3\n>>>>>>> c\nafter\n"
    assert conflict_hunks(nested) == nested.removesuffix("after\n")  # a file that conflicted in two merges


def _conflicting_fan_out(tmp_path: Path) -> tuple[InMemoryGit, BranchWorktrees, list[WorkspaceEvent], dict[str, str]]:
    """fan:a and fan:b both rewrite README.md; fan:c fails with a commit of its own."""
    git, branches, events = _setup(tmp_path)
    branches.fork("fan", None, ["fan:a", "fan:b", "fan:c"])
    tips = {
        "a": _commit(git, branches, "fan:a", "README.md", "from a\n"),
        "b": _commit(git, branches, "fan:b", "README.md", "from b\n"),
        "c": _commit(git, branches, "fan:c", "c.txt", "c\n"),
    }
    _commit(git, branches, "fan:a", "a.txt", "a\n")
    tips["a"] = git.resolve_commit(tmp_path / "repo", "refs/heads/orchestra/pipe/s1--fan-a") or ""
    return git, branches, events, tips


def test_a_conflict_moves_nothing_and_says_what_landing_it_needs(tmp_path: Path) -> None:
    git, branches, _, tips = _conflicting_fan_out(tmp_path)
    session = branches.session_for(None).contexts["app"]
    report = branches.join("fan", None, ["fan:a", "fan:b", "fan:c"], ["fan:a", "fan:b"])
    assert report.failed and report.merged == {}
    assert git.resolve_commit(session.repo_root, session.branch_ref) == session.base_sha
    [conflict] = report.conflicts
    assert (conflict["branch_path"], conflict["files"], conflict["theirs"]) == ("fan:b", ["README.md"], tips["b"])
    assert report.pending["into"] == {"app": "orchestra/pipe/s1"}
    assert [(s["path"], s["tip"], s["merge"]) for s in report.pending["steps"]] == [
        ("fan:a", tips["a"], True), ("fan:b", tips["b"], True), ("fan:c", tips["c"], False),
    ]
    assert all(branches.branch_session(path) is not None for path in ("fan:a", "fan:b", "fan:c"))


def test_landing_a_conflict_commits_the_markers_after_the_clean_merges_and_removes_the_branches(tmp_path: Path) -> None:
    git, branches, events, tips = _conflicting_fan_out(tmp_path)
    session = branches.session_for(None).contexts["app"]
    root = session.repo_root
    pending = branches.join("fan", None, ["fan:a", "fan:b", "fan:c"], ["fan:a", "fan:b"]).pending
    landed = branches.land_conflicts("fan", None, pending, "fixer")
    assert not landed.failed and landed.landed
    head = git.resolve_commit(root, session.branch_ref) or ""
    conflicted, clean = git.log(root, head, max_count=2)
    assert conflicted.parents == (clean.sha, tips["b"]) and clean.parents == (session.base_sha, tips["a"])
    assert conflicted.trailers["Orchestra-Conflicts"] == "README.md" and conflicted.trailers["Orchestra-Merge"] == "fan:b"
    assert "for fixer to resolve" in conflicted.message and "Orchestra-Conflicts" not in clean.trailers
    text = (session.worktree_path / "README.md").read_text()
    assert "<<<<<<<" in text and "from a" in text and "from b" in text
    assert (session.worktree_path / "a.txt").exists() and not (session.worktree_path / "c.txt").exists()
    [conflict] = landed.conflicts
    assert conflict["commit"] == head and landed.merged == {"fan:a": {"app": clean.sha}, "fan:b": {"app": head}}
    assert "committed with git's conflict markers" in landed.summary() and head[:12] in landed.summary()
    assert git.branches(root) == ("main", "orchestra/pipe/s1")
    assert git.resolve_commit(root, "refs/orchestra/abandoned/s1/1") == tips["c"]  # the failed branch's commit
    assert branches.sessions() == []
    merged = [e for e in events if type(e).__name__ == "WorktreeMerged"]
    assert [(e.branch, e.conflicting_files) for e in merged] == [
        ("orchestra/pipe/s1--fan-a", ()), ("orchestra/pipe/s1--fan-b", ("README.md",)),
    ]


def test_landing_again_after_a_resume_put_the_branch_back_works_from_the_recorded_commits(tmp_path: Path) -> None:
    git, branches, _, tips = _conflicting_fan_out(tmp_path)
    session = branches.session_for(None)
    context = session.contexts["app"]
    pending = branches.join("fan", None, ["fan:a", "fan:b", "fan:c"], ["fan:a", "fan:b"]).pending
    branches.land_conflicts("fan", None, pending, "fixer")
    session.restore("app", context.base_sha, reason="resume")  # the run died before its checkpoint recorded it
    again = BranchWorktrees(session, git, SystemClock(), tmp_path / "project" / ".orchestra" / "worktrees" / "s1",
                            "pipe", lambda event: None).land_conflicts("fan", None, pending, "fixer")  # fmt: skip
    head = git.resolve_commit(context.repo_root, context.branch_ref)
    assert head == again.conflicts[0]["commit"]
    assert git.log(context.repo_root, head or "", max_count=1)[0].parents[1] == tips["b"]
    assert "<<<<<<<" in (session.contexts["app"].worktree_path / "README.md").read_text()


def test_a_pending_merge_for_another_branch_is_refused(tmp_path: Path) -> None:
    _, branches, _, _ = _conflicting_fan_out(tmp_path)
    pending = branches.join("fan", None, ["fan:a", "fan:b", "fan:c"], ["fan:a", "fan:b"]).pending
    with pytest.raises(WorkspaceError, match="was to go into elsewhere"):
        branches.land_conflicts("fan", None, {**pending, "into": {"app": "elsewhere"}}, "fixer")
    with pytest.raises(WorkspaceError, match="not one Orchestra recorded"):
        branches.land_conflicts("fan", None, {"steps": [{"path": "fan:a"}]}, "fixer")


def test_a_nested_conflict_lands_on_the_enclosing_branch(tmp_path: Path) -> None:
    git, branches, _ = _setup(tmp_path)
    branches.fork("outer", None, ["outer:a"])
    branches.fork("inner", "outer:a", ["outer:a/inner:x", "outer:a/inner:y"])
    _commit(git, branches, "outer:a/inner:x", "README.md", "x\n")
    _commit(git, branches, "outer:a/inner:y", "README.md", "y\n")
    paths = ["outer:a/inner:x", "outer:a/inner:y"]
    pending = branches.join("inner", "outer:a", paths, paths).pending
    outer = branches.session_for("outer:a").contexts["app"]
    before = git.resolve_commit(outer.repo_root, outer.branch_ref)
    landed = branches.land_conflicts("inner", "outer:a", pending, "fix")
    head = git.resolve_commit(outer.repo_root, outer.branch_ref)
    assert head != before and landed.conflicts[0]["into"] == outer.branch_name == "orchestra/pipe/s1--outer-a"
    assert "<<<<<<<" in (outer.worktree_path / "README.md").read_text()
    session = branches.session_for(None).contexts["app"]
    assert git.resolve_commit(session.repo_root, session.branch_ref) == session.base_sha  # the main line: untouched
    assert git.branches(outer.repo_root) == ("main", "orchestra/pipe/s1", "orchestra/pipe/s1--outer-a")
    assert [s.contexts["app"].branch_name for s in branches.sessions()] == ["orchestra/pipe/s1--outer-a"]
