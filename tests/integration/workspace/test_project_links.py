"""The repo -> project link: recorded in each repo's config at setup and reopen, once, readable from worktrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.workspace_events import ProjectLinkFailed
from orchestra_core.ports.git import GitError
from orchestra_core.workspace.projects import (
    PROJECT_KEY,
    link_project,
    linked_projects,
)
from tests.integration.workspace.conftest import SESSION_ID, Harness
from tests.support.git_repos import make_repo


def test_setup_links_the_project_in_every_repo_once(harness: Harness) -> None:
    backend, frontend = harness.repo("backend"), harness.repo("frontend")
    session = harness.manager().setup_session(SESSION_ID, "p")
    git = SubprocessGit()
    for repo in (backend, frontend):
        assert linked_projects(git, repo.path) == (harness.root.resolve(),)
        worktree = session.contexts[repo.path.name].worktree_path
        assert linked_projects(git, worktree) == (harness.root.resolve(),)
    harness.manager().setup_session("second-session", "p")
    assert backend.git("config", "--local", "--get-all", PROJECT_KEY).split() == [str(harness.root.resolve())]
    assert not harness.events_of(ProjectLinkFailed)


def test_reopen_links_a_repo_set_up_before_links_existed(harness: Harness) -> None:
    repo = harness.repo("backend")
    manager = harness.manager()
    session = manager.setup_session(SESSION_ID, "p")
    repo.git("config", "--local", "--unset-all", PROJECT_KEY)
    manager.reopen_session(list(session.contexts.values()))
    assert linked_projects(SubprocessGit(), repo.path) == (harness.root.resolve(),)


def test_two_projects_sharing_a_repo_are_both_linked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shared")
    git = SubprocessGit()
    assert link_project(git, repo.path, tmp_path / "one")
    assert link_project(git, repo.path, tmp_path / "two" / ".." / "two")
    assert not link_project(git, repo.path, tmp_path / "one")
    assert linked_projects(git, repo.path) == ((tmp_path / "one").resolve(), (tmp_path / "two").resolve())


def test_a_config_that_cannot_be_written_is_a_warning_not_a_failure(harness: Harness) -> None:
    repo = harness.repo("backend")
    config = repo.path / ".git" / "config"
    (repo.path / ".git" / "config.lock").write_text("held by someone else", encoding="utf-8")
    session = harness.manager().setup_session(SESSION_ID, "p")
    assert session.contexts["backend"].branch_name.startswith("orchestra/p/")
    [warning] = harness.events_of(ProjectLinkFailed)
    assert warning.repo == "backend" and "config" in warning.reason and warning.level == "warning"
    assert PROJECT_KEY not in config.read_text(encoding="utf-8")


def test_linked_projects_outside_a_repository_raise(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="plain"):
        linked_projects(SubprocessGit(), tmp_path / "plain")
