"""`orchestra serve`'s app through Starlette's test client: every endpoint, every error, runs in threads."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import MAX_BODY_BYTES, create_app
from orchestra_adapters.server.service import PipelineService
from tests.support.server import GATED, LOCAL, STUCK, TOOL_RUN, make_project, sse_messages, wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "project")


@pytest.fixture
def service(project: Path) -> Iterator[PipelineService]:
    service = PipelineService(cwd=project)
    yield service
    service.close()


@pytest.fixture
def client(service: PipelineService) -> Iterator[TestClient]:
    with TestClient(create_app(service), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client


def _finished(service: PipelineService, session_id: str) -> None:
    run = service.run_of(session_id)
    assert run is not None and run.thread is not None
    run.thread.join()


def _submit(client: TestClient, **body: Any) -> str:
    response = client.post("/pipelines", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _pending(client: TestClient, session_id: str) -> list[dict[str, Any]]:
    return wait_until(lambda: client.get(f"/pipelines/{session_id}/questions").json(), "a pending question")


def test_a_submitted_pipeline_runs_to_success_and_every_view_shows_it(
    client: TestClient, service: PipelineService
) -> None:
    session_id = _submit(client, dot=TOOL_RUN, set={"goal": "the server"})
    _finished(service, session_id)

    status = client.get(f"/pipelines/{session_id}").json()
    assert status == {
        "id": session_id, "status": "success", "completed_nodes": ["start", "work", "done"], "current_node": None,
        "error": None,
    }
    listed = client.get("/sessions").json()["sessions"]
    assert [(s["session_id"], s["status"], s["pipeline"]) for s in listed] == [(session_id, "success", "tool_run")]
    summary = client.get(f"/sessions/{session_id}").json()
    assert summary["status"] == "success"
    assert [node["id"] for node in summary["nodes"]] == ["start", "work", "done"]

    checkpoint = client.get(f"/pipelines/{session_id}/checkpoint").json()
    assert checkpoint["session_id"] == session_id
    assert checkpoint["status"] == "success"
    assert checkpoint["completed_nodes"] == ["start", "work", "done"]
    assert checkpoint["node_outcomes"]["work"]["status"] == "success"
    context = client.get(f"/pipelines/{session_id}/context").json()
    assert context["context"]["goal"] == "the server"
    assert context["context"]["tool.output"].strip() == "working"


def test_the_graph_is_svg_with_an_id_and_a_handler_class_per_node(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=TOOL_RUN)
    _finished(service, session_id)
    response = client.get(f"/pipelines/{session_id}/graph")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    svg = ET.fromstring(response.content)
    groups = {g.get("id"): g.get("class") for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("id")}
    assert groups["node-work"] == "node handler-tool"
    assert groups["node-start"] == "node handler-start"
    assert groups["node-done"] == "node handler-exit"
    assert b">Legend<" in response.content  # the drawing of compile --render, its legend included...
    bare = client.get(f"/pipelines/{session_id}/graph?legend=false")
    assert b">Legend<" not in bare.content  # ...or without it (the web view)
    assert any(g.get("id") == "node-work" for g in ET.fromstring(bare.content).iter("{http://www.w3.org/2000/svg}g"))


def test_events_replay_from_the_start_and_resume_after_last_event_id(
    client: TestClient, service: PipelineService
) -> None:
    session_id = _submit(client, dot=TOOL_RUN)
    _finished(service, session_id)
    with client.stream("GET", f"/pipelines/{session_id}/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        messages = list(sse_messages(response.iter_lines()))
    *events, end = messages
    assert end["event"] == "end" and "id" not in end and end["data"]["status"] == "success"
    ids = [int(message["id"]) for message in events]
    assert ids == list(range(1, len(events) + 1))
    kinds = [message["event"] for message in events]
    assert kinds[0] == "PipelineStarted" and kinds[-1] == "PipelineCompleted"
    assert {"StageStarted", "StageCompleted", "CheckpointSaved"} <= set(kinds)
    assert all(message["data"]["kind"] == message["event"] for message in events)
    started = next(m["data"] for m in events if m["event"] == "StageStarted" and m["data"]["node_id"] == "work")
    assert started["handler_type"] == "tool" and started["branch"] is None

    with client.stream("GET", f"/pipelines/{session_id}/events", headers={"Last-Event-ID": "3"}) as response:
        rest = [m for m in sse_messages(response.iter_lines()) if m["event"] != "end"]
    assert [int(m["id"]) for m in rest] == ids[3:]
    assert [m["data"] for m in rest] == [m["data"] for m in events[3:]]


def test_a_human_gate_is_answered_over_http_by_label(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=GATED)
    [question] = _pending(client, session_id)
    assert question["node_id"] == "review"
    assert question["text"] == "Ship it?"
    assert question["options"] == [{"key": "S", "label": "[S] Ship"}, {"key": "R", "label": "[R] Rework"}]
    assert client.get(f"/pipelines/{session_id}").json()["current_node"] == "review"

    wrong = client.post(f"/pipelines/{session_id}/questions/{question['id']}/answer", json={"answer": "deploy"})
    assert wrong.status_code == 400 and "matches none of its choices" in wrong.json()["error"]
    unknown = client.post(f"/pipelines/{session_id}/questions/nope/answer", json={"answer": "S"})
    assert unknown.status_code == 404
    answered = client.post(f"/pipelines/{session_id}/questions/{question['id']}/answer", json={"answer": "rework"})
    assert answered.status_code == 200 and answered.json()["answer"] == "R"
    _finished(service, session_id)

    status = client.get(f"/pipelines/{session_id}").json()
    assert status["status"] == "success"
    assert status["completed_nodes"] == ["start", "prepare", "review", "rework", "done"]
    assert client.get(f"/pipelines/{session_id}/questions").json() == []
    again = client.post(f"/pipelines/{session_id}/questions/{question['id']}/answer", json={"answer": "S"})
    assert again.status_code == 404  # answered: no longer pending


def test_auto_approve_takes_the_first_choice_without_asking(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=GATED, auto_approve=True)
    _finished(service, session_id)
    assert client.get(f"/pipelines/{session_id}").json()["completed_nodes"] == ["start", "prepare", "review", "ship", "done"]


def test_a_pipeline_file_in_the_project_runs_by_path(client: TestClient, service: PipelineService, project: Path) -> None:
    (project / "flows").mkdir()
    (project / "flows" / "tool.dot").write_text(TOOL_RUN, encoding="utf-8")
    session_id = _submit(client, path="flows/tool.dot")
    _finished(service, session_id)
    assert client.get(f"/pipelines/{session_id}").json()["status"] == "success"


def test_cancel_kills_the_running_command_and_the_run_ends_cancelled(
    client: TestClient, service: PipelineService
) -> None:
    session_id = _submit(client, dot=STUCK)
    wait_until(lambda: client.get(f"/pipelines/{session_id}").json()["current_node"] == "wait", "the stuck node")
    response = client.post(f"/pipelines/{session_id}/cancel")
    assert response.status_code == 202
    _finished(service, session_id)
    status = client.get(f"/pipelines/{session_id}").json()
    assert status["status"] == "cancelled"
    assert "after" not in status["completed_nodes"]
    assert "cancelled" in status["error"]
    assert client.post(f"/pipelines/{session_id}/cancel").status_code == 409
    assert client.get(f"/sessions/{session_id}").json()["status"] == "cancelled"


def test_cancel_releases_a_waiting_human_gate(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=GATED)
    _pending(client, session_id)
    assert client.post(f"/pipelines/{session_id}/cancel").status_code == 202
    _finished(service, session_id)
    status = client.get(f"/pipelines/{session_id}").json()
    assert status["status"] == "cancelled"
    assert "ship" not in status["completed_nodes"] and "rework" not in status["completed_nodes"]


def test_a_session_run_elsewhere_is_read_from_the_store(project: Path, client: TestClient) -> None:
    other = PipelineService(cwd=project)  # another server (or the CLI): this one did not start it
    try:
        with TestClient(create_app(other), base_url=LOCAL) as first:
            session_id = _submit(first, dot=GATED, auto_approve=True)
            _finished(other, session_id)
    finally:
        other.close()
    status = client.get(f"/pipelines/{session_id}").json()
    assert status["status"] == "success"
    assert status["completed_nodes"] == ["start", "prepare", "review", "ship", "done"]
    assert client.get(f"/pipelines/{session_id}/questions").json() == []
    assert client.get(f"/pipelines/{session_id}/graph").status_code == 200
    assert client.post(f"/pipelines/{session_id}/cancel").status_code == 409
    with client.stream("GET", f"/pipelines/{session_id}/events") as response:
        messages = list(sse_messages(response.iter_lines()))
    turns = messages[:-1]
    assert messages[-1]["event"] == "end" and messages[-1]["data"]["status"] == "success"
    ids = [int(m["id"]) for m in turns]  # a recorded session's events are numbered by their turn ids
    assert ids == sorted(set(ids)) and ids == [int(m["data"]["turn_id"]) for m in turns]
    assert {"PipelineLifecycle", "NodeExecution", "HumanInteraction", "Checkpoint"} <= {m["event"] for m in turns}
    resume = {"Last-Event-ID": str(ids[1])}
    with client.stream("GET", f"/pipelines/{session_id}/events", headers=resume) as response:
        rest = [m for m in sse_messages(response.iter_lines()) if m["event"] != "end"]
    assert [m["data"] for m in rest] == [m["data"] for m in turns[2:]]


def test_the_token_is_required_on_every_request(service: PipelineService) -> None:
    with TestClient(create_app(service, token="s3cret")) as client:
        assert client.get("/sessions").status_code == 401
        assert client.get("/sessions", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.post("/pipelines", json={"dot": TOOL_RUN}).status_code == 401
        refused = client.get("/nope", headers={"Authorization": "s3cret"})
        assert refused.status_code == 401 and "bearer token" in refused.json()["error"]
        assert client.get("/sessions", headers={"Authorization": "Bearer s3cret"}).json() == {"sessions": []}


def test_without_a_token_other_sites_pages_are_refused(service: PipelineService) -> None:
    """A page of another site in the user's browser can neither post to a server without a token (CSRF) nor
    reach it under its own name (DNS rebinding); the server's own pages and clients like curl can."""
    with TestClient(create_app(service), base_url="http://127.0.0.1:8765") as client:
        cross = client.post("/pipelines", json={"dot": TOOL_RUN}, headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403 and "another origin" in cross.json()["error"]
        sandboxed = client.post("/pipelines", content=b'{"dot": "x"}', headers={"Origin": "null"})
        assert sandboxed.status_code == 403
        assert client.get("/sessions", headers={"Origin": "https://evil.example"}).status_code == 200
        own = client.post("/pipelines", json={"dot": TOOL_RUN}, headers={"Origin": "http://127.0.0.1:8765"})
        assert own.status_code == 201
        assert client.post("/pipelines", json={"dot": TOOL_RUN}).status_code == 201  # curl sends no Origin
        _finished(service, own.json()["id"])
    for base in ("http://localhost:8765", "http://[::1]:8765"):
        with TestClient(create_app(service), base_url=base) as client:
            assert client.get("/sessions").status_code == 200
    with TestClient(create_app(service), base_url="http://evil.example:8765") as client:
        rebound = client.get("/sessions")
        assert rebound.status_code == 403 and "not a loopback name" in rebound.json()["error"]
        assert client.get("/").status_code == 403


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[1, 2]", 400, "JSON object"),
        (b"", 400, "JSON object"),
        (b"{}", 400, '"dot"'),
        (b'{"dot": "x", "path": "y"}', 400, '"dot"'),
        (b'{"dot": 3}', 400, '"dot" must be'),
        (b'{"path": "../outside.dot"}', 400, "outside the project"),
        (b'{"path": "/etc/hostname"}', 400, "outside the project"),
        (b'{"path": "missing.dot"}', 400, "cannot read"),
        (b'{"dot": "digraph { a -> b }"}', 400, "validation error"),
        (b'{"dot": "digraph {"}', 400, ""),
        (b'{"dot": "digraph g {}", "colour": 1}', 400, "unknown key"),
        (b'{"dot": "digraph g {}", "auto_approve": "yes"}', 400, "auto_approve"),
        (b'{"dot": "digraph g {}", "set": [1]}', 400, '"set"'),
    ],
)
def test_bad_submissions_get_a_json_error_and_start_nothing(
    client: TestClient, service: PipelineService, body: bytes, status: int, says: str
) -> None:
    response = client.post("/pipelines", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status, response.text
    assert says in response.json()["error"]
    assert service.runs() == []
    assert client.get("/sessions").json() == {"sessions": []}


def test_validation_errors_come_with_their_diagnostics(client: TestClient) -> None:
    response = client.post("/pipelines", json={"dot": "digraph { a -> b }"})
    rules = {d["rule"] for d in response.json()["diagnostics"] if d["severity"] == "error"}
    assert rules == {"start_node", "terminal_node"}


def test_an_unknown_backend_is_refused(client: TestClient) -> None:
    response = client.post("/pipelines", json={"dot": TOOL_RUN, "backend": "telepathy"})
    assert response.status_code == 400 and "unknown backend 'telepathy'" in response.json()["error"]


def test_a_symlink_out_of_the_project_is_refused(client: TestClient, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.dot"
    outside.write_text(TOOL_RUN, encoding="utf-8")
    os.symlink(outside, project / "inside.dot")
    response = client.post("/pipelines", json={"path": "inside.dot"})
    assert response.status_code == 400 and "outside the project" in response.json()["error"]


def test_an_oversized_body_is_refused(client: TestClient) -> None:
    response = client.post("/pipelines", content=b"x" * (MAX_BODY_BYTES + 1))
    assert response.status_code == 413 and "larger than" in response.json()["error"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/pipelines/404404", 404),
        ("GET", "/pipelines/404404/events", 404),
        ("POST", "/pipelines/404404/cancel", 404),
        ("GET", "/pipelines/404404/graph", 404),
        ("GET", "/pipelines/404404/questions", 404),
        ("POST", "/pipelines/404404/questions/q/answer", 404),
        ("GET", "/pipelines/404404/checkpoint", 404),
        ("GET", "/pipelines/404404/context", 404),
        ("GET", "/sessions/404404", 404),
        ("GET", "/nothing/here", 404),
        ("DELETE", "/pipelines", 405),
        ("PUT", "/pipelines", 405),
        ("PUT", "/pipelines/1/cancel", 405),
        ("GET", "/sessions?limit=zero", 400),
        ("GET", "/sessions?limit=%C2%B2", 400),
    ],
)
def test_unknown_ids_routes_and_methods_get_json_errors(
    client: TestClient, service: PipelineService, method: str, path: str, status: int
) -> None:
    _finished(service, _submit(client, dot=TOOL_RUN))  # a store exists: ids are looked up in it
    response = client.request(method, path, json={"answer": "S"} if method == "POST" else None)
    assert response.status_code == status, response.text
    assert response.json()["error"]


def test_a_bad_last_event_id_is_refused(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=TOOL_RUN)
    _finished(service, session_id)
    for bad in (b"abc", b"\xb2"):  # \xb2 is "2" as a superscript: a digit to str.isdigit, not to int()
        response = client.get(f"/pipelines/{session_id}/events", headers={"Last-Event-ID": bad})
        assert response.status_code == 400 and "Last-Event-ID" in response.json()["error"]


def test_an_answer_must_be_a_non_empty_string(client: TestClient, service: PipelineService) -> None:
    session_id = _submit(client, dot=GATED)
    [question] = _pending(client, session_id)
    url = f"/pipelines/{session_id}/questions/{question['id']}/answer"
    assert client.post(url, json={"answer": ""}).status_code == 400
    assert client.post(url, json={"reply": "S"}).status_code == 400
    assert client.post(url, content=b"{oops").status_code == 400
    assert client.post(url, json={"answer": "s"}).status_code == 200  # a key, any case
    _finished(service, session_id)
    assert client.get(f"/pipelines/{session_id}").json()["completed_nodes"][-2:] == ["ship", "done"]


def test_no_checkpoint_and_no_store_yet_are_404(client: TestClient) -> None:
    assert client.get("/sessions").json() == {"sessions": []}
    assert client.get("/pipelines/1/checkpoint").status_code == 404


def test_a_provider_without_its_key_is_refused_before_a_session_exists(tmp_path: Path) -> None:
    project = tmp_path / "keyless"
    project.mkdir()
    (project / "orchestra.yaml").write_text(
        "providers:\n  default: anthropic\n  anthropic:\n    models:\n      worker: claude-sonnet-4-5\nbackend: langgraph\n",
        encoding="utf-8",
    )
    service = PipelineService(cwd=project)
    try:
        with TestClient(create_app(service), base_url=LOCAL) as client:
            dot = 'digraph llm { start [shape=Mdiamond]; done [shape=Msquare]; plan [prompt="Plan"]; start -> plan -> done }'
            response = client.post("/pipelines", json={"dot": dot})
            assert response.status_code == 400, response.text
            assert "ANTHROPIC_API_KEY" in response.json()["error"]
            assert client.get("/sessions").json() == {"sessions": []}
    finally:
        service.close()


def test_a_long_lived_server_keeps_only_the_newest_finished_runs_in_memory(
    client: TestClient, service: PipelineService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestra_adapters.server import service as service_module

    monkeypatch.setattr(service_module, "KEEP_FINISHED", 1)
    sessions = []
    for _ in range(3):
        sessions.append(_submit(client, dot=TOOL_RUN))
        _finished(service, sessions[-1])
    kept = [run.session_id for run in service.runs()]
    assert sessions[0] not in kept and sessions[-1] in kept and len(kept) <= 2
    for session_id in sessions:  # the forgotten ones are read from the store like any other session
        assert client.get(f"/pipelines/{session_id}").json()["status"] == "success"
        assert client.get(f"/pipelines/{session_id}/checkpoint").json()["completed_nodes"] == ["start", "work", "done"]
