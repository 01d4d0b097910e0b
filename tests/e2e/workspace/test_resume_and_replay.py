"""A run killed mid-pipeline after work beyond its last checkpoint: `orchestra resume SESSION` puts the
worktree back at the checkpoint's commit and finishes; `orchestra replay` branches anew from a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model.records import CheckpointRecord, LifecycleEvent, PipelineLifecycle
from orchestra_core.model.workspace_events import UncommittedWorkSaved
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    agent_turns,
    committed_files,
    orchestra,
    records_of,
    run_json,
    write_files,
)

# The crash node, on its first run only: commits a stray file on the session branch, dirties a.py, then
# SIGKILLs orchestra (its parent), so the last checkpoint is the one taken after `implement`.
CRASH = (
    "if [ ! -e {flag} ]; then touch {flag}; echo stray > stray.txt; git add stray.txt; "
    "git commit -q -m stray; echo dirty > a.py; kill -9 $PPID; fi"
)
PIPELINE = """digraph crash {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write a.py"]
    crash     [shape=parallelogram, tool_command="{crash}"]
    finish    [prompt="Write b.py"]
    start -> implement -> crash -> finish -> exit
}}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "Writing a.py."
      tool_calls: [{name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}]
    - content: "Done."
  finish:
    - content: "Writing b.py."
      tool_calls: [{name: "app:write-file", args: {path: b.py, content: "B = 2\n"}}]
    - content: "Done."
commit_messages: ["Add a.py\n\nDefines A.", "Add b.py\n\nDefines B."]
"""
BRANCH = "orchestra/crash/1"


@frozen
class Crashed:
    project: Path
    app: GitRepo
    env: dict[str, str]
    base: str
    commit_a: str
    stray: str
    resumed: dict[str, Any]


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Crashed:
    root = tmp_path_factory.mktemp("crash")
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    app = make_repo(root / "app")
    project = root / "project"
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + "workspace:\n  repos:\n    app: {path: ../app}\n",
            "crash.dot": PIPELINE.format(crash=CRASH.format(flag=root / "crashed")),
            "cassette.yaml": CASSETTE,
        },
    )
    killed = orchestra("run", "crash.dot", cwd=project, env=env)
    assert killed.returncode == -9, killed.stderr + killed.stdout
    assert killed.stdout.splitlines()[0] == "session 1"
    stray, commit_a = app.log(BRANCH)[:2]
    assert app.git("log", "-1", "--format=%s", stray).strip() == "stray"
    resumed = run_json("resume", "1", cwd=project, env=env)
    return Crashed(project, app, env, app.head("main"), commit_a, stray, resumed)


@pytest.mark.slow
def test_resume_restores_the_checkpoints_commit_and_finishes(crashed: Crashed) -> None:
    assert crashed.resumed["status"] == "success" and crashed.resumed["session_id"] == "1"
    commits = list(reversed(crashed.app.log(f"{crashed.base}..{BRANCH}")))
    assert commits[0] == crashed.commit_a and len(commits) == 2  # the stray commit is gone from the branch
    assert [committed_files(crashed.app, sha) for sha in commits] == [["a.py"], ["b.py"]]
    worktree = crashed.project / ".orchestra" / "worktrees" / "1" / "app"
    assert (worktree / "a.py").read_text(encoding="utf-8") == "A = 1\n" and not (
        worktree / "stray.txt"
    ).exists()
    assert git(worktree, "status", "--porcelain").strip() == ""
    assert crashed.resumed["repos"]["app"] == {
        "branch": BRANCH,
        "base_sha": crashed.base,
        "head_sha": commits[1],
    }
    finish = [record for _, record in agent_turns(crashed.project, "1") if record.node_id == "finish"]
    assert [record.git_sha for record in finish] == [commits[1], None]
    events = [record.event for _, record in records_of(crashed.project, "1", PipelineLifecycle)]
    assert events == [LifecycleEvent.STARTED, LifecycleEvent.RESUMED, LifecycleEvent.COMPLETED]
    recorded = [r.workspace_snapshot for _, r in records_of(crashed.project, "1", CheckpointRecord)]
    assert recorded[-1] is None  # exit moved no head
    assert [s for s in recorded if s is not None][-1].sha_by_repo() == {"app": commits[1]}
    # The stray commit made after the checkpoint is kept, not deleted, and so is the a.py it left dirty.
    assert crashed.app.head("refs/orchestra/abandoned/1/1") == crashed.stray
    assert crashed.app.head("refs/orchestra/abandoned/1/2~1") == crashed.stray
    assert crashed.app.show("refs/orchestra/abandoned/1/2", "a.py") == "dirty\n"


@pytest.mark.slow
def test_replay_starts_a_new_branch_at_the_checkpoints_commit(crashed: Crashed) -> None:
    [(checkpoint, _)] = [
        (turn, record)
        for turn, record in records_of(crashed.project, "1", CheckpointRecord)
        if record.current_node == "implement"
    ][:1]
    # A user's edit in the replayed session's worktree: a replay works elsewhere and leaves it as it is.
    worktree = crashed.project / ".orchestra" / "worktrees" / "1" / "app"
    (worktree / "mine.txt").write_text("mine\n", encoding="utf-8")
    try:
        replayed = run_json(
            "replay", "1", "--checkpoint", checkpoint.turn_id, cwd=crashed.project, env=crashed.env
        )
        assert (worktree / "mine.txt").read_text(encoding="utf-8") == "mine\n"
        assert records_of(crashed.project, replayed["session_id"], UncommittedWorkSaved) == []
    finally:
        (worktree / "mine.txt").unlink()
    session = replayed["session_id"]
    assert replayed["status"] == "success" and session != "1"
    branch = f"orchestra/crash/{session}"
    assert replayed["repos"]["app"]["branch"] == branch
    assert replayed["repos"]["app"]["base_sha"] == crashed.commit_a
    [new_b] = crashed.app.log(f"{crashed.commit_a}..{branch}")
    assert crashed.app.head(f"{branch}~1") == crashed.commit_a and committed_files(crashed.app, new_b) == [
        "b.py"
    ]
    assert (
        crashed.app.git("log", "-1", "--format=%(trailers:key=Orchestra-Session,valueonly)", new_b).strip()
        == session
    )
    assert crashed.app.head(BRANCH) != new_b and crashed.app.head(f"{BRANCH}~1") == crashed.commit_a
    shown = json.loads(orchestra("show", new_b, "--json", cwd=crashed.app.path, env=crashed.env).stdout)
    assert shown["session"]["session_id"] == session and shown["turn"]["node_id"] == "finish"
