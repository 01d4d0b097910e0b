"""The protected-branch guard on pushes, with real git and local bare remotes: a branch matching a repo's
`protected_branches` never reaches the remote (git is not even asked: the remote's hook never runs), the
refusal is a `protected` PushFailed warning, and through `orchestra run` such a session branch is refused at
setup before anything is pushed (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_adapters.git.remotes import SubprocessGitRemotes
from orchestra_core.model.workspace_events import PushFailed, RemotePushed, WorkspaceEvent
from orchestra_core.workspace.pushes import ON_COMPLETION, PushTarget, SessionPusher
from tests.support.environment import hermetic_env
from tests.support.git_remote_repos import bare_remote, commit_file, remote_branches
from tests.support.git_repos import git
from tests.support.orchestra_project import orchestra, write_files

PROTECTED = ("main", "master", "release/*", "deploy/*")


def _watched_remote(root: Path) -> tuple[Path, Path]:
    """A bare remote whose pre-receive hook notes every push that reaches it (and accepts it)."""
    bare = bare_remote(root / "app.git")
    marker = root / "pushes-received"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >> '{marker}'\nexit 0\n", encoding="utf-8")
    hook.chmod(0o755)
    return bare, marker


def _push(root: Path, bare: Path, branch: str) -> tuple[list[WorkspaceEvent], str]:
    clone = root / "clone"
    git(root, "clone", "--quiet", bare.as_uri(), str(clone))
    git(clone, "config", "user.name", "Test")
    git(clone, "config", "user.email", "t@example.com")
    sha = commit_file(clone, "work.txt", "work\n")
    events: list[WorkspaceEvent] = []
    target = PushTarget("app", clone, bare.as_uri(), branch, ON_COMPLETION, PROTECTED)
    SessionPusher(SubprocessGitRemotes(), {"app": target}, events.append, session_id="s").finish({"app": sha})
    return events, sha


@pytest.mark.parametrize("branch", ["main", "master", "release/2.0", "deploy/eu/prod"])
def test_a_push_to_a_protected_branch_is_refused_before_git_is_asked(tmp_path: Path, branch: str) -> None:
    bare, marker = _watched_remote(tmp_path)
    before = remote_branches(bare)
    events, sha = _push(tmp_path, bare, branch)
    [failed] = events
    assert isinstance(failed, PushFailed)
    assert (failed.repo, failed.branch, failed.sha, failed.category, failed.level) == (
        "app", branch, sha, "protected", "warning",
    )
    assert "protected branch" in failed.reason
    assert remote_branches(bare) == before and not marker.exists()


def test_a_branch_outside_the_patterns_is_pushed(tmp_path: Path) -> None:
    bare, marker = _watched_remote(tmp_path)
    events, sha = _push(tmp_path, bare, "orchestra/app/1")
    assert [type(event) for event in events] == [RemotePushed]
    assert remote_branches(bare)["orchestra/app/1"] == sha and marker.exists()


def test_orchestra_run_refuses_a_protected_session_branch_before_pushing_anything(tmp_path: Path) -> None:
    bare, marker = _watched_remote(tmp_path)
    before = remote_branches(bare)
    project = tmp_path / "project"
    config = (
        "workspace:\n  repos:\n    app: {path: app, remote: " + json.dumps(bare.as_uri())
        + ", push: on_checkpoint, branch_prefix: deploy/, protected_branches: ['deploy/*']}\n"
    )
    pipeline = "digraph rem { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }\n"
    write_files(project, {"orchestra.yaml": config, "rem.dot": pipeline})
    (tmp_path / "home").mkdir()
    result = orchestra("run", "rem.dot", cwd=project, env=hermetic_env(tmp_path / "home"))
    assert result.returncode == 2, result.stderr + result.stdout
    assert "would match protected pattern 'deploy/*'" in result.stderr
    assert remote_branches(bare) == before and not marker.exists()
