"""`orchestra serve` as a real process on loopback, driven with requests: concurrent runs, an SSE stream that
disconnects mid-run and resumes with Last-Event-ID, a human gate answered over HTTP, cancel of a command,
sessions run from the CLI, the token, and the refusal to listen off loopback without one."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.orchestra_project import ORCHESTRA, orchestra, run_json
from tests.support.server import GATED, TOOL_RUN, LiveServer, make_project, sse_messages, wait_until

WAITS_FOR = """digraph {name} {{
    start [shape=Mdiamond]; done [shape=Msquare]
    meet [shape=parallelogram, tool_command="touch {mine}; for i in $(seq 2400); do test -f {theirs} && exit 0; sleep 0.05; done; exit 1"]
    start -> meet -> done
}}
"""
STUCK_MARK = "6173"
STUCK = f"""digraph stuck {{
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram, tool_command="sleep {STUCK_MARK}"]
    after [shape=parallelogram, tool_command="echo after"]
    start -> wait -> after -> done
}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def server(project: Path) -> Iterator[LiveServer]:
    server = LiveServer(project)
    yield server
    server.stop()


def test_two_pipelines_run_at_once_each_in_its_own_session(server: LiveServer, project: Path) -> None:
    # Each run's tool waits for the file the other one's writes: they finish only when both run together.
    first = server.submit(WAITS_FOR.format(name="ping", mine="ping.ready", theirs="pong.ready"))
    second = server.submit(WAITS_FOR.format(name="pong", mine="pong.ready", theirs="ping.ready"))
    assert first != second
    assert server.ended(first)["status"] == "success"
    assert server.ended(second)["status"] == "success"
    listed = {s["session_id"]: s["pipeline"] for s in server.get("/sessions").json()["sessions"]}
    assert listed == {first: "ping", second: "pong"}


def test_an_event_stream_resumes_after_a_disconnect_without_loss_or_duplicates(server: LiveServer) -> None:
    session_id = server.submit(GATED)
    seen: list[dict[str, Any]] = []
    with server.get(f"/pipelines/{session_id}/events", stream=True) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for message in sse_messages(response.iter_lines(decode_unicode=True)):
            seen.append(message)
            if message["event"] == "InterviewStarted":
                break  # the run waits at the gate: hang up in the middle of it
    assert server.get(f"/pipelines/{session_id}").json()["status"] == "running"

    [question] = server.get(f"/pipelines/{session_id}/questions").json()
    assert question["node_id"] == "review"
    answered = server.post(f"/pipelines/{session_id}/questions/{question['id']}/answer", {"answer": "[S] Ship"})
    assert answered.status_code == 200, answered.text

    last = seen[-1]["id"]
    with server.get(f"/pipelines/{session_id}/events", stream=True, headers={"Last-Event-ID": last}) as response:
        rest = list(sse_messages(response.iter_lines(decode_unicode=True)))
    assert rest[-1]["event"] == "end" and rest[-1]["data"]["status"] == "success"
    events = seen + rest[:-1]
    assert [int(message["id"]) for message in events] == list(range(1, len(events) + 1))
    kinds = [message["event"] for message in events]
    assert kinds[0] == "PipelineStarted" and kinds[-1] == "PipelineCompleted"
    assert kinds.count("InterviewStarted") == 1 and kinds.count("InterviewCompleted") == 1
    completed = [m["data"]["node_id"] for m in events if m["event"] == "StageCompleted"]
    assert completed == ["start", "prepare", "review", "ship", "done"]

    with server.get(f"/pipelines/{session_id}/events", stream=True) as response:
        again = [m for m in sse_messages(response.iter_lines(decode_unicode=True)) if m["event"] != "end"]
    assert [m["data"] for m in again] == [m["data"] for m in events]


