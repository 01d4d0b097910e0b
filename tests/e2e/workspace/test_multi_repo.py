"""Two workspace repos through `orchestra run`: independent branches, a turn writing to both commits in each
and records both SHAs, and `orchestra show` finds that turn from either repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    agent_turns,
    committed_files,
    orchestra,
    run_json,
    trailers,
    write_files,
)

PIPELINE = """digraph multi {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Add the endpoint and its page"]
    start -> implement -> exit
}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "The endpoint and the page that calls it."
      tool_calls:
        - {name: "backend:write-file", args: {path: api.py, content: "def hello():\n    return 'hi'\n"}}
        - {name: "frontend:write-file", args: {path: app.js, content: "fetch('/hello')\n"}}
    - content: "And a model on the backend."
      tool_calls:
        - {name: "backend:write-file", args: {path: models.py, content: "class User: ...\n"}}
    - content: "Done."
commit_messages:
  - "Add the hello endpoint\n\nServes a greeting."
  - "Call the hello endpoint\n\nFetches the greeting."
  - "Add the User model\n\nAn empty class for now."
"""
BRANCH = "orchestra/multi/1"


@frozen
class MultiRun:
    project: Path
    backend: GitRepo
    frontend: GitRepo
    bases: dict[str, str]
    env: dict[str, str]
    document: dict[str, Any]


@pytest.fixture(scope="module")
def multi(tmp_path_factory: pytest.TempPathFactory) -> MultiRun:
    root = tmp_path_factory.mktemp("multi")
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    backend = make_repo(root / "backend", {"server.py": "app = None\n"})
    frontend = make_repo(root / "frontend", {"index.html": "<html></html>\n"})
    workspace = "workspace:\n  repos:\n    backend: {path: ../backend}\n    frontend: {path: ../frontend}\n"
    project = root / "project"
    write_files(
        project,
        {"orchestra.yaml": SCRIPTED_PROVIDER + workspace, "multi.dot": PIPELINE, "cassette.yaml": CASSETTE},
    )
    bases = {"backend": backend.head(), "frontend": frontend.head()}
    document = run_json("run", "multi.dot", cwd=project, env=env)
    return MultiRun(project, backend, frontend, bases, env, document)


def test_each_repo_gets_its_own_branch_and_commits(multi: MultiRun) -> None:
    backend = list(reversed(multi.backend.log(f"main..{BRANCH}")))
    frontend = list(reversed(multi.frontend.log(f"main..{BRANCH}")))
    assert [committed_files(multi.backend, sha) for sha in backend] == [["api.py"], ["models.py"]]
    assert [committed_files(multi.frontend, sha) for sha in frontend] == [["app.js"]]
    assert multi.backend.files_in(BRANCH) == ["api.py", "models.py", "server.py"]
    assert multi.frontend.files_in(BRANCH) == ["app.js", "index.html"]
    assert (
        trailers(multi.backend, backend[0])["Orchestra-Turn"]
        == trailers(multi.frontend, frontend[0])["Orchestra-Turn"]
        == "0"
    )
    assert multi.document["repos"] == {
        name: {"branch": BRANCH, "base_sha": multi.bases[name], "head_sha": repo.head(BRANCH)}
        for name, repo in (("backend", multi.backend), ("frontend", multi.frontend))
    }


def test_a_turn_writing_to_both_repos_records_both_commits(multi: MultiRun) -> None:
    first, second, last = [record for _, record in agent_turns(multi.project, "1")]
    backend_sha, frontend_sha = multi.backend.head(f"{BRANCH}~1"), multi.frontend.head(BRANCH)
    assert [(c.repo, c.sha, c.branch) for c in first.commits] == [
        ("backend", backend_sha, BRANCH),
        ("frontend", frontend_sha, BRANCH),
    ]
    assert first.git_sha == backend_sha and first.files_written == ("backend:api.py", "frontend:app.js")
    assert [c.repo for c in second.commits] == ["backend"] and not last.commits


def test_show_finds_the_shared_turn_from_either_repo(multi: MultiRun) -> None:
    [turn_id] = [turn.turn_id for turn, record in agent_turns(multi.project, "1") if len(record.commits) == 2]
    for repo, rev in ((multi.backend, f"{BRANCH}~1"), (multi.frontend, BRANCH)):
        shown = json.loads(orchestra("show", rev, "--json", cwd=repo.path, env=multi.env).stdout)
        assert shown["turn"]["turn_id"] == turn_id and shown["commit"]["repo"] == repo.path.name
        assert [c["repo"] for c in shown["turn"]["commits"]] == ["backend", "frontend"]
    text = orchestra("show", BRANCH, cwd=multi.frontend.path, env=multi.env).stdout
    assert f"also     backend {multi.backend.head(f'{BRANCH}~1')[:12]}  (branch {BRANCH})" in text


def test_show_in_the_project_directory_asks_the_workspace_repos(multi: MultiRun) -> None:
    sha = multi.backend.head(BRANCH)
    shown = json.loads(orchestra("show", sha, "--json", cwd=multi.project, env=multi.env).stdout)
    assert shown["commit"]["sha"] == sha and shown["commit"]["repo"] == "backend"
    same_name = orchestra("show", BRANCH, cwd=multi.project, env=multi.env)
    assert same_name.returncode == 2
    assert "names a different commit in each of the project's repos (backend: " in same_name.stderr
    unknown = orchestra("show", "no-such-rev", cwd=multi.project, env=multi.env)
    assert unknown.returncode == 2
    assert "names no commit in the project's workspace repos (backend, frontend)" in unknown.stderr
