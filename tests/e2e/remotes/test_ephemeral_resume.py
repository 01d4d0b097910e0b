"""The ephemeral lifecycle (issue 17): clone -> run -> push -> the worker dies and its directory is gone ->
a fresh directory holding only orchestra.yaml re-clones, fetches the session branch and resumes to success.

The store is a SQLite file outside both directories (`storage.path`), as a shared volume or CXDB would be;
the remote is a local bare repository (file URL); `push: on_checkpoint` pushes after every checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.workspace_events import RemotePushed, RepoCloned
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.support.environment import hermetic_env
from tests.support.git_remote_repos import bare_remote, remote_branches
from tests.support.git_repos import git
from tests.support.orchestra_project import ORCHESTRA, orchestra, write_files
from tests.support.processes import kill_quietly, live_processes_with, wait_until

pytestmark = pytest.mark.slow

BRANCH = "orchestra/eph/1"
GATE = "touch {root}/started; while [ ! -e {root}/go ]; do sleep 0.02; done"
PIPELINE = """digraph eph {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    first [prompt="Write one.py"]
    gate [shape=parallelogram, tool_command="{gate}"]
    second [prompt="Write two.py"]
    start -> first -> gate -> second -> exit
}}
"""
CASSETTE = r"""
nodes:
  first:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: one.py, content: "ONE = 1\n"}}]
    - content: "Done."
  second:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: two.py, content: "TWO = 2\n"}}]
    - content: "Done."
commit_messages: ["Add one\n\nOne.", "Add two\n\nTwo."]
"""


def config(shared: Path, remote: str) -> str:
    return (
        f"providers:\n  default: scripted\n  scripted:\n    cassette: {shared / 'cassette.yaml'}\nbackend: langgraph\n"
        f"storage:\n  backend: sqlite\n  path: {shared / 'orchestra.db'}\n"
        f"workspace:\n  repos:\n    app: {{path: app, remote: {json.dumps(remote)}, push: on_checkpoint}}\n"
    )


def stored_events(store_path: Path, kind: type) -> list:
    store = SqliteSessionStore(store_path)
    try:
        records = [decode_record(turn) for turn in reversed(list(history(store, "1")))]  # oldest first
        return [record for record in records if isinstance(record, kind)]
    finally:
        store.close()


def _push_recorded(store_path: Path, sha: str) -> bool:
    return sha in [event.sha for event in stored_events(store_path, RemotePushed)]


def kill_at_the_gate(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """Run the pipeline in `worker/` until its gate blocks and `first`'s checkpoint reached the remote, SIGKILL
    the worker and delete its directory; returns (shared dir, bare remote, environment)."""
    shared = tmp_path / "shared"
    bare = bare_remote(tmp_path / "app.git")
    (tmp_path / "home").mkdir()
    env = {**hermetic_env(tmp_path / "home"), "NO_COLOR": "1"}
    write_files(shared, {"cassette.yaml": CASSETTE})
    worker = tmp_path / "worker"
    write_files(worker, {"orchestra.yaml": config(shared, bare.as_uri()),
                         "eph.dot": PIPELINE.format(gate=GATE.format(root=tmp_path))})
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "eph.dot", "--quiet"], cwd=worker, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(lambda: (tmp_path / "started").exists() or runner.poll() is not None, 120)
        assert runner.poll() is None, runner.stderr.read().decode() if runner.stderr else ""
        assert wait_until(lambda: _remote_has(bare, "one.py"), 60)
        # the push reaches the remote a moment before its RemotePushed event reaches the store (an earlier push's
        # event, of the start's checkpoint, is there already: wait for this one's)
        assert wait_until(lambda: _push_recorded(shared / "orchestra.db", remote_branches(bare)[BRANCH]), 60)
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        kill_quietly(live_processes_with("PWD", str(worker)))
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    assert runner.returncode == -signal.SIGKILL
    shutil.rmtree(worker)
    return shared, bare, env


def test_a_killed_worker_resumes_in_an_empty_directory_from_the_remote(tmp_path: Path) -> None:
    shared, bare, env = kill_at_the_gate(tmp_path)
    pushed_before = remote_branches(bare)[BRANCH]

    fresh = tmp_path / "fresh"
    write_files(fresh, {"orchestra.yaml": config(shared, bare.as_uri())})
    (tmp_path / "go").touch()
    resumed = orchestra("resume", "1", "--json", cwd=fresh, env=env, timeout=180)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    document = json.loads(resumed.stdout)
    assert document["status"] == "success"
    head = document["repos"]["app"]["head_sha"]
    assert remote_branches(bare)[BRANCH] == head != pushed_before
    files = git(fresh / "app", "ls-tree", "-r", "--name-only", head).split()
    assert {"one.py", "two.py"} <= set(files)
    git(fresh / "app", "merge-base", "--is-ancestor", pushed_before, head)

    store_path = shared / "orchestra.db"
    assert len(stored_events(store_path, RepoCloned)) == 2  # the worker's clone, then the fresh one's
    pushes = [event.sha for event in stored_events(store_path, RemotePushed)]
    assert pushed_before in pushes and pushes[-1] == head


def test_a_checkpoint_the_remote_never_got_is_a_clear_error(tmp_path: Path) -> None:
    shared, bare, env = kill_at_the_gate(tmp_path)
    git(bare, "update-ref", "-d", f"refs/heads/{BRANCH}")  # the remote lost the session branch
    git(bare, "reflog", "expire", "--expire=now", "--all")
    git(bare, "gc", "--quiet", "--prune=now")
    before = len(history_turns(shared / "orchestra.db"))

    fresh = tmp_path / "fresh"
    write_files(fresh, {"orchestra.yaml": config(shared, bare.as_uri())})
    resumed = orchestra("resume", "1", cwd=fresh, env=env)
    assert resumed.returncode == 2, resumed.stderr + resumed.stdout
    assert "workspace.repos.app.remote" in resumed.stderr and "not on the remote" in resumed.stderr
    assert len(history_turns(shared / "orchestra.db")) == before  # nothing recorded, nothing lost


def history_turns(store_path: Path) -> list:
    store = SqliteSessionStore(store_path)
    try:
        return list(history(store, "1"))
    finally:
        store.close()


def _remote_has(bare: Path, name: str) -> bool:
    branches = remote_branches(bare)
    if BRANCH not in branches:
        return False
    return name in git(bare, "ls-tree", "-r", "--name-only", branches[BRANCH]).split()
