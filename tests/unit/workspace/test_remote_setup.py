"""RemoteSetup before a session exists: every problem is a WorkspaceConfigError under the repo's remote key."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.workspace_events import RepoCloned
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.testing.git_remotes import InMemoryGitRemotes
from orchestra_core.workspace.errors import WorkspaceConfigError
from orchestra_core.workspace.remotes import RemoteSetup

URL = "https://bob:secret@git.example/app.git"


def test_a_remote_without_the_port_is_a_clear_error(tmp_path: Path) -> None:
    setup = RemoteSetup({"app": RepoSettings(path="app", remote=URL)}, None, InMemoryGit(), tmp_path)
    with pytest.raises(WorkspaceConfigError) as caught:
        setup.prepare()
    assert caught.value.key == "workspace.repos.app.remote" and "no GitRemotes port" in str(caught.value)


def test_every_failing_repo_is_listed_with_its_category_and_no_password(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    remotes.add_remote(URL)
    remotes.fail(URL, "auth")
    repos = {
        "app": RepoSettings(path="app", remote=URL),
        "lib": RepoSettings(path="lib", remote="https://git.example/missing.git"),
    }
    with pytest.raises(WorkspaceConfigError) as caught:
        RemoteSetup(repos, remotes, InMemoryGit(), tmp_path).prepare()
    keys = [key for key, _ in caught.value.problems]
    assert keys == ["workspace.repos.app.remote", "workspace.repos.lib.remote"]
    assert "(auth)" in str(caught.value) and "(not_found)" in str(caught.value) and "secret" not in str(caught.value)


def test_a_missing_path_is_cloned_with_its_depth_and_repos_without_remote_are_left_alone(tmp_path: Path) -> None:
    remotes = InMemoryGitRemotes()
    remotes.add_remote(URL)
    repos = {"app": RepoSettings(path="app", remote=URL, clone_depth=1), "local": RepoSettings(path="local")}
    [event] = RemoteSetup(repos, remotes, InMemoryGit(), tmp_path).prepare()
    assert isinstance(event, RepoCloned) and (event.depth, event.path) == (1, str(tmp_path / "app"))
    assert "secret" not in event.url and remotes.is_shallow(tmp_path / "app")
    assert not (tmp_path / "local").exists()
