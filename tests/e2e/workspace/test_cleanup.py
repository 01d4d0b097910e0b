"""`orchestra cleanup` on real sessions made by `orchestra run --backend simulate`: what goes (merged, pushed,
forced) and what stays and why (unmerged, unpushed, running, too recent, protected, checked out)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from orchestra_adapters.locks.file_session_locks import FileSessionLocks
from orchestra_core.model.workspace_events import RemotePushed, SessionCleanedUp
from orchestra_core.session.api import append_record
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import open_store, orchestra, records_of, run_json

# A tool node that writes a file and commits it in the session's worktree: a session with work of its own.
PIPELINE = """digraph work {
    start [shape=Mdiamond]; exit [shape=Msquare]
    step [shape=parallelogram, tool_command="echo $RANDOM-$$ > work.txt && git add work.txt && git commit -q -m work"]
    start -> step -> exit
}
"""
CONFIG = "workspace:\n  repos:\n    app: {path: .%s}\n"


def _project(tmp_path: Path, repo_options: str = "") -> GitRepo:
    return make_repo(
        tmp_path / "project",
        {".gitignore": ".orchestra/\n", "orchestra.yaml": CONFIG % repo_options, "work.dot": PIPELINE},
    )


def _run(repo: GitRepo) -> tuple[str, str, str]:
    """One session with a commit of its own: (session id, its branch, the branch's head)."""
    document = run_json("run", "work.dot", "--backend", "simulate", cwd=repo.path)
    assert document["status"] == "success"
    state = document["repos"]["app"]
    assert state["head_sha"] != state["base_sha"]
    return document["session_id"], state["branch"], state["head_sha"]


def _cleanup(repo: GitRepo, *args: str) -> dict[str, Any]:
    document: dict[str, Any] = run_json("cleanup", *args, cwd=repo.path)
    return document


def _by_reason(items: list[dict[str, Any]]) -> dict[str, str]:
    return {item["session_id"]: item["reason"] for item in items}


def _git_state(repo: GitRepo) -> tuple[str, str, list[str]]:
    worktrees = repo.path / ".orchestra" / "worktrees"
    files = sorted(str(p.relative_to(worktrees)) for p in worktrees.rglob("*")) if worktrees.exists() else []
    return repo.git("for-each-ref"), repo.git("worktree", "list", "--porcelain"), files


def test_a_merged_session_is_removed_and_recorded_an_unmerged_one_kept(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    merged_id, merged_branch, merged_head = _run(repo)
    kept_id, kept_branch, _ = _run(repo)
    repo.git("merge", "--quiet", "--no-edit", merged_branch)

    document = _cleanup(repo)

    assert set(document) == {"removed", "kept", "pruned", "checkouts", "dry_run"}
    [removed] = document["removed"]
    assert removed["session_id"] == merged_id and removed["reason"] == "merged"
    assert set(removed) == {
        "session_id", "pipeline", "status", "repo", "reason", "detail", "branches", "heads", "worktrees",
        "abandoned_refs",
    }
    assert removed["heads"] == {merged_branch: merged_head} and removed["pipeline"] == "work"
    assert _by_reason(document["kept"]) == {kept_id: "unmerged"}
    assert merged_branch not in repo.branches() and kept_branch in repo.branches()
    assert not (repo.path / ".orchestra" / "worktrees" / merged_id).exists()
    assert (repo.path / ".orchestra" / "worktrees" / kept_id / "app").is_dir()
    [(_, event)] = records_of(repo.path, merged_id, SessionCleanedUp)
    assert (event.repo, event.branch, event.head_sha, event.reason) == ("app", merged_branch, merged_head, "merged")
    assert event.worktree_path.endswith(f"worktrees/{merged_id}/app")
    assert _cleanup(repo)["removed"] == []  # nothing left of it: not listed again


def test_force_removes_unmerged_work_and_keeps_its_commits_under_an_abandoned_ref(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    session_id, branch, head = _run(repo)

    document = _cleanup(repo, "--force")

    [removed] = document["removed"]
    assert removed["reason"] == "forced" and removed["detail"] == "unmerged"
    ref = f"refs/orchestra/abandoned/{session_id}/1"
    assert removed["abandoned_refs"] == [ref]
    assert repo.head(ref) == head and branch not in repo.branches()
    [(_, event)] = records_of(repo.path, session_id, SessionCleanedUp)
    assert event.abandoned_ref == ref and event.head_sha == head
    status = orchestra("status", session_id, cwd=repo.path)
    assert f"cleaned up: app {branch} at {head[:12]} (forced, kept as {ref})" in status.stdout
    assert "prunable" not in repo.git("worktree", "list", "--porcelain")


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    _, branch, _ = _run(repo)
    _run(repo)
    repo.git("merge", "--quiet", "--no-edit", branch)
    (tmp_path / "gone").mkdir()
    repo.git("worktree", "add", "--quiet", "-b", "scratch", str(tmp_path / "gone" / "wt"))
    shutil.rmtree(tmp_path / "gone")
    before = _git_state(repo)

    document = _cleanup(repo, "--dry-run", "--force")

    assert document["dry_run"] is True and len(document["removed"]) == 2
    assert [entry["path"] for entry in document["pruned"]] == [str(tmp_path / "gone" / "wt")]
    assert _git_state(repo) == before
    real = _cleanup(repo, "--force")
    assert len(real["removed"]) == 2 and len(real["pruned"]) == 1
    assert "prunable" not in repo.git("worktree", "list", "--porcelain")
    assert list((repo.path / ".orchestra" / "worktrees").iterdir()) == []  # empty session directories removed


def test_a_pushed_head_is_removed_and_an_unpushed_one_kept(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    pushed_id, pushed_branch, pushed_head = _run(repo)
    stale_id, stale_branch, stale_head = _run(repo)
    with open_store(repo.path) as store:
        append_record(store, pushed_id, RemotePushed(repo="app", branch=pushed_branch, sha=pushed_head))
        append_record(store, stale_id, RemotePushed(repo="app", branch=stale_branch, sha=repo.head("main")))
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", str(bare))
    (repo.path / "orchestra.yaml").write_text(CONFIG % f", remote: 'file://{bare}'", encoding="utf-8")

    document = _cleanup(repo)

    assert _by_reason(document["removed"]) == {pushed_id: "pushed"}
    [kept] = document["kept"]
    assert (kept["session_id"], kept["reason"]) == (stale_id, "unpushed")
    assert "nor pushed" in kept["detail"] and repo.head(stale_branch) == stale_head
    assert pushed_branch not in repo.branches()


def test_a_running_session_is_kept_even_with_force(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    session_id, branch, _ = _run(repo)
    lease = FileSessionLocks(repo.path / ".orchestra" / "locks").acquire(session_id)  # a resume holding it
    try:
        document = _cleanup(repo, "--force")
        [kept] = document["kept"]
        assert (kept["reason"], document["removed"]) == ("running", [])
        assert "pid" in kept["detail"] and branch in repo.branches()
    finally:
        lease.release()
    assert _by_reason(_cleanup(repo, "--force")["removed"]) == {session_id: "forced"}


def test_a_second_cleanup_at_the_same_time_is_refused(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    _, branch, _ = _run(repo)
    repo.git("merge", "--quiet", "--no-edit", branch)
    lease = FileSessionLocks(repo.path / ".orchestra" / "locks").acquire("cleanup")
    try:
        result = orchestra("cleanup", cwd=repo.path)
        assert result.returncode == 2
        assert "another `orchestra cleanup` is running" in result.stderr
        assert branch in repo.branches()
    finally:
        lease.release()


def test_older_than_keeps_recent_sessions_and_bad_values_are_refused(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    session_id, branch, _ = _run(repo)
    repo.git("merge", "--quiet", "--no-edit", branch)

    for age in ("30m", "12h", "7d", "2w"):
        document = _cleanup(repo, "--force", "--older-than", age)
        assert _by_reason(document["kept"]) == {session_id: "too-recent"} and document["removed"] == []
    for bad in ("7", "3s", "0d", "-1h", "week"):
        result = orchestra("cleanup", "--older-than", bad, "--json", cwd=repo.path)
        assert result.returncode == 2, bad
        assert "--older-than" in result.stderr and "30m, 12h, 7d, 2w" in result.stderr
        assert json.loads(result.stdout)["error"]
    assert branch in repo.branches()


def test_protected_branches_are_never_removed(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    session_id, branch, _ = _run(repo)
    repo.git("merge", "--quiet", "--no-edit", branch)
    (repo.path / "orchestra.yaml").write_text(CONFIG % ", protected_branches: ['orchestra/*']", encoding="utf-8")

    document = _cleanup(repo, "--force")

    assert _by_reason(document["kept"]) == {session_id: "protected"}
    assert branch in repo.branches()


def test_in_place_checkout_is_never_removed_only_its_branch_once_switched_away(tmp_path: Path) -> None:
    repo = _project(tmp_path, ", isolation: in_place")
    session_id, branch, head = _run(repo)
    assert repo.git("symbolic-ref", "--short", "HEAD").strip() == branch

    kept = _cleanup(repo, "--force")["kept"]
    assert _by_reason(kept) == {session_id: "checked-out"} and "in_place" in kept[0]["detail"]

    repo.git("checkout", "--quiet", "main")
    document = _cleanup(repo, "--force")
    [removed] = document["removed"]
    assert removed["worktrees"] == [] and removed["reason"] == "forced"
    assert branch not in repo.branches() and repo.head(f"refs/orchestra/abandoned/{session_id}/1") == head
    assert repo.status() == "" and (repo.path / "orchestra.yaml").is_file()


def test_a_worktree_deleted_by_hand_is_pruned_and_its_merged_branch_removed(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    session_id, branch, _ = _run(repo)
    repo.git("merge", "--quiet", "--no-edit", branch)
    shutil.rmtree(repo.path / ".orchestra" / "worktrees" / session_id)

    document = _cleanup(repo)

    [removed] = document["removed"]
    assert (removed["reason"], removed["worktrees"]) == ("merged", [])
    assert [entry["path"] for entry in document["pruned"]] == [
        str((repo.path / ".orchestra" / "worktrees" / session_id / "app").resolve())
    ]
    assert branch not in repo.branches() and "prunable" not in repo.git("worktree", "list", "--porcelain")
