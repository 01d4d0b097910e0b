"""Git hardening: a repository whose config, hooks and attributes name programs (as an agent that managed to
write `.git/config` would set them) never gets one run by Orchestra's own git commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.git.command import GitCommand
from orchestra_core.ports.git import GitError
from orchestra_core.workspace import WorkspaceCommitError
from tests.integration.workspace.conftest import SESSION_ID, Harness, TurnFactory
from tests.support.git_repos import GitRepo, git
from tests.support.hostile_git import HostileRepo


@pytest.fixture
def hostile(harness: Harness, tmp_path: Path) -> HostileRepo:
    repo = harness.repo("project", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})
    armed = HostileRepo(repo.path, tmp_path / "spies")
    armed.commit_attributes()
    armed.arm()
    return armed


def _prove_armed(hostile: HostileRepo, signed: str) -> None:
    """Plain git in the same repository does run the programs: the test above it means something."""
    (hostile.path / "README.md").write_text("touched\n", encoding="utf-8")
    hostile.plain_git("status", "--porcelain")
    hostile.plain_git("log", "-1", signed)
    hostile.plain_git("hash-object", "README.md")
    ran = " ".join(hostile.runs())
    assert "spy fsmonitor" in ran and "spy-gpg" in ran and "spy-filter clean" in ran, ran


def test_a_session_with_commits_diffs_logs_and_a_restore_runs_nothing_the_repo_names(
    harness: Harness, hostile: HostileRepo, turn: TurnFactory
) -> None:
    session = harness.manager().setup_session(SESSION_ID, "hostile")
    worktree = session.contexts["project"].worktree_path
    assert (worktree / "README.md").read_text() == "hello\n"  # checked out without the smudge driver
    (worktree / "src" / "hello.py").write_text("def hello(): ...\n")
    (worktree / "README.md").write_text("hello again\n")
    (worktree / "more.proc").write_text("for the process driver\n")
    (worktree / "more.inc").write_text("for the included driver\n")
    first = session.commit_turn(turn(["project:src/hello.py", "project:README.md", "project:more.proc"]))
    second = session.commit_turn(turn(["project:more.inc"], number=2))
    assert first.git_sha and second.git_sha

    git_port = SubprocessGit()
    base = session.contexts["project"].base_sha
    signed = hostile.signed_commit()
    assert git_port.log(hostile.path, signed, max_count=1)[0].sha == signed
    assert git_port.trailers(hostile.path, signed) == {}
    assert git_port.status(worktree) == ()
    assert "hello again" in git_port.diff(hostile.path, base, second.git_sha)
    assert len(git_port.log(hostile.path, second.git_sha, max_count=5)) == 4
    assert git_port.trailers(hostile.path, second.git_sha)["Orchestra-Turn"] == "2"
    assert {change.path for change in git_port.changed_files(hostile.path, first.git_sha)} == {
        "README.md", "src/hello.py", "more.proc",
    }
    session.restore("project", first.git_sha)
    session.rollback("project")
    assert hostile.runs() == []

    committed = GitRepo(hostile.path)
    assert committed.show(first.git_sha, "README.md") == "hello again\n"  # stored as written, no clean driver
    _prove_armed(hostile, signed)


def test_in_place_checkout_commit_and_reset_run_nothing_the_repo_names(
    harness: Harness, hostile: HostileRepo, turn: TurnFactory
) -> None:
    session = harness.manager(isolation="in_place").setup_session(SESSION_ID, "hostile")
    (hostile.path / "notes.txt").write_text("in place\n")
    committed = session.commit_turn(turn(["project:notes.txt"]))
    assert committed.git_sha
    session.rollback("project")
    assert not (hostile.path / "notes.txt").exists()
    assert hostile.runs() == []
    _prove_armed(hostile, hostile.signed_commit())


def test_a_filter_driver_from_the_users_own_config_still_runs(harness: Harness, tmp_path: Path, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    (repo.path / ".gitattributes").write_text("*.up filter=upper\n")
    repo.commit_all("attributes")
    user_config = tmp_path / "gitconfig"
    user_config.write_text('[filter "upper"]\n\tclean = tr a-z A-Z\n', encoding="utf-8")
    # The repository's config names another program for the same driver: the user's one wins.
    git(repo.path, "config", "--local", "filter.upper.clean", f"sh -c 'touch {tmp_path}/ran'; cat")
    command = GitCommand(base_env={**os.environ, "GIT_CONFIG_GLOBAL": str(user_config)})
    session = harness.manager(git=SubprocessGit(command)).setup_session(SESSION_ID, "filters")
    (session.contexts["project"].worktree_path / "shout.up").write_text("quiet words\n")
    committed = session.commit_turn(turn(["project:shout.up"]))
    assert repo.show(committed.git_sha or "", "shout.up") == "QUIET WORDS\n"
    assert not (tmp_path / "ran").exists()


def test_a_required_driver_only_the_repo_defines_fails_the_commit_instead_of_storing_unfiltered_content(
    harness: Harness, tmp_path: Path, turn: TurnFactory
) -> None:
    repo = harness.repo("project")
    (repo.path / ".gitattributes").write_text("*.secret filter=crypt\n")
    repo.commit_all("attributes")
    git(repo.path, "config", "--local", "filter.crypt.clean", f"sh -c 'touch {tmp_path}/ran'; cat")
    git(repo.path, "config", "--local", "filter.crypt.required", "true")
    session = harness.manager().setup_session(SESSION_ID, "filters")
    (session.contexts["project"].worktree_path / "key.secret").write_text("plain text\n")
    with pytest.raises(WorkspaceCommitError, match="clean filter 'crypt' failed"):
        session.commit_turn(turn(["project:key.secret"]))
    assert not (tmp_path / "ran").exists()


def test_core_worktree_in_the_config_does_not_redirect_a_reset(harness: Harness, tmp_path: Path) -> None:
    repo = harness.repo("project", {"README.md": "hello\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep me\n")
    (repo.path / "scratch.txt").write_text("untracked\n")
    git(repo.path, "config", "--local", "core.worktree", str(elsewhere))
    SubprocessGit().discard_changes(repo.path, repo.head())
    assert (elsewhere / "precious.txt").read_text() == "keep me\n"
    assert not (repo.path / "scratch.txt").exists()


def test_a_driver_name_holding_an_equals_sign_is_overridden_whole(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.path.mkdir()
    git(repo.path, "init", "-q", "-b", "main")
    git(repo.path, "config", "--local", "filter.evil=x.clean", "touch ran")
    overrides = GitCommand().driver_overrides(repo.path)
    assert overrides == {"filter.evil=x.clean": ""}


def test_a_config_that_git_cannot_read_is_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.path.mkdir()
    git(repo.path, "init", "-q", "-b", "main")
    with (repo.path / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write("[broken\n")
    with pytest.raises(GitError):
        SubprocessGit().status(repo.path)


def _hook(directory: Path, marker: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    hook = directory / "post-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)


def test_per_turn_commits_run_no_hook_by_default(harness: Harness, tmp_path: Path, turn: TurnFactory) -> None:
    repo = harness.repo("project")
    _hook(repo.path / ".git" / "hooks", tmp_path / "hooked")
    session = harness.manager().setup_session(SESSION_ID, "hooks")
    (session.contexts["project"].worktree_path / "a.txt").write_text("a\n")
    assert session.commit_turn(turn(["project:a.txt"])).git_sha
    assert not (tmp_path / "hooked").exists()


def test_run_hooks_runs_the_repositorys_own_hooks_never_a_directory_its_config_names(
    harness: Harness, tmp_path: Path, turn: TurnFactory
) -> None:
    repo = harness.repo("project")
    _hook(repo.path / ".git" / "hooks", tmp_path / "hooked")
    _hook(repo.path / "tools" / "hooks", tmp_path / "hostile")  # in the tree, where agents write
    repo.commit_all("hooks in the tree")
    git(repo.path, "config", "--local", "core.hooksPath", "tools/hooks")
    session = harness.manager(run_hooks=True).setup_session(SESSION_ID, "hooks")
    (session.contexts["project"].worktree_path / "a.txt").write_text("a\n")
    assert session.commit_turn(turn(["project:a.txt"])).git_sha
    assert (tmp_path / "hooked").exists() and not (tmp_path / "hostile").exists()


def test_run_hooks_follows_core_hooks_path_from_the_users_own_config(
    harness: Harness, tmp_path: Path, turn: TurnFactory
) -> None:
    harness.repo("project")
    _hook(tmp_path / "my-hooks", tmp_path / "mine")
    user_config = tmp_path / "gitconfig"
    user_config.write_text(f"[core]\n\thooksPath = {tmp_path / 'my-hooks'}\n", encoding="utf-8")
    command = GitCommand(base_env={**os.environ, "GIT_CONFIG_GLOBAL": str(user_config)})
    session = harness.manager(git=SubprocessGit(command), run_hooks=True).setup_session(SESSION_ID, "hooks")
    (session.contexts["project"].worktree_path / "a.txt").write_text("a\n")
    assert session.commit_turn(turn(["project:a.txt"])).git_sha
    assert (tmp_path / "mine").exists()


def test_a_merge_driver_of_the_repository_config_never_runs_in_merge_tree(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.path.mkdir()
    git(repo.path, "init", "-q", "-b", "main")
    marker = tmp_path / "merge-driver-ran"
    repo.write(".gitattributes", "*.txt merge=evil\n")
    repo.write("a.txt", "base\n")
    base = repo.commit_all("base")
    git(repo.path, "config", "--local", "merge.evil.driver", f"touch {marker}; cp %B %A")
    repo.write("a.txt", "ours\n")
    ours = repo.commit_all("ours")
    git(repo.path, "checkout", "-q", "-b", "theirs", base)
    repo.write("a.txt", "theirs\n")
    theirs = repo.commit_all("theirs")
    result = SubprocessGit().merge_tree(repo.path, ours, theirs)
    assert not marker.exists()
    assert not result.clean and result.conflicted_paths == ("a.txt",)
