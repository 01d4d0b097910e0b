"""Workspace snapshots and resume at a node boundary through `orchestra run` / `resume` with two real repos.

A run is killed (SIGKILL, from a tool node) after node 3; then someone commits on both session branches by
hand and dirties a worktree. `orchestra resume` puts each repo back at the snapshot of the latest checkpoint,
keeps the hand-made commits under `refs/orchestra/abandoned/<session>/<n>` and finishes the pipeline.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.workspace_events import UncommittedWorkSaved, WorkspaceSnapshotRecorded
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    committed_files,
    orchestra,
    records_of,
    run_json,
    write_files,
)

pytestmark = pytest.mark.slow

# `pause` SIGKILLs orchestra (its parent) on its first run only, so the latest checkpoint is the one
# taken after `write_both`.
PAUSE = "if [ ! -e {flag} ]; then touch {flag}; kill -9 $PPID; fi"
PIPELINE = """digraph snap {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    write_app  [prompt="Write a.py"]
    review     [prompt="Review, change nothing"]
    write_both [prompt="Write b.py and l.py"]
    pause      [shape=parallelogram, tool_command="{pause}"]
    finish     [prompt="Write m.py"]
    start -> write_app -> review -> write_both -> pause -> finish -> exit
}}
"""
CASSETTE = r"""
nodes:
  write_app:
    - content: "Writing a.py."
      tool_calls: [{name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}]
    - content: "Done."
  review:
    - content: "Looks fine; nothing to change."
  write_both:
    - content: "Writing b.py and l.py."
      tool_calls:
        - {name: "app:write-file", args: {path: b.py, content: "B = 2\n"}}
        - {name: "lib:write-file", args: {path: l.py, content: "L = 3\n"}}
    - content: "Done."
  finish:
    - content: "Writing m.py."
      tool_calls: [{name: "lib:write-file", args: {path: m.py, content: "M = 4\n"}}]
    - content: "Done."
