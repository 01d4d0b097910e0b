"""A project whose `.orchestra/` was deleted by hand (store, run directories and worktrees gone, git still
listing the worktrees) runs again: the stale worktree registrations are forgotten, not an error."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.git_repos import git, make_repo
from tests.support.orchestra_project import run_json, write_files

PIPELINE = """digraph d {
    start [shape=Mdiamond]; exit [shape=Msquare]
    step [shape=parallelogram, tool_command="echo ok"]
    start -> step -> exit
}
"""


def test_a_run_after_the_state_directory_was_deleted_works(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "project", {".gitignore": ".orchestra/\n"}).path
    write_files(project, {"orchestra.yaml": "workspace:\n  repos:\n    project: {path: .}\n", "d.dot": PIPELINE})
    assert run_json("run", "d.dot", "--backend", "simulate", cwd=project)["status"] == "success"
    shutil.rmtree(project / ".orchestra")
    assert "prunable" in git(project, "worktree", "list", "--porcelain")

    again = run_json("run", "d.dot", "--backend", "simulate", cwd=project)
    assert again["status"] == "success"
    assert (project / ".orchestra" / "worktrees" / again["session_id"] / "project").is_dir()
