"""Kill `orchestra run` and continue it with `orchestra resume SESSION` from the store alone: finished nodes do
not run again, the end state equals an uninterrupted run's, and the store survives kills at any moment."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionStatus
from orchestra_core.session.api import fork_session
from tests.e2e.sessions.projects import STEP_NODES, Project
from tests.support.sessions import records, story

pytestmark = pytest.mark.slow


def _nodes_run_after_the_resume(project: Project, session: str) -> list[str]:
    with project.open_store() as store:
        recorded = records(store, session)
    resumed = next(
        i
        for i, x in enumerate(recorded)
        if isinstance(x, r.PipelineLifecycle) and x.event is r.LifecycleEvent.RESUMED
    )
    return [
        x.node_id
        for x in recorded[resumed:]
        if isinstance(x, r.NodeExecution) and x.event is r.NodeEvent.STARTED
    ]


def test_sigkill_then_resume_session_ends_like_an_uninterrupted_run(project: Project, tmp_path: Path) -> None:
    project.hold()
    process = project.spawn("run", "steps.dot", "--quiet")
    project.wait_in_gate(process)
    busy = project.cli("resume", "1")
    assert (
        busy.returncode == 2
        and f"session 1 is being run by another orchestra process (pid {process.pid})" in (busy.stderr)
    )
    assert project.kill(process) == -signal.SIGKILL
    with project.open_store() as store:
        (info,) = store.list_sessions()
        assert info.status is SessionStatus.RUNNING
        assert story(store, info.session_id)[-2:] == ["checkpoint plan", "node gate started"]
    session = info.session_id

    project.release()
    resumed = project.run_json("resume", session)
    assert resumed["session_id"] == session and resumed["status"] == "success"
    assert resumed["completed_nodes"] == STEP_NODES
    assert project.ran() == ["one", "gate", "gate", "three"]  # only the interrupted node ran again
    assert _nodes_run_after_the_resume(project, session) == ["gate", "three", "done"]

    clean = Project.create(tmp_path / "clean")
    assert clean.run_json("run", "steps.dot")["status"] == "success"
    with project.open_store() as store, clean.open_store() as clean_store:
        assert store.get_session(session).status is SessionStatus.SUCCESS
        lifecycle = [line for line in story(store, session) if line.startswith("lifecycle")]
        assert lifecycle == ["lifecycle started", "lifecycle resumed", "lifecycle completed"]
        assert project.final_state(store, session) == clean.final_state(clean_store, "1")


def test_ctrl_c_marks_the_session_interrupted_and_resume_finishes_it(project: Project) -> None:
    project.hold()
    process = project.spawn("run", "steps.dot")
    project.wait_in_gate(process)
    process.send_signal(signal.SIGINT)
    assert process.wait(30) == 130
    project.kill_gate_tool()
    assert process.stderr is not None and "continue with: orchestra resume 1" in process.stderr.read()
    with project.open_store() as store:
        assert store.get_session("1").status is SessionStatus.INTERRUPTED
    project.release()
    assert project.run_json("resume", "1")["status"] == "success"
    assert project.ran() == ["one", "gate", "gate", "three"]


MANY = "\n".join(
    [
        "digraph many {",
        "    start [shape=Mdiamond]; done [shape=Msquare]",
        *(
            f'    n{i} [shape=parallelogram, tool_command="sleep 0.08; echo n{i} >> ran.txt"]'
            for i in range(12)
        ),
        "    start -> " + " -> ".join(f"n{i}" for i in range(12)) + " -> done",
        "}",
    ]
)


def test_killed_at_random_moments_the_store_stays_readable_and_the_session_resumable(
    project: Project,
) -> None:
    (project.root / "many.dot").write_text(MANY, encoding="utf-8")
    chance = random.Random(20260501)
    expected = ["start", *(f"n{i}" for i in range(12)), "done"]
    seen: set[str] = set()
    outcomes = []
    for round_number in range(4):
        done_before = len(project.ran())
        process = project.spawn("run", "many.dot", "--quiet")
        if round_number % 2:  # any moment, start-up included
            time.sleep(chance.uniform(0.0, 1.5))
        else:  # some moment after a random node, whatever the machine's speed
            _wait_for_nodes(project, done_before + chance.randint(1, 9), process)
            time.sleep(chance.uniform(0.0, 0.08))
        project.kill(process)
        outcomes.append(_check_and_resume(project, seen, expected))
    assert outcomes[::2] == ["resumed", "resumed"], outcomes


def test_a_run_killed_between_its_last_checkpoint_and_its_end_is_ended_by_resume(project: Project) -> None:
    finished = project.run_json("run", "steps.dot", "--quiet")
    with project.open_store() as store:  # the killed run's store: the exit's checkpoint, no end recorded after it
        last = store.latest_checkpoint(finished["session_id"])
        assert last is not None
        killed = fork_session(store, finished["session_id"], last.turn_id, spawn_reason="test").session_id
        assert store.get_session(killed).status is SessionStatus.RUNNING
    resumed = project.cli("resume", killed, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    with project.open_store() as store:
        assert store.get_session(killed).status is SessionStatus.SUCCESS
        assert _nodes_run_after_the_resume(project, killed) == []  # nothing ran again: only the end was recorded
    again = project.cli("resume", killed)
    assert again.returncode == 0 and "already ended (success); nothing to resume" in again.stdout


def _wait_for_nodes(project: Project, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(project.ran()) < count:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)


def _check_and_resume(project: Project, seen: set[str], expected: list[str]) -> str:
    """Check the store after a kill and resume the killed run's session; say what was found."""
    db = project.root / ".orchestra" / "orchestra.db"
    if not db.exists():
        return "no store yet"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with project.open_store() as store:
        sessions = {info.session_id: info for info in store.list_sessions(limit=100)}
        for session in sessions:
            records(store, session)  # every turn of every session decodes
        new = set(sessions) - seen
        seen.update(new)
        if not new:
            return "no session yet"
        (session,) = new
        has_checkpoint = store.latest_checkpoint(session) is not None
        finished = sessions[session].status is SessionStatus.SUCCESS
    resumed = project.cli("resume", session, "--json", "--quiet")
    if not has_checkpoint:
        assert resumed.returncode == 2 and "has no checkpoint yet" in resumed.stderr
        return "no checkpoint yet"
    assert resumed.returncode == 0, resumed.stderr
    with project.open_store() as store:
        assert store.get_session(session).status is SessionStatus.SUCCESS
        assert project.final_state(store, session)["completed_nodes"] == expected
    return "finished" if finished else "resumed"
