"""Notifications of runs `orchestra serve` starts: a gate waiting for its HTTP answer names the session's page on
the server (not `orchestra attach`, which cannot answer it); a cancel over HTTP is `cancelled`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from tests.support.server import GATED, LOCAL, STUCK, wait_until
from tests.support.webhook_receiver import WebhookReceiver, webhook_receiver

PUBLIC = "https://orchestra.example.com"


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with webhook_receiver() as started:
        yield started


@pytest.fixture
def client(tmp_path: Path, receiver: WebhookReceiver) -> Iterator[TestClient]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "orchestra.yaml").write_text(f"backend: simulate\nnotify:\n  - url: {receiver.url}\n", encoding="utf-8")
    service = PipelineService(cwd=project, server_url=PUBLIC)
    with TestClient(create_app(service), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client
    service.close()


def test_a_gate_waiting_for_its_http_answer_names_the_sessions_page(client: TestClient, receiver: WebhookReceiver) -> None:
    session_id = client.post("/pipelines", json={"dot": GATED}).json()["id"]
    (asked,) = receiver.wait_for(1, 30)
    question = asked.json()["question"]
    assert asked.json()["event"] == "needs_input" and question["text"] == "Ship it?"
    assert question["answer"] == {"command": None, "url": f"{PUBLIC}/view/{session_id}"}
    (pending,) = wait_until(lambda: client.get(f"/pipelines/{session_id}/questions").json(), "the question")
    client.post(f"/pipelines/{session_id}/questions/{pending['id']}/answer", json={"answer": "Ship"})
    receiver.wait_for(2, 30)
    assert receiver.events() == ["needs_input", "finished"]


def test_a_run_cancelled_over_http_is_cancelled(client: TestClient, receiver: WebhookReceiver) -> None:
    session_id = client.post("/pipelines", json={"dot": STUCK}).json()["id"]
    wait_until(lambda: client.get(f"/pipelines/{session_id}").json()["current_node"] == "wait", "the stuck node")
    assert client.post(f"/pipelines/{session_id}/cancel").status_code == 202
    (cancelled,) = receiver.wait_for(1, 30)
    body = cancelled.json()
    assert (body["event"], body["status"]) == ("cancelled", "cancelled")
    assert body["failure_reason"] == "the run was cancelled over HTTP" and body["resume"] == f"orchestra resume {session_id}"