def test_cancel_stops_a_run_blocked_in_a_tool_node(server: LiveServer) -> None:
    session_id = server.submit(STUCK)
    wait_until(lambda: server.get(f"/pipelines/{session_id}").json()["current_node"] == "wait", "the stuck node")
    wait_until(lambda: _running_commands(f"sleep {STUCK_MARK}"), "the command to start")
    assert server.post(f"/pipelines/{session_id}/cancel").status_code == 202
    status = server.ended(session_id)
    assert status["status"] == "cancelled"
    assert "after" not in status["completed_nodes"]
    assert _running_commands(f"sleep {STUCK_MARK}") == []
    assert server.post(f"/pipelines/{session_id}/cancel").status_code == 409


def test_sessions_run_from_the_cli_are_served(server: LiveServer, project: Path) -> None:
    (project / "pipeline.dot").write_text(TOOL_RUN, encoding="utf-8")
    session_id = str(run_json("run", "pipeline.dot", cwd=project)["session_id"])
    status = server.get(f"/pipelines/{session_id}").json()
    assert status == {
        "id": session_id, "status": "success", "completed_nodes": ["start", "work", "done"], "current_node": None,
        "error": None,
    }
    assert server.get(f"/sessions/{session_id}").json()["session_id"] == session_id
    assert b"node-work" in server.get(f"/pipelines/{session_id}/graph").content.replace(b"&#45;", b"-")
    with server.get(f"/pipelines/{session_id}/events", stream=True) as response:
        messages = list(sse_messages(response.iter_lines(decode_unicode=True)))
    assert messages[-1]["event"] == "end" and messages[-1]["data"]["status"] == "success"
    assert "PipelineLifecycle" in {m["event"] for m in messages}


def test_with_a_token_every_request_must_carry_it(project: Path) -> None:
    server = LiveServer(project, token="letmein")
    try:
        assert requests.get(f"{server.url}/sessions", timeout=30).status_code == 401
        wrong = requests.get(f"{server.url}/sessions", headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401 and wrong.json()["error"]
        assert server.get("/sessions").json() == {"sessions": []}
        session_id = server.submit(TOOL_RUN)
        assert server.ended(session_id)["status"] == "success"
    finally:
        server.stop()


def test_listening_off_loopback_without_a_token_is_refused(project: Path) -> None:
    result = orchestra("serve", "--host", "0.0.0.0", "--port", "8799", cwd=project)  # refused before it binds
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in result.stderr
    assert not (project / ".orchestra").exists()


def _running_commands(command: str) -> list[int]:
    """The pids of processes whose command line is `command` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                continue
            if cmdline == command:
                found.append(int(entry.name))
    return found


def test_a_session_running_from_the_cli_is_streamed_live_until_it_ends(server: LiveServer, project: Path) -> None:
    (project / "waits.dot").write_text(
        """digraph waits {
            start [shape=Mdiamond]; done [shape=Msquare]
            hold [shape=parallelogram, tool_command="for i in $(seq 2400); do test -f go && exit 0; sleep 0.05; done; exit 1"]
            start -> hold -> done
        }
        """,
        encoding="utf-8",
    )
    cli = subprocess.Popen(
        [str(ORCHESTRA), "run", "waits.dot", "--json"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "NO_COLOR": "1"}, start_new_session=True,
    )
    try:
        sessions = wait_until(lambda: server.get("/sessions").json()["sessions"], "the CLI's session")
        session_id = sessions[0]["session_id"]
        seen: list[dict[str, Any]] = []
        with server.get(f"/pipelines/{session_id}/events", stream=True) as response:
            for message in sse_messages(response.iter_lines(decode_unicode=True)):
                seen.append(message)
                data = message["data"]
                if message["event"] == "NodeExecution" and data.get("node_id") == "hold":
                    (project / "go").touch()  # the run is inside `hold`: let it finish while we follow
                if message["event"] == "end":
                    break
        _, stderr = cli.communicate(timeout=120)
        assert cli.returncode == 0, stderr
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
            cli.communicate()
    assert seen[-1]["data"]["status"] == "success"
    turns = seen[:-1]
    assert [int(m["id"]) for m in turns] == list(range(1, len(turns) + 1))
    lifecycle = [m["data"]["event"] for m in turns if m["event"] == "PipelineLifecycle"]
    assert lifecycle[0] == "started" and lifecycle[-1] == "completed"
