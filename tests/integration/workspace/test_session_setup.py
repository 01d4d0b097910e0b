"""Session setup: branches from the recorded base, managed worktrees, validation first, user checkout untouched."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import RepoSettings
from orchestra_core.ports.git import GitError
from orchestra_core.workspace import SessionBranchCreated, WorkspaceConfigError, WorkspaceError
from tests.integration.workspace.conftest import SESSION_ID, Harness, make_turn
from tests.support.git_repos import git, make_repo


def _tree_fingerprint(root: Path) -> dict[str, str]:
    """Every file outside .git (and the state dir) with a hash of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.parts and ".orchestra" not in path.parts
    }


def test_branch_created_from_base_sha_with_conventional_name(harness: Harness) -> None:
    repo = harness.repo("project", {"app.py": "v1\n"})
    base = repo.head()
    session = harness.manager().setup_session(SESSION_ID, "test_git")
    context = session.contexts["project"]
    assert context.branch_name == "orchestra/test_git/3f2a9c1e"
    assert context.base_sha == context.head_sha == base and context.base_ref == "HEAD"
    assert repo.head(context.branch_name) == base
    assert context.worktree_path == harness.root / ".orchestra" / "worktrees" / SESSION_ID / "project"
    assert (context.worktree_path / "app.py").read_text() == "v1\n"
    assert git(context.worktree_path, "symbolic-ref", "--short", "HEAD").strip() == context.branch_name
    assert context.session_id == context.run_id == SESSION_ID and context.isolation == "worktree"
    assert context.created_at.tzinfo is not None
    [event] = harness.events_of(SessionBranchCreated)
    assert (event.repo, event.branch, event.base_sha, event.requested_branch) == (
        "project",
        context.branch_name,
        base,
        context.branch_name,
    )


def test_base_ref_is_resolved_and_recorded(harness: Harness) -> None:
    repo = harness.repo("project")
    first = repo.head()
    repo.git("tag", "v1")
    repo.write("later.txt", "later")
    repo.commit_all("later")
    session = harness.manager(base_ref="v1", branch_prefix="bots/").setup_session("abc", "p")
    context = session.contexts["project"]
    assert context.base_sha == first and context.base_ref == "v1" and context.branch_name == "bots/p/abc"
    assert not (context.worktree_path / "later.txt").exists()


def test_multi_repo_gets_one_branch_each_and_branches_persist(harness: Harness) -> None:
    backend, frontend = harness.repo("backend"), harness.repo("frontend")
    session = harness.manager().setup_session(SESSION_ID, "pr-review")
    assert set(session.contexts) == {"backend", "frontend"}
    for name, repo in (("backend", backend), ("frontend", frontend)):
        assert "orchestra/pr-review/3f2a9c1e" in repo.branches()
        assert session.contexts[name].repo_root == repo.path.resolve()
    del session  # the run is over: nothing is cleaned up
    assert (
        "orchestra/pr-review/3f2a9c1e" in backend.branches()
        and "orchestra/pr-review/3f2a9c1e" in frontend.branches()
    )
    assert len(harness.events_of(SessionBranchCreated)) == 2


def test_existing_branch_and_ref_prefix_clashes_pick_another_name(harness: Harness) -> None:
    repo = harness.repo("project")
    repo.git("branch", "orchestra/p/3f2a9c1e")
    session = harness.manager().setup_session(SESSION_ID, "p")
    assert session.contexts["project"].branch_name == "orchestra/p/3f2a9c1e-2"
    [event] = harness.events_of(SessionBranchCreated)
    assert event.requested_branch == "orchestra/p/3f2a9c1e" and event.branch.endswith("-2")
    other = harness.repo("other")
    other.git("branch", "orchestra/q")  # `orchestra/q/...` cannot exist next to it
    harness.repos.pop("project")
    session2 = harness.manager().setup_session("ffff0000", "q")
    assert session2.contexts["other"].branch_name == "orchestra/q-2/ffff0000"


