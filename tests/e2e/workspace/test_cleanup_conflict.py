"""`orchestra cleanup` and sessions that are not simply finished: a failed fan-in whose merge conflict is kept in
its parallel branches, and an interrupted session (resumable); both stay unless --force."""

from __future__ import annotations

import json
from pathlib import Path

from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.model.workspace_events import SessionCleanedUp
from orchestra_core.session.api import append_record
from tests.support.environment import hermetic_env
from tests.support.git_repos import make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    open_store,
    orchestra,
    records_of,
    run_json,
    write_files,
)

PIPELINE = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Edit shared"]
    right [prompt="Edit shared too"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> exit
}
"""
CASSETTE = r"""
nodes:
  left:
    - content: "Left edit."
      tool_calls:
        - {name: "project:write-file", args: {path: shared.txt, content: "one\nLEFT\nthree\n"}}
    - content: "Done."
  right:
    - content: "Right edit."
      tool_calls:
        - {name: "project:write-file", args: {path: shared.txt, content: "one\nRIGHT\nthree\n"}}
    - content: "Done."
default: "Done."
"""
WORKSPACE = "workspace:\n  repos:\n    project: {path: ../repo}\n"


def test_a_preserved_merge_conflict_is_kept_until_forced(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", "shared.txt": "one\ntwo\nthree\n"})
    project = tmp_path / "project"
    write_files(project, {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "par.dot": PIPELINE, "cassette.yaml": CASSETTE})
    result = orchestra("run", "par.dot", "--json", cwd=project, env=env)
    assert result.returncode == 1, result.stderr
    session_id = json.loads(result.stdout)["session_id"]
    branches = [branch for branch in repo.branches() if branch != "main"]
    assert len(branches) == 3  # the session branch and the two parallel branches, kept for the user

    document = run_json("cleanup", cwd=project, env=env)
    [kept] = document["kept"]
    assert (kept["session_id"], kept["reason"], kept["status"]) == (session_id, "conflict", "fail")
    assert sorted(kept["branches"]) == sorted(branches) and len(kept["worktrees"]) == 3

    forced = run_json("cleanup", "--force", cwd=project, env=env)
    [removed] = forced["removed"]
    assert removed["reason"] == "forced" and "conflict" in removed["detail"]
    assert repo.branches() == ["main"]
    assert "prunable" not in repo.git("worktree", "list", "--porcelain")
    for ref in removed["abandoned_refs"]:  # every unmerged parallel head stays reachable
        assert repo.git("rev-parse", "--verify", "--quiet", ref).strip()
    assert len(removed["abandoned_refs"]) == 2
    assert not (project / ".orchestra" / "worktrees" / session_id).exists()
    assert len(records_of(project, session_id, SessionCleanedUp)) == 3


def test_an_interrupted_session_is_kept_until_forced(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "project",
        {
            ".gitignore": ".orchestra/\n",
            "orchestra.yaml": "workspace:\n  repos:\n    app: {path: .}\n",
            "d.dot": "digraph d { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }\n",
        },
    )
    document = run_json("run", "d.dot", "--backend", "simulate", cwd=repo.path)
    session_id, branch = document["session_id"], document["repos"]["app"]["branch"]
    with open_store(repo.path) as store:  # a resume that died before it recorded an end
        append_record(store, session_id, PipelineLifecycle(LifecycleEvent.RESUMED, "d"))

    [kept] = run_json("cleanup", cwd=repo.path)["kept"]
    assert (kept["reason"], kept["status"]) == ("interrupted", "interrupted")
    assert f"orchestra resume {session_id}" in kept["detail"] and branch in repo.branches()

    [removed] = run_json("cleanup", "--force", cwd=repo.path)["removed"]
    assert removed["reason"] == "forced" and removed["abandoned_refs"] == []  # nothing unmerged: no commits
    assert branch not in repo.branches()
