"""`storage: {backend: cxdb}` against the protocol-faithful fake CXDB server: run, resume and replay work the
same as on SQLite, and an unreachable server fails fast, naming its address."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from orchestra_core.ports.session_store import SessionStatus
from tests.e2e.sessions.projects import STEP_NODES, Project
from tests.support.cxdb_server import FakeCxdbServer
from tests.support.sessions import story, turns


@pytest.mark.slow
def test_run_resume_and_replay_through_cxdb(cxdb_project: Project, cxdb: FakeCxdbServer) -> None:
    project = cxdb_project
    project.hold()
    process = project.spawn("run", "steps.dot", "--quiet")
    project.wait_in_gate(process)
    project.kill(process)
    assert not (project.root / ".orchestra" / "orchestra.db").exists()  # nothing went to SQLite
    with project.open_store() as store:
        (info,) = store.list_sessions()
        session = info.session_id
        assert info.status is SessionStatus.RUNNING
        assert story(store, session)[-1] == "node gate started"

    project.release()
    resumed = project.run_json("resume", session)
    assert (resumed["session_id"], resumed["status"]) == (session, "success")
    assert project.ran() == ["one", "gate", "gate", "three"]

    with project.open_store() as store:
        assert store.get_session(session).status is SessionStatus.SUCCESS
        before = [(t.turn_id, t.type_id, dict(t.data)) for t in turns(store, session)]
        at = turns(store, session)[story(store, session).index("checkpoint one")].turn_id
    replayed = project.run_json("replay", session, "--checkpoint", at)
    assert replayed["status"] == "success" and replayed["completed_nodes"] == STEP_NODES
    fork = replayed["session_id"]
    with project.open_store() as store:
        assert [(t.turn_id, t.type_id, dict(t.data)) for t in turns(store, session)] == before
        info = store.get_session(fork)
        assert (info.metadata.parent_session_id, info.status) == (session, SessionStatus.SUCCESS)
        shared = [t.turn_id for t in turns(store, session)]
        shared = shared[: shared.index(at) + 1]
        assert [t.turn_id for t in turns(store, fork)][: len(shared)] == shared
    assert project.ran() == ["one", "gate", "gate", "three", "gate", "three"]  # the fork ran on from `one`


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_cxdb_fails_fast_naming_its_address(tmp_path: Path) -> None:
    addr, url = f"127.0.0.1:{_closed_port()}", f"http://127.0.0.1:{_closed_port()}"
    project = Project.create(tmp_path / "project", storage={"backend": "cxdb", "addr": addr, "url": url})
    for args in (("run", "steps.dot"), ("resume", "1"), ("replay", "1", "--checkpoint", "3")):
        started = time.monotonic()
        result = project.cli(*args)
        assert time.monotonic() - started < 15
        assert result.returncode == 2, result.stdout + result.stderr
        assert result.stderr.startswith("orchestra: error: ") and result.stderr.count("\n") == 1, (
            result.stderr
        )
        assert addr in result.stderr or url in result.stderr, result.stderr
    assert project.ran() == []