commit_messages: ["Add a.py\n\nA.", "Add b.py\n\nB.", "Add l.py\n\nL.", "Add m.py\n\nM."]
"""
WORKSPACE = "workspace:\n  repos:\n    app: {path: ../app}\n    lib: {path: ../lib}\n"
BRANCH = "orchestra/snap/1"
# Records a session the way Orchestra did before snapshots were recorded only on change: every checkpoint
# carries every repo's head and no WorkspaceSnapshotRecorded turn is written.
OLD_FORMAT_RUN = """
import sys
from orchestra_core.session import checkpoints
checkpoints._snapshot_key = lambda snapshot: object()
remember = checkpoints.CheckpointDeltas.remember
checkpoints.CheckpointDeltas.remember = lambda self, *args: remember(self, *args) and False
from orchestra_cli.main import main
sys.argv = ["orchestra", *sys.argv[1:]]
main()
"""


@frozen
class Paused:
    project: Path
    app: GitRepo
    lib: GitRepo
    env: dict[str, str]
    bases: dict[str, str]
    checkpoints: list[tuple[Any, CheckpointRecord]]
    events: list[tuple[Any, WorkspaceSnapshotRecorded]]
    snapshot: dict[str, str]  # the latest checkpoint's (after write_both)
    by_hand: dict[str, str]  # the commits made on the session branches after the kill
    resumed: dict[str, Any]
    said: str  # what the resume printed on stderr (its progress, with --json)


def _pause_and_resume(root: Path, *, old_format: bool = False) -> Paused:
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    app = make_repo(root / "app", {"app.txt": "app\n"})
    lib = make_repo(root / "lib", {"lib.txt": "lib\n"})
    project = root / "project"
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE,
            "snap.dot": PIPELINE.format(pause=PAUSE.format(flag=root / "paused")),
            "cassette.yaml": CASSETTE,
        },
    )
    bases = {"app": app.head(), "lib": lib.head()}
    if old_format:
        killed = orchestra_python(OLD_FORMAT_RUN, "run", "snap.dot", cwd=project, env=env)
    else:
        killed = orchestra("run", "snap.dot", cwd=project, env=env)
    assert killed.returncode == -9, killed.stderr + killed.stdout
    assert killed.stdout.splitlines()[0] == "session 1"
    checkpoints = records_of(project, "1", CheckpointRecord)
    events = records_of(project, "1", WorkspaceSnapshotRecorded)
    snapshot = {"app": app.head(BRANCH), "lib": lib.head(BRANCH)}
    # Someone works on the session branches while the run is stopped: a commit in each worktree, a dirty
    # file in one, and a change in the user's own checkout (which Orchestra never touches).
    by_hand = {}
    for name, repo in (("app", app), ("lib", lib)):
        worktree = project / ".orchestra" / "worktrees" / "1" / name
        (worktree / "by_hand.txt").write_text(f"{name} by hand\n", encoding="utf-8")
        git(worktree, "add", "by_hand.txt")
        git(worktree, "commit", "--quiet", "-m", "by hand")
        by_hand[name] = repo.head(BRANCH)
    (project / ".orchestra" / "worktrees" / "1" / "app" / "a.py").write_text("dirty\n", encoding="utf-8")
    app.write("app.txt", "the user's own edit\n")
    finished = orchestra("resume", "1", "--json", cwd=project, env=env)
    assert finished.returncode == 0, finished.stderr
    resumed = json.loads(finished.stdout)
    return Paused(project, app, lib, env, bases, checkpoints, events, snapshot, by_hand, resumed, finished.stderr)


def orchestra_python(script: str, *args: str, cwd: Path, env: dict[str, str]) -> Any:
    """`orchestra <args>` through a Python script that patches it first."""
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
        env={**env, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Paused:
    return _pause_and_resume(tmp_path_factory.mktemp("snap"))


def _snapshot_of(record: CheckpointRecord) -> dict[str, str] | None:
    return record.workspace_snapshot.sha_by_repo() if record.workspace_snapshot is not None else None


def test_a_checkpoint_records_every_repos_head_when_one_moved_and_none_after_a_read_only_node(
    paused: Paused,
) -> None:
    app, lib = paused.app, paused.lib
    a_commit = app.head(f"{paused.snapshot['app']}~1")  # the commit before b.py's
    assert committed_files(app, a_commit) == ["a.py"]
    by_node = {record.current_node: _snapshot_of(record) for _, record in paused.checkpoints}
    assert by_node == {
        "": paused.bases,  # the checkpoint before the start node ran
        "start": None,
        "write_app": {"app": a_commit, "lib": paused.bases["lib"]},
        "review": None,  # read-only: no head moved
        "write_both": paused.snapshot,
    }
    assert paused.snapshot["app"] != paused.bases["app"] and paused.snapshot["lib"] != paused.bases["lib"]
    assert [committed_files(lib, paused.snapshot["lib"])] == [["l.py"]]
    # Each snapshot names the branch of each repo; a WorkspaceSnapshotRecorded turn follows its checkpoint.
    [(_, last)] = [(t, r) for t, r in paused.checkpoints if r.current_node == "write_both"]
    assert {s.repo_name: s.branch for s in last.workspace_snapshot.repo_snapshots} == {"app": BRANCH, "lib": BRANCH}
    checkpoint_turns = {record.current_node: turn.turn_id for turn, record in paused.checkpoints}
    assert [(e.node_id or "", e.checkpoint_turn_id, e.heads) for _, e in paused.events] == [
        (node, checkpoint_turns[node], by_node[node]) for node in ("", "write_app", "write_both")
    ]


def test_resume_puts_both_repos_back_at_the_snapshot_and_keeps_the_commits_made_after_it(paused: Paused) -> None:
    assert paused.resumed["status"] == "success" and paused.resumed["session_id"] == "1"
    for name, repo in (("app", paused.app), ("lib", paused.lib)):
        kept = repo.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/orchestra/abandoned/").split()
        assert kept[:2] == ["refs/orchestra/abandoned/1/1", paused.by_hand[name]]
        assert repo.head(f"{paused.by_hand[name]}~1") == paused.snapshot[name]
        history = repo.log(BRANCH)
        assert paused.by_hand[name] not in history and paused.snapshot[name] in history
    assert paused.app.head(BRANCH) == paused.snapshot["app"]  # `finish` only writes to lib
    [m_commit] = paused.lib.log(f"{paused.snapshot['lib']}..{BRANCH}")
    assert committed_files(paused.lib, m_commit) == ["m.py"]
    app_tree = paused.project / ".orchestra" / "worktrees" / "1" / "app"
    assert (app_tree / "a.py").read_text(encoding="utf-8") == "A = 1\n" and not (app_tree / "by_hand.txt").exists()
    assert git(app_tree, "status", "--porcelain").strip() == ""
    assert paused.app.path.joinpath("app.txt").read_text(encoding="utf-8") == "the user's own edit\n"
    assert paused.resumed["repos"]["lib"]["head_sha"] == m_commit
    assert paused.resumed["completed_nodes"][-3:] == ["pause", "finish", "exit"]


def test_resume_saves_the_dirty_file_before_it_rebuilds_the_worktree(paused: Paused) -> None:
    app, ref = paused.app, "refs/orchestra/abandoned/1/2"
    assert paused.lib.git("for-each-ref", "refs/orchestra/abandoned/1/2") == ""  # lib's worktree was clean
    saved = app.head(ref)
    assert app.head(f"{saved}~1") == paused.by_hand["app"] and committed_files(app, saved) == ["a.py"]
    assert app.show(ref, "a.py") == "dirty\n"
    app_tree = paused.project / ".orchestra" / "worktrees" / "1" / "app"
    assert f"warning: app: uncommitted changes in {app_tree} saved before resume as {ref}: a.py; get them back " \
        f"with `git checkout {ref} -- FILE` or `git cherry-pick {ref}`" in paused.said, paused.said
    [(_, event)] = records_of(paused.project, "1", UncommittedWorkSaved)
    assert (event.repo, event.sha, event.abandoned_ref, event.paths, event.reason) == ("app", saved, ref, ("a.py",), "resume")
    status = orchestra("status", "1", cwd=paused.project, env=paused.env).stdout
    assert f"saved: app uncommitted changes (a.py) before resume as {ref}" in status


def test_resume_records_snapshots_only_for_moved_heads(paused: Paused) -> None:
    after = [(t, r) for t, r in records_of(paused.project, "1", CheckpointRecord)][len(paused.checkpoints) :]
    snapshots = {record.current_node: _snapshot_of(record) for _, record in after}
    m_commit = paused.lib.head(BRANCH)
    # The resumed run's first checkpoint is a full record and restates the heads it was restored to.
    assert snapshots == {
        "pause": paused.snapshot,
        "finish": {"app": paused.snapshot["app"], "lib": m_commit},
        "exit": None,
    }
    events = records_of(paused.project, "1", WorkspaceSnapshotRecorded)[len(paused.events) :]
    assert [(e.node_id, e.heads) for _, e in events] == [("finish", snapshots["finish"])]


def test_status_shows_the_snapshots(paused: Paused) -> None:
    document = run_json("status", "1", cwd=paused.project, env=paused.env)
    m_commit = paused.lib.head(BRANCH)
    rows = [(row["node_id"], row["repos"]) for row in document["snapshots"]]
    assert rows == [
        (None, paused.bases),
        ("write_app", {"app": paused.app.head(f"{paused.snapshot['app']}~1"), "lib": paused.bases["lib"]}),
        ("write_both", paused.snapshot),
        ("finish", {"app": paused.snapshot["app"], "lib": m_commit}),
    ]
    checkpoints = {c["turn_id"]: c["node_id"] for c in document["checkpoints"]}
    assert [checkpoints[row["checkpoint_turn_id"]] for row in document["snapshots"]] == [r[0] for r in rows]
    recorded = [t for t in document["turns"] if t["type"] == "dev.orchestra.WorkspaceSnapshotRecorded"]
    assert [t["repos"] for t in recorded] == [r[1] for r in rows]
    text = orchestra("status", "1", cwd=paused.project, env=paused.env)
    assert text.returncode == 0, text.stderr
    table = text.stdout[text.stdout.index("workspace snapshots") :]
    for node, heads in rows:
        line = next(line for line in table.splitlines() if f" {node or '(before start)'} " in line)
        assert all(sha[:12] in line for sha in heads.values()), line


def test_an_old_session_with_a_snapshot_on_every_checkpoint_still_resumes(tmp_path: Path) -> None:
    old = _pause_and_resume(tmp_path, old_format=True)
    assert all(record.workspace_snapshot is not None for _, record in old.checkpoints)
    assert old.events == []
    assert old.resumed["status"] == "success"
    assert old.app.head(BRANCH) == old.snapshot["app"]
    assert old.lib.head(f"{BRANCH}~1") == old.snapshot["lib"]
    assert old.app.head("refs/orchestra/abandoned/1/1") == old.by_hand["app"]
    shown = json.loads(orchestra("status", "1", "--json", cwd=old.project, env=old.env).stdout)
    # Every checkpoint carried the heads; status lists each distinct one once.
    assert [row["node_id"] for row in shown["snapshots"]] == [None, "write_app", "write_both", "finish"]


IN_PLACE_PIPELINE = """digraph inplace {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write a.py"]
    pause     [shape=parallelogram, tool_command="{pause}"]
    finish    [prompt="Write m.py"]
    start -> implement -> pause -> finish -> exit
}}
"""
IN_PLACE_CASSETTE = r"""
nodes:
  implement:
    - content: "Writing a.py."
      tool_calls: [{name: "project:write-file", args: {path: a.py, content: "A = 1\n"}}]
    - content: "Done."
  finish:
    - content: "Writing m.py."
      tool_calls: [{name: "project:write-file", args: {path: m.py, content: "M = 4\n"}}]
    - content: "Done."
