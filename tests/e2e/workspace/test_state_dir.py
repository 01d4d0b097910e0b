"""`.orchestra/` never shows up in the project repository's `git status`, whatever the run's workspace."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import orchestra

PIPELINE = """digraph plain {
    start [shape=Mdiamond]; exit [shape=Msquare]
    check [shape=parallelogram, tool_command="true"]
    start -> check -> exit
}
"""


def test_a_run_without_workspace_repos_leaves_the_project_repo_clean(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", {"plain.dot": PIPELINE})
    result = orchestra("run", "plain.dot", "--quiet", cwd=repo.path)
    assert result.returncode == 0, result.stderr
    assert (repo.path / ".orchestra" / "orchestra.db").is_file()
    assert repo.status() == ""


def test_a_failed_workspace_setup_leaves_the_project_repo_clean(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "project",
        {"plain.dot": PIPELINE, "orchestra.yaml": "workspace:\n  repos:\n    gone: {path: ../missing}\n"},
    )
    result = orchestra("run", "plain.dot", cwd=repo.path)
    assert result.returncode == 2 and "workspace.repos.gone.path" in result.stderr
    assert (repo.path / ".orchestra" / "orchestra.db").is_file()
    assert repo.status() == ""
