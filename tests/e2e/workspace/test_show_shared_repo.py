"""`orchestra show` when two projects share one repository and both ran a session 1: the commit, not the
session id, decides which project's session made it (and a copied commit prefers its trailers' pipeline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attrs import frozen

from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, orchestra, run_json, trailers, write_files

PIPELINE = """digraph NAME {
    start     [shape=Mdiamond]
    exit      [shape=Msquare]
    implement [prompt="Write the module"]
    start -> implement -> exit
}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "Adding a.py."
      tool_calls:
        - {name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}
    - content: "Done."
commit_messages:
  - "Add module a\n\nDefines A."
default: "Done."
"""


@frozen
class Shared:
    app: GitRepo
    env: dict[str, str]
    projects: dict[str, Path]
    commits: dict[str, str]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    root = tmp_path_factory.mktemp("shared")
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    app = make_repo(root / "app", {"README.md": "# App\n"})
    projects: dict[str, Path] = {}
    commits: dict[str, str] = {}
    for name in ("alpha", "beta"):  # alpha is linked first, so it is tried first
        project = root / name
        write_files(
            project,
            {
                "orchestra.yaml": SCRIPTED_PROVIDER + "workspace:\n  repos:\n    app:\n      path: ../app\n",
                "pipeline.dot": PIPELINE.replace("NAME", name),
                "cassette.yaml": CASSETTE,
            },
        )
        document = run_json("run", "pipeline.dot", cwd=project, env=env)
        assert (document["status"], document["session_id"]) == ("success", "1")
        projects[name] = project
        commits[name] = document["repos"]["app"]["head_sha"]
    assert commits["alpha"] != commits["beta"]
    for name, sha in commits.items():
        assert trailers(app, sha)["Orchestra-Session"] == "1"
        assert trailers(app, sha)["Orchestra-Pipeline"] == name
    return Shared(app, env, projects, commits)


def show(shared: Shared, rev: str, cwd: Path) -> dict[str, object]:
    return json.loads(orchestra("show", rev, "--json", cwd=cwd, env=shared.env).stdout)


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_each_commit_names_the_project_that_made_it_from_the_repo(shared: Shared, name: str) -> None:
    shown = show(shared, shared.commits[name], shared.app.path)
    assert (shown["project"], shown["session"]["session_id"]) == (str(shared.projects[name]), "1")  # type: ignore[index]
    assert shown["turn"]["matched"] == "sha" and shown["turn"]["also_matches"] == []  # type: ignore[index]
    assert shown["session"]["pipeline"] == name  # type: ignore[index]


def test_from_the_other_projects_worktree_the_commits_project_still_wins(shared: Shared) -> None:
    worktree = shared.projects["alpha"] / ".orchestra" / "worktrees" / "1" / "app"  # alpha is tried first
    shown = show(shared, shared.commits["beta"], worktree)
    assert shown["project"] == str(shared.projects["beta"])
    text = orchestra("show", shared.commits["beta"], cwd=worktree, env=shared.env).stdout
    assert f"(project {shared.projects['beta']})" in text and "pipeline beta" in text


def test_a_copied_commit_prefers_the_session_of_its_pipeline_trailer(shared: Shared) -> None:
    shared.app.git("checkout", "-q", "-b", "picked", "main")
    try:
        shared.app.git("cherry-pick", shared.commits["beta"])
        shown = show(shared, "HEAD", shared.app.path)
    finally:
        shared.app.git("checkout", "-q", "main")
    assert shown["project"] == str(shared.projects["beta"])
    assert shown["turn"]["matched"] == "trailers"  # type: ignore[index]
