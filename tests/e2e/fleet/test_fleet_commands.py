"""The fleet's commands against real servers: bad input named within seconds (never a password, never a hang), a
worker without the pipeline's repos, and `orchestra cancel` of a queued and of a running session."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from orchestra_core.ports.session_store import SessionStatus
from tests.e2e.fleet.support import Fleet, fleet_yaml, wait_for
from tests.support.fleet_servers import RedisServer, free_port
from tests.support.orchestra_project import orchestra, write_files

pytestmark = pytest.mark.slow

SLEEPY = """digraph sleepy {
    start [shape=Mdiamond]; exit [shape=Msquare]
    nap [shape=parallelogram, tool_command="echo $$ > nap.pid; sleep 60"]
    start -> nap -> exit
}
"""
SHORT = """digraph short {
    start [shape=Mdiamond]; exit [shape=Msquare]
    hello [prompt="Say hello"]
    start -> hello -> exit
}
"""
CASSETTE = 'default: "Hello."\n'


def _project(root: Path, yaml: str) -> Path:
    write_files(root, {"orchestra.yaml": yaml, "short.dot": SHORT, "cassette.yaml": CASSETTE})
    return root


def test_an_unreachable_broker_is_named_without_its_password(tmp_path: Path, postgres_dsn: str) -> None:
    broker = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    project = _project(tmp_path / "p", fleet_yaml(postgres_dsn, broker, None))
    for command in (["worker"], ["submit", "short.dot"]):
        started = time.monotonic()
        done = orchestra(*command, cwd=project, timeout=60)
        assert done.returncode == 2, done.stderr
        assert time.monotonic() - started < 20
        assert "dispatch.broker redis://:***@127.0.0.1:" in done.stderr and "unreachable" in done.stderr
        assert "hunter2" not in done.stderr + done.stdout


def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path, redis_server: RedisServer) -> None:
    port = free_port()
    project = _project(tmp_path / "p", fleet_yaml(f"postgresql://orc:s3cret@127.0.0.1:{port}/fleet", redis_server.url, None))
    for command in (["worker"], ["submit", "short.dot"], ["status"]):
        started = time.monotonic()
        done = orchestra(*command, cwd=project, timeout=60)
        assert done.returncode == 2, done.stderr
        assert time.monotonic() - started < 20
        assert f"postgresql://orc@127.0.0.1:{port}/fleet" in done.stderr and "s3cret" not in done.stderr


def test_a_fleet_needs_a_broker_and_the_postgres_store(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", "providers: {default: scripted, scripted: {cassette: cassette.yaml}}\n")
    done = orchestra("submit", "short.dot", cwd=project)
    assert done.returncode == 2 and "dispatch.broker" in done.stderr
    write_files(project, {"orchestra.yaml": "dispatch: {broker: 'redis://127.0.0.1:1/0'}\n"})
    done = orchestra("worker", cwd=project)
    assert done.returncode == 2 and "storage.backend" in done.stderr and "postgres" in done.stderr


def test_a_worker_repo_without_a_remote_is_refused(tmp_path: Path, redis_server: RedisServer, postgres_dsn: str) -> None:
    yaml = fleet_yaml(postgres_dsn, redis_server.url, None) + "workspace:\n  repos:\n    project: {path: repo}\n"
    done = orchestra("worker", cwd=_project(tmp_path / "p", yaml), timeout=60)
    assert done.returncode == 2 and "workspace.repos.project.remote" in done.stderr


def test_a_worker_whose_notify_target_lacks_its_secret_stops_at_once(
    tmp_path: Path, redis_server: RedisServer, postgres_dsn: str
) -> None:
    yaml = fleet_yaml(postgres_dsn, redis_server.url, None) + (
        "notify:\n  - url: https://hooks.example.com/orchestra\n    secret_env: NO_SUCH_HOOK_SECRET\n"
    )
    done = orchestra("worker", cwd=_project(tmp_path / "p", yaml), timeout=60)
    assert done.returncode == 2, done.stderr
    assert "notify[0].secret_env" in done.stderr and "NO_SUCH_HOOK_SECRET" in done.stderr


def test_a_worker_without_the_pipelines_repos_fails_the_session_saying_why(
    tmp_path: Path, redis_server: RedisServer, postgres_dsn: str
) -> None:
    redis_server.flush()
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"short.dot": SHORT, "cassette.yaml": CASSETTE})
    try:
        fleet.start_worker("bare", yaml=fleet_yaml(postgres_dsn, redis_server.url, None))  # no workspace.repos
        done = orchestra("submit", "short.dot", "--json", cwd=fleet.submitter, env=fleet.env, timeout=60)
        session = json.loads(done.stdout)["session_id"]
        store = fleet.store()
        status = wait_for("the session to fail", lambda: store.get_session(session).status is SessionStatus.FAIL, 60)
        assert status
        shown = orchestra("status", session, cwd=fleet.submitter, env=fleet.env)
        assert "worker bare has no workspace repo 'project' (workspace.repos.project" in shown.stdout
        store.close()
    finally:
        fleet.stop_all()


def test_cancel_stops_a_running_session_and_a_queued_one(tmp_path: Path, redis_server: RedisServer, postgres_dsn: str) -> None:
    redis_server.flush()
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"sleepy.dot": SLEEPY, "cassette.yaml": CASSETTE}, with_repo=False)
    try:
        queued = json.loads(orchestra("submit", "sleepy.dot", "--json", cwd=fleet.submitter, env=fleet.env).stdout)
        done = orchestra("cancel", queued["session_id"], "--json", cwd=fleet.submitter, env=fleet.env)
        assert done.returncode == 0 and json.loads(done.stdout)["status"] == "cancelled"
        fleet.start_worker("w1")
        running = json.loads(orchestra("submit", "sleepy.dot", "--json", cwd=fleet.submitter, env=fleet.env).stdout)
        pid_file = tmp_path / "w1" / "nap.pid"
        wait_for("the nap to start", pid_file.exists, 60)
        started = time.monotonic()
        done = orchestra("cancel", running["session_id"], cwd=fleet.submitter, env=fleet.env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert f"session {running['session_id']} cancelled" in done.stdout
        assert time.monotonic() - started < 15
        pid = int(pid_file.read_text().strip())
        wait_for("the nap's process to be gone", lambda: not Path(f"/proc/{pid}").exists(), 10)
        store = fleet.store()
        assert store.get_session(queued["session_id"]).status is SessionStatus.CANCELLED
        assert store.get_session(running["session_id"]).status is SessionStatus.CANCELLED
        time.sleep(2)  # the revoked task of the first session never ran it
        assert store.get_session(queued["session_id"]).turn_count == 1
        store.close()
    finally:
        fleet.stop_all()
