"""The protected-branch guard at session setup: a session branch whose name matches a repo's
`protected_branches` pattern is refused before anything is created (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import orchestra

PIPELINE = """digraph guard {
    start [shape=Mdiamond]; exit [shape=Msquare]
    start -> exit
}
"""


@pytest.mark.parametrize(
    ("repo_settings", "pattern"),
    [
        ("{path: ., branch_prefix: release/}", "release/*"),
        ("{path: ., branch_prefix: ci/, protected_branches: ['ci/*']}", "ci/*"),
        ("{path: ., branch_prefix: team-, protected_branches: ['main', 'team-*']}", "team-*"),
    ],
)
def test_a_session_branch_matching_a_protected_pattern_is_refused_at_setup(
    tmp_path: Path, repo_settings: str, pattern: str
) -> None:
    config = f"workspace:\n  repos:\n    project: {repo_settings}\n"
    repo = make_repo(tmp_path / "project", {"orchestra.yaml": config, "guard.dot": PIPELINE})
    base = repo.head()
    result = orchestra("run", "guard.dot", cwd=repo.path)
    assert result.returncode == 2, result.stderr + result.stdout
    [message] = result.stderr.splitlines()
    assert "workspace.repos.project.branch_prefix: session branch" in message
    assert f"would match protected pattern {pattern!r}" in message
    assert repo.branches() == ["main"] and repo.head() == base
    assert repo.git("worktree", "list").count("\n") == 1
    status = orchestra("status", "--json", cwd=repo.path)
    assert status.returncode == 0 and json.loads(status.stdout)["sessions"] == []


def test_a_prefix_outside_the_protected_patterns_is_accepted(tmp_path: Path) -> None:
    config = "workspace:\n  repos:\n    project: {path: ., branch_prefix: ci/, protected_branches: ['release/*']}\n"
    repo = make_repo(tmp_path / "project", {"orchestra.yaml": config, "guard.dot": PIPELINE})
    result = orchestra("run", "guard.dot", "--quiet", cwd=repo.path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert repo.branches() == ["ci/guard/1", "main"]
