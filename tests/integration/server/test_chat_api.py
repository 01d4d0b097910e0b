"""The chat endpoints of `orchestra serve` (server/chat.py) through Starlette's test client: an interactive
node of a run served here, one of a run started by `orchestra run` in another process, errors, cancel."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from tests.support.chat_project import DRAFTS, chat_project, conversation
from tests.support.orchestra_project import ORCHESTRA
from tests.support.server import LOCAL, wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return chat_project(tmp_path / "project")


@pytest.fixture
def client(project: Path) -> Iterator[TestClient]:
    service = PipelineService(cwd=project)
    with TestClient(create_app(service), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client
    service.close()


def _waiting_for(client: TestClient, session_id: str, text: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        response = client.get(f"/pipelines/{session_id}/chat")  # 404 until the other process made the session
        chat = response.json()
        return (
            chat
            if response.status_code == 200 and chat["waiting"] and chat["messages"][-1]["text"] == text
            else None
        )

    return wait_until(check, f"the chat to wait after {text!r}")


def _status(client: TestClient, session_id: str) -> str:
    return wait_until(
        lambda: (status := client.get(f"/pipelines/{session_id}").json()["status"]) != "running" and status,
        "the run to end",
    )


def test_a_conversation_over_http_reaches_the_agent_and_approve_ends_it(
    client: TestClient, project: Path
) -> None:
    session_id = client.post("/pipelines", json={"path": "chat.dot"}).json()["id"]
    chat = _waiting_for(client, session_id, DRAFTS[0])
    assert chat == {
        "id": session_id,
        "node_id": "synth",
        "waiting": True,
        "messages": [{"role": "agent", "text": DRAFTS[0]}],
    }
    assert (
        client.post(f"/pipelines/{session_id}/chat", json={"message": "Make it shorter"}).status_code == 202
    )
    chat = _waiting_for(client, session_id, DRAFTS[1])
    assert [m["role"] for m in chat["messages"]] == ["agent", "human", "agent"]
    client.post(f"/pipelines/{session_id}/chat", json={"message": "/approve"})
    assert _status(client, session_id) == "success"
    assert conversation(project, session_id) == [(DRAFTS[0], "Make it shorter"), (DRAFTS[1], "/approve")]
    after = client.get(f"/pipelines/{session_id}/chat").json()
    assert after["waiting"] is False and after["node_id"] == "synth"
    assert [m["text"] for m in after["messages"]] == [DRAFTS[0], "Make it shorter", DRAFTS[1], "/approve"]


def test_bad_chat_requests_get_4xx(client: TestClient) -> None:
    assert client.get("/pipelines/nope/chat").status_code == 404
    assert client.post("/pipelines/nope/chat", json={"message": "hi"}).status_code == 404
    session_id = client.post("/pipelines", json={"path": "chat.dot"}).json()["id"]
    _waiting_for(client, session_id, DRAFTS[0])
    for body in ({}, {"message": ""}, {"message": 3}, {"message": "x" * 40000}):
        response = client.post(f"/pipelines/{session_id}/chat", json=body)
        assert response.status_code == 400 and "message" in response.json()["error"]
    bad = client.post(
        f"/pipelines/{session_id}/chat", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert bad.status_code == 400
    assert client.post(f"/pipelines/{session_id}/cancel").status_code == 202
    assert _status(client, session_id) == "cancelled"
    late = client.post(f"/pipelines/{session_id}/chat", json={"message": "hello?"})
    assert late.status_code == 409 and "waits" in late.json()["error"]


@pytest.mark.slow
def test_the_chat_of_a_run_started_by_orchestra_run_elsewhere(client: TestClient, project: Path) -> None:
    runner = subprocess.Popen(  # its console's stdin stays open and silent: the answer comes over HTTP
        [str(ORCHESTRA), "run", "chat.dot", "--quiet"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        _waiting_for(client, "1", DRAFTS[0])
        listed = {s["session_id"]: s for s in client.get("/sessions").json()["sessions"]}
        assert listed["1"]["status"] == "running" and listed["1"]["waiting"] is True  # the board's column
        assert client.post("/pipelines/1/chat", json={"message": "/reject"}).status_code == 202
        assert runner.wait(60) == 1
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    assert conversation(project) == [(DRAFTS[0], "/reject")]
    after = client.get("/pipelines/1/chat").json()
    assert client.get("/sessions").json()["sessions"][0]["waiting"] is False
    assert after["waiting"] is False and [m["text"] for m in after["messages"]] == [DRAFTS[0], "/reject"]
    assert client.post("/pipelines/1/chat", json={"message": "too late"}).status_code == 409


TWO_NODES = """digraph chat {
  start [shape=Mdiamond]; done [shape=Msquare]
  draft [agent.mode="interactive", prompt="Draft it"]
  polish [agent.mode="interactive", prompt="Polish it"]
  start -> draft -> polish -> done
}
"""


@pytest.mark.slow
def test_the_chat_of_a_run_elsewhere_shows_only_the_waiting_nodes_conversation(
    client: TestClient, project: Path
) -> None:
    from tests.support.orchestra_project import write_files

    cassette = 'nodes:\n  draft:\n    - content: "The draft."\n  polish:\n    - content: "Polished."\n'
    write_files(project, {"two.dot": TWO_NODES, "cassette.yaml": cassette + 'default: "Done."\n'})
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "two.dot", "--quiet"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        _waiting_for(client, "1", "The draft.")
        assert client.post("/pipelines/1/chat", json={"message": "/done"}).status_code == 202
        chat = _waiting_for(client, "1", "Polished.")
        assert chat["node_id"] == "polish" and [m["text"] for m in chat["messages"]] == ["Polished."]
        assert client.post("/pipelines/1/chat", json={"message": "/approve"}).status_code == 202
        assert runner.wait(60) == 0
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