def test_state_dir_inside_the_repo_is_excluded_and_user_checkout_is_untouched(harness: Harness) -> None:
    repo = harness.repo("project", {"app.py": "v1\n", "lib.py": "lib\n"}, inside=False)
    harness.root = repo.path  # the project is the repository itself
    repo.write("app.py", "user's unsaved edit\n")
    repo.write("staged.py", "staged by the user\n")
    repo.git("add", "staged.py")
    repo.write("scratch.txt", "untracked\n")
    before = (
        repo.status(),
        repo.head(),
        repo.git("symbolic-ref", "HEAD"),
        _tree_fingerprint(repo.path),
        (repo.path / ".git" / "index").read_bytes(),
    )
    session = harness.manager().setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    assert context.worktree_path.is_relative_to(repo.path)
    assert "/.orchestra/" in (repo.path / ".git" / "info" / "exclude").read_text()
    context.worktree_path.joinpath("app.py").write_text("agent's version\n")
    session.commit_turn(make_turn(["project:app.py"]))
    after = (
        repo.status(),
        repo.head(),
        repo.git("symbolic-ref", "HEAD"),
        _tree_fingerprint(repo.path),
        (repo.path / ".git" / "index").read_bytes(),
    )
    assert after == before
    assert repo.show(context.branch_name, "app.py") == "agent's version\n"


def test_validation_reports_every_problem_before_creating_anything(harness: Harness, tmp_path: Path) -> None:
    good = harness.repo("good")
    (tmp_path / "plain").mkdir()
    bare = tmp_path / "bare.git"
    good.git("clone", "--quiet", "--bare", str(good.path), str(bare))
    empty = make_repo(tmp_path / "empty", {})
    sub = harness.repo("withsub", {"pkg/mod.py": "x"})
    settings = {
        "good": RepoSettings(path=str(good.path)),
        "missing": RepoSettings(path=str(tmp_path / "nowhere")),
        "plain": RepoSettings(path=str(tmp_path / "plain")),
        "bare": RepoSettings(path=str(bare)),
        "empty": RepoSettings(path=str(empty.path)),
        "badref": RepoSettings(path=str(sub.path), base_ref="no-such-branch"),
        "subdir": RepoSettings(path=str(sub.path / "pkg")),
        "twice": RepoSettings(path=str(good.path)),
        "prefix": RepoSettings(path=str(sub.path), branch_prefix="bad..prefix/"),
        "iso": RepoSettings(path=str(sub.path), isolation="sideways"),  # type: ignore[arg-type]
    }
    with pytest.raises(WorkspaceConfigError) as caught:
        harness.manager(settings).setup_session(SESSION_ID, "p")
    keys = [key for key, _ in caught.value.problems]
    assert keys == [
        "workspace.repos.missing.path",
        "workspace.repos.plain.path",
        "workspace.repos.bare.path",
        "workspace.repos.empty.base_ref",
        "workspace.repos.badref.base_ref",
        "workspace.repos.subdir.path",
        "workspace.repos.twice.path",
        "workspace.repos.prefix.branch_prefix",
        "workspace.repos.iso.isolation",
    ]
    message = str(caught.value)
    assert "does not exist" in message and "not a git repository" in message and "bare" in message
    assert "'no-such-branch' does not name a commit" in message and "give its top level" in message
    assert good.branches() == ["main"] and not (harness.root / ".orchestra").exists()


def test_protected_pattern_matching_the_session_branch_is_refused(harness: Harness) -> None:
    repo = harness.repo("project")
    manager = harness.manager(branch_prefix="release/")
    with pytest.raises(WorkspaceConfigError, match="protected pattern 'release/\\*'"):
        manager.setup_session(SESSION_ID, "p")
    assert repo.branches() == ["main"]


def test_cheap_model_check_runs_before_anything_is_created(harness: Harness) -> None:
    repo = harness.repo("project")

    def no_cheap_model() -> None:
        raise OrchestraError("providers.anthropic.models.cheap is not configured")

    with pytest.raises(OrchestraError, match="cheap is not configured"):
        harness.manager().setup_session(SESSION_ID, "p", check_cheap_model=no_cheap_model)

    def broken_check() -> None:
        raise KeyError("cheap")

    with pytest.raises(WorkspaceConfigError, match="`cheap` model alias"):
        harness.manager().setup_session(SESSION_ID, "p", check_cheap_model=broken_check)
    assert repo.branches() == ["main"]


