"""The store under stress through the CLI: two runs at once, corrupt, locked and read-only files, and
`resume --logs-root` continuing the session the run directory belongs to."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess

import pytest

from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionStatus
from tests.e2e.sessions.projects import ORCHESTRA, STEP_NODES, Project
from tests.support.sessions import records, story

# Each run waits in `meet` until both have started it, so the two really run (and append) at once.
PAIR = r"""digraph pair_{tag} {{
    start [shape=Mdiamond]; done [shape=Msquare]
    meet [shape=parallelogram, tool_command="touch met.{tag}; for i in $(seq 1 2400); do if [ -e met.a ] && [ -e met.b ]; then exit 0; fi; sleep 0.025; done; exit 1"]
    fan [shape=component]; left [prompt=l]; right [prompt=r]; join [shape=tripleoctagon]
    after [shape=parallelogram, tool_command="echo {tag} >> ran.txt"]
    start -> meet -> fan
    fan -> left
    fan -> right
    left -> join
    right -> join
    join -> after -> done
}}
"""


def _one_line_error(result: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("orchestra: error: ") and result.stderr.count("\n") == 1, result.stderr
    for part in parts:
        assert part in result.stderr


@pytest.mark.slow
def test_two_runs_on_one_store_at_once_do_not_interfere(project: Project) -> None:
    for tag in ("a", "b"):
        (project.root / f"pair_{tag}.dot").write_text(PAIR.format(tag=tag), encoding="utf-8")
    runs = [
        subprocess.Popen(
            [str(ORCHESTRA), "run", f"pair_{tag}.dot", "--quiet"], cwd=project.root, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"},
        )
        for tag in ("a", "b")
    ]
    for process in runs:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, out + err
    assert sorted(project.ran()) == ["a", "b"]
    with project.open_store() as store:
        mains = [info for info in store.list_sessions() if info.metadata.spawn_reason != "parallel"]
        assert sorted(info.metadata.pipeline for info in mains) == ["pair_a", "pair_b"]
        for info in mains:
            assert info.status is SessionStatus.SUCCESS
            lines = story(store, info.session_id)
            assert lines[0] == "lifecycle started" and lines[-1] == "lifecycle completed"
            assert [x for x in lines if x.startswith("checkpoint")] == [
                f"checkpoint {node}" for node in ("-", "start", "meet", "fan", "join", "after", "done")
            ]
            started = records(store, info.session_id)[0]
            assert (
                isinstance(started, r.PipelineLifecycle) and started.pipeline_name == info.metadata.pipeline
            )
            fan_in = next(
                x
                for x in records(store, info.session_id)
                if isinstance(x, r.ParallelExecution) and x.event is r.ParallelEvent.FAN_IN
            )
            for fork in fan_in.branch_session_ids:
                assert store.get_session(fork).metadata.parent_session_id == info.session_id


def test_a_corrupt_store_is_bad_input_and_left_as_it_was(project: Project) -> None:
    db = project.root / ".orchestra" / "orchestra.db"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database, but it may be someone's data\n" * 50)
    before = db.read_bytes()
    for args in (
        ("run", "steps.dot"),
        ("resume", "1"),
        ("replay", "1", "--checkpoint", "2"),
        ("run", "steps.dot", "--json"),
    ):
        result = project.cli(*args)
        _one_line_error(result, str(db), "not an SQLite database")
        if "--json" in args:  # the error as a document on stdout
            assert json.loads(result.stdout)["error"]["exit_code"] == 2
        else:
            assert result.stdout == ""
    assert db.read_bytes() == before and project.ran() == []


@pytest.mark.slow
def test_a_store_locked_by_another_process_is_bad_input(project: Project) -> None:
    project.run_json("run", "steps.dot")
    db = project.root / ".orchestra" / "orchestra.db"
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        result = project.cli("run", "steps.dot")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _one_line_error(result, str(db), "locked")
    assert project.ran() == ["one", "gate", "three"]
    assert project.run_json("run", "steps.dot")["status"] == "success"  # usable again once released


def _without_write_permission_override() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only file cannot be simulated")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]


def test_a_read_only_store_is_bad_input(project: Project) -> None:
    project.run_json("run", "steps.dot")
    db = project.root / ".orchestra" / "orchestra.db"
    db.chmod(0o444)
    try:
        for args in (("run", "steps.dot"), ("replay", "1", "--checkpoint", "5")):
            result = subprocess.run(
                [*_without_write_permission_override(), str(ORCHESTRA), *args],
                capture_output=True,
                text=True,
                cwd=project.root,
                timeout=60,
            )
            assert "Traceback" not in result.stderr
            _one_line_error(result, str(db), "read-only")
    finally:
        db.chmod(0o644)
    with project.open_store() as store:
        assert [info.session_id for info in store.list_sessions()] == ["1"]


@pytest.mark.slow
def test_resume_from_a_run_directory_continues_its_recorded_session(project: Project) -> None:
    logs = project.root / "runs" / "custom"
    project.hold()
    process = project.spawn("run", "steps.dot", "--logs-root", logs, "--quiet")
    project.wait_in_gate(process)
    project.kill(process, signal.SIGKILL)
    project.release()
    document = project.run_json("resume", "--logs-root", logs)
    assert (document["session_id"], document["status"], document["logs_root"]) == ("1", "success", str(logs))
    assert document["completed_nodes"] == STEP_NODES
    assert project.ran() == ["one", "gate", "gate", "three"]
    with project.open_store() as store:
        assert [info.session_id for info in store.list_sessions()] == ["1"]
        assert store.get_session("1").status is SessionStatus.SUCCESS
        lifecycle = [line for line in story(store, "1") if line.startswith("lifecycle")]
        assert lifecycle == ["lifecycle started", "lifecycle resumed", "lifecycle completed"]