commit_messages: ["Add a.py\n\nA.", "Add m.py\n\nM."]
"""


def test_resume_resets_an_in_place_repo_to_the_snapshot(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    files = {
        "orchestra.yaml": SCRIPTED_PROVIDER + "workspace:\n  repos:\n    project: {path: ., isolation: in_place}\n",
        "inplace.dot": IN_PLACE_PIPELINE.format(pause=PAUSE.format(flag=tmp_path / "paused")),
        "cassette.yaml": IN_PLACE_CASSETTE,
    }
    repo = make_repo(tmp_path / "project", files)
    killed = orchestra("run", "inplace.dot", cwd=repo.path, env=env)
    assert killed.returncode == -9, killed.stderr + killed.stdout
    branch = "orchestra/inplace/1"
    snapshot = repo.head(branch)
    assert committed_files(repo, snapshot) == ["a.py"]
    repo.write("by_hand.txt", "by hand\n")
    by_hand = repo.commit_all("by hand")  # on the session branch, checked out in place
    repo.write("a.py", "dirty\n")
    resumed = orchestra("resume", "1", cwd=repo.path, env=env)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    said = resumed.stdout + resumed.stderr
    assert f"{branch} restored to {snapshot[:8]} (resume); its head {by_hand[:8]} is kept as " \
        "refs/orchestra/abandoned/1/1" in said, said
    # The dirty a.py is saved before the reset, on top of the head it was dirty on.
    assert f"uncommitted changes in {repo.path} saved before resume as refs/orchestra/abandoned/1/2: a.py" in said
    assert repo.show("refs/orchestra/abandoned/1/2", "a.py") == "dirty\n"
    assert repo.head("refs/orchestra/abandoned/1/2~1") == by_hand
    [m_commit] = repo.log(f"{snapshot}..{branch}")
    assert committed_files(repo, m_commit) == ["m.py"]
    assert repo.head("refs/orchestra/abandoned/1/1") == by_hand
    assert repo.git("symbolic-ref", "--short", "HEAD").strip() == branch
    assert not (repo.path / "by_hand.txt").exists() and (repo.path / "a.py").read_text(encoding="utf-8") == "A = 1\n"
