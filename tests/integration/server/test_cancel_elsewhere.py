"""Cancelling a run that `orchestra run` runs in another process of the project: from the web view's cancel route,
the control MCP server's `cancel_run` and `orchestra cancel`, through a request file in the run's attach channel.
The run exits 1 saying where the cancel came from, the store records it `cancelled`, nothing it started is left
running, and `orchestra resume` finishes it; a session not running is refused; a hostile request file is
ignored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from orchestra_core.model.layout import ProjectLayout
from tests.integration.mcp.mcp_client import call, orchestra_mcp_serve, with_client
from tests.support.orchestra_project import ORCHESTRA, orchestra, run_json, write_files
from tests.support.server import GATED, LOCAL, make_project, wait_until

# the first run's command records its pid and sleeps (until it is killed); a resumed run's finishes at once
HELD = """digraph held {
    start [shape=Mdiamond]; done [shape=Msquare]
    hold [shape=parallelogram, tool_command="if [ ! -e %(dir)s/resumed ]; then echo $$ > %(dir)s/pid; exec sleep 120; fi"]
    after [shape=parallelogram, tool_command="echo after"]
    start -> hold -> after -> done
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "project")
    marks = tmp_path / "marks"
    marks.mkdir()
    write_files(root, {"gated.dot": GATED, "held.dot": HELD % {"dir": marks}})
    return root


def start_run(project: Path, pipeline: str, stderr: Path) -> subprocess.Popen[bytes]:
    """`orchestra run PIPELINE` in its own terminal-less process; its console's stdin stays open and silent."""
    with stderr.open("wb") as log:
        return subprocess.Popen(
            [str(ORCHESTRA), "run", pipeline, "--quiet"],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "NO_COLOR": "1"},
        )


def channel(project: Path, session: str = "1") -> Path:
    return ProjectLayout(project).state_dir / "attach" / session


def waiting_at_gate(project: Path) -> None:
    wait_until(lambda: (channel(project) / "waiting.json").is_file(), "the run to wait at its gate")


def stopped(runner: subprocess.Popen[bytes], stderr: Path) -> tuple[int, str]:
    try:
        code = runner.wait(30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    return code, stderr.read_text(encoding="utf-8")


def status(project: Path, session: str = "1") -> str:
    return str(run_json("status", session, cwd=project)["status"])


def resume_answering(project: Path, answer: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ORCHESTRA), "resume", "1", "--quiet"], cwd=project, input=f"{answer}\n", capture_output=True,
        text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip


@pytest.fixture
def client(project: Path) -> Iterator[TestClient]:
    service = PipelineService(cwd=project)
    with TestClient(create_app(service), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client
    service.close()


@pytest.mark.slow
def test_the_web_views_cancel_stops_a_run_waiting_at_its_gate_and_resume_finishes_it(
    project: Path, client: TestClient, tmp_path: Path
) -> None:
    runner = start_run(project, "gated.dot", tmp_path / "stderr.txt")
    try:
        waiting_at_gate(project)
        assert client.get("/pipelines/1").json()["status"] == "running"  # the page shows its Cancel button
        response = client.post("/pipelines/1/cancel")
    finally:
        code, said = stopped(runner, tmp_path / "stderr.txt")
    assert response.status_code == 202 and response.json() == {"id": "1", "status": "cancelling"}
    assert code == 1, said
    assert "session 1 cancelled from the web view; continue with: orchestra resume 1" in said
    assert "Traceback" not in said
    assert status(project) == "cancelled" and client.get("/pipelines/1").json()["status"] == "cancelled"
    again = client.post("/pipelines/1/cancel")
    assert again.status_code == 409 and again.json()["error"] == "session 1 is not running (it ended: cancelled)"
    assert client.post("/pipelines/nope/cancel").status_code == 404
    assert not channel(project).exists()  # the run's channel (and the request) went with it
    resumed = resume_answering(project, "S")
    assert resumed.returncode == 0, resumed.stderr
    assert status(project) == "success"


@pytest.mark.slow
def test_cancel_run_of_the_control_server_kills_the_command_the_run_runs(project: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    runner = start_run(project, "held.dot", tmp_path / "stderr.txt")

    async def body(client: Client) -> tuple[Any, ...]:
        cancelled = await call(client, "cancel_run", session_id="1")
        code, said = stopped(runner, tmp_path / "stderr.txt")
        again = await call(client, "cancel_run", session_id="1")
        unknown = await call(client, "cancel_run", session_id="42")
        return cancelled, code, said, again, unknown

    try:
        pid = int(wait_until(lambda: (marks / "pid").is_file() and (marks / "pid").read_text().strip(), "the command"))
        started = time.monotonic()
        cancelled, code, said, again, unknown = with_client(
            orchestra_mcp_serve("--control", cwd=project), body, stderr=tmp_path / "server.txt", timeout=120
        )
    finally:
        if runner.poll() is None:
            runner.kill()
    assert time.monotonic() - started < 60  # not the command's 120 s
    assert not cancelled[1] and json.loads(cancelled[0])["status"] == "cancelling"
    assert code == 1 and "session 1 cancelled from the control MCP server" in said, said
    wait_until(lambda: not _alive(pid), "the run's command to be gone")
    assert status(project) == "cancelled"
    assert again[1] and again[0].endswith("session 1 is not running (it ended: cancelled)")
    assert unknown[1] and "42" in unknown[0]
    (marks / "resumed").touch()
    resumed = orchestra("resume", "1", cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert status(project) == "success"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_orchestra_cancel_stops_a_run_of_another_terminal(project: Path, tmp_path: Path) -> None:
    runner = start_run(project, "gated.dot", tmp_path / "stderr.txt")
    try:
        waiting_at_gate(project)
        cancel = orchestra("cancel", "1", cwd=project)
    finally:
        code, said = stopped(runner, tmp_path / "stderr.txt")
    assert cancel.returncode == 0 and cancel.stdout.strip() == "session 1 cancelled", cancel.stderr
    assert code == 1 and "session 1 cancelled from orchestra cancel" in said, said
    assert status(project) == "cancelled"
    assert orchestra("cancel", "1", cwd=project).stdout.strip() == "session 1 cancelled"  # it had ended so
    resumed = resume_answering(project, "R")
    assert resumed.returncode == 0, resumed.stderr
    finished = orchestra("cancel", "1", cwd=project)
    assert finished.returncode == 0 and finished.stdout.strip() == "session 1 already ended (success)"


@pytest.mark.slow
def test_a_hostile_or_stale_cancel_file_is_ignored(project: Path, tmp_path: Path) -> None:
    runner = start_run(project, "gated.dot", tmp_path / "stderr.txt")
    request = channel(project) / "cancel.json"
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"origin": "a link", "requested_at": time.time() + 60}), encoding="utf-8")
    hostile: list[Any] = [
        lambda: request.write_text("{not json", encoding="utf-8"),
        lambda: request.write_text(json.dumps({"origin": "x" * 500, "requested_at": time.time()}), encoding="utf-8"),
        lambda: request.write_text(json.dumps({"origin": "me\n\x1b[31m", "requested_at": time.time()}), "utf-8"),
        lambda: request.write_text(json.dumps({"origin": "old", "requested_at": 1.0}), encoding="utf-8"),
        lambda: request.write_text(json.dumps({"origin": "bool", "requested_at": True}), encoding="utf-8"),
        lambda: request.write_text(json.dumps(["origin", "requested_at"]), encoding="utf-8"),
        lambda: request.write_bytes(b"{" + b" " * (70 * 1024) + b"}"),
        lambda: request.symlink_to(secret),
    ]
    try:
        waiting_at_gate(project)
        for plant in hostile:
            plant()
            wait_until(lambda: not os.path.lexists(request), "the run to drop the bad request", timeout=10)
            assert runner.poll() is None
        assert secret.is_file()  # a link is removed, never followed
        assert status(project) == "running"
        cancel = orchestra("cancel", "1", cwd=project)  # a real request still works
    finally:
        code, said = stopped(runner, tmp_path / "stderr.txt")
    assert cancel.returncode == 0 and code == 1 and "cancelled from orchestra cancel" in said


@pytest.mark.slow
def test_a_run_killed_without_recording_its_end_is_refused_with_how_to_continue_it(
    project: Path, client: TestClient, tmp_path: Path
) -> None:
    runner = start_run(project, "gated.dot", tmp_path / "stderr.txt")
    try:
        waiting_at_gate(project)
    finally:
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(10)
    assert status(project) == "interrupted"  # its lock is free: the status says so
    response = client.post("/pipelines/1/cancel")
    assert response.status_code == 409
    assert response.json()["error"] == (
        "session 1 is not running (its run stopped without recording it; orchestra resume 1 continues it)"
    )
    assert not (channel(project) / "cancel.json").exists()