def test_existing_worktree_directory_is_refused(harness: Harness) -> None:
    harness.repo("project")
    manager = harness.manager()
    manager.worktrees_dir(SESSION_ID).joinpath("project").mkdir(parents=True)
    with pytest.raises(WorkspaceConfigError, match="already exists"):
        manager.setup_session(SESSION_ID, "p")


class _WorktreeAddFails(SubprocessGit):
    """Real git, except that adding a worktree to repo `b` fails (as a full disk would)."""

    def worktree_add(self, repo: Path, path: Path, branch: str) -> None:
        if Path(repo).name == "b":
            raise GitError(repo, ["worktree", "add"], "No space left on device")
        super().worktree_add(repo, path, branch)


def test_failure_while_creating_undoes_what_was_created(harness: Harness) -> None:
    first, second = harness.repo("a"), harness.repo("b")
    with pytest.raises(WorkspaceError, match="No space left on device"):
        harness.manager(git=_WorktreeAddFails()).setup_session(SESSION_ID, "p")
    assert first.branches() == ["main"] and second.branches() == ["main"]
    assert len(first.git("worktree", "list").splitlines()) == 1
    assert not harness.manager().worktrees_dir(SESSION_ID).joinpath("a").exists()
    assert harness.events_of(SessionBranchCreated) == []


def test_in_place_checks_out_the_session_branch_in_the_repo(harness: Harness) -> None:
    repo = harness.repo("project")
    session = harness.manager(isolation="in_place").setup_session(SESSION_ID, "p")
    context = session.contexts["project"]
    assert context.worktree_path == repo.path.resolve() and context.isolation == "in_place"
    assert repo.git("symbolic-ref", "--short", "HEAD").strip() == context.branch_name
    assert len(repo.git("worktree", "list").splitlines()) == 1


def test_in_place_refuses_a_dirty_tree(harness: Harness) -> None:
    repo = harness.repo("project", {"app.py": "v1\n"})
    repo.write("app.py", "dirty\n")
    with pytest.raises(
        WorkspaceConfigError, match=r"isolation: in_place needs a clean working tree.*app\.py"
    ):
        harness.manager(isolation="in_place").setup_session(SESSION_ID, "p")
    assert repo.git("symbolic-ref", "--short", "HEAD").strip() == "main" and repo.branches() == ["main"]
    assert (repo.path / "app.py").read_text() == "dirty\n"


def test_no_repos_configured_gives_an_empty_session(harness: Harness) -> None:
    session = harness.manager({}).setup_session(SESSION_ID, "p")
    assert session.contexts == {} and session.snapshot() == {}
    turn = make_turn(["project:a.py"])
    assert session.commit_turn(turn) is turn


def test_state_dir_is_excluded_in_the_project_repo_even_when_not_a_workspace_repo(harness: Harness) -> None:
    project_repo = make_repo(harness.root)
    harness.repo("backend")
    before = project_repo.status()
    harness.manager().setup_session(SESSION_ID, "p")
    assert project_repo.status() == before == ""
    assert (project_repo.path / ".git" / "info" / "exclude").read_text().count("/.orchestra/") == 1


def test_setup_starts_no_worktree_prune_and_still_takes_the_path_of_a_worktree_deleted_by_hand(
    harness: Harness, tmp_path: Path
) -> None:
    import json
    import os
    import shutil

    from orchestra_adapters.git.command import GitCommand

    harness.repo("project", {"app.py": "v1\n"})
    trace = tmp_path / "trace.json"
    traced = SubprocessGit(GitCommand(base_env={**os.environ, "GIT_TRACE2_EVENT": str(trace)}))
    first = harness.manager(git=traced).setup_session(SESSION_ID, "p").contexts["project"]
    started = [json.loads(line)["argv"] for line in trace.read_text().splitlines() if '"event":"start"' in line]
    assert not [argv for argv in started if "prune" in argv]  # a fresh path needs no pruning
    assert [argv for argv in started if "add" in argv and "worktree" in argv]
    shutil.rmtree(harness.root / ".orchestra")  # the worktree stays registered in the repository
    again = harness.manager(git=traced).setup_session(SESSION_ID, "p").contexts["project"]
    assert again.worktree_path == first.worktree_path and (again.worktree_path / "app.py").read_text() == "v1\n"
    assert git(again.worktree_path, "status", "--porcelain").strip() == ""
