"""The web view's pages and static files through Starlette's test client: what they serve, their security
headers, and how a browser carries the server's token (`?token=` once, then an HttpOnly cookie that only the
pages and the event stream accept)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.pages import STATIC_TYPES, TOKEN_COOKIE, cookie_value
from orchestra_adapters.server.service import PipelineService
from tests.support.server import LOCAL, TOOL_RUN, make_project, wait_until

TOKEN = "s3cret-token"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[PipelineService]:
    service = PipelineService(cwd=make_project(tmp_path / "project"))
    yield service
    service.close()


@pytest.mark.parametrize(
    ("path", "marker", "script"),
    [("/", 'data-page="sessions"', "board.js"), ("/launch", 'data-page="launch"', "launch.js"),
     ("/view/7", 'data-page="session"', "app.js")],
)
def test_the_pages_are_html_with_a_strict_content_security_policy(
    service: PipelineService, path: str, marker: str, script: str
) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        response = client.get(path)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert marker in response.text and f'<script src="/static/{script}" defer>' in response.text
    assert '<script src="/static/common.js" defer>' in response.text
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "unsafe" not in policy
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_static_files_are_served_from_the_package_and_nothing_else_is(service: PipelineService) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        script = client.get("/static/app.js")
        style = client.get("/static/style.css")
        assert client.get("/static/index.html").status_code == 404
        assert client.get("/static/..%2Fpages.py").status_code == 404
        assert client.get("/static/launch.html").status_code == 404
        scripts = [client.get(f"/static/{name}") for name in STATIC_TYPES if name.endswith(".js")]
    assert script.headers["content-type"].startswith("text/javascript") and "EventSource" in script.text
    for code in scripts:  # agent text reaches the page as text only
        assert code.status_code == 200
        assert "innerHTML" not in code.text and "insertAdjacentHTML" not in code.text and "document.write" not in code.text
    assert style.headers["content-type"].startswith("text/css") and ".status-succeeded" in style.text


def test_the_json_api_keeps_its_paths(service: PipelineService) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        session_id = client.post("/pipelines", json={"dot": TOOL_RUN}).json()["id"]
        wait_until(lambda: client.get(f"/pipelines/{session_id}").json()["status"] != "running", "the run to end")
        assert client.get(f"/sessions/{session_id}").json()["session_id"] == session_id
        assert client.get(f"/view/{session_id}").headers["content-type"].startswith("text/html")


def test_with_a_token_a_page_needs_it_and_keeps_it_in_an_httponly_cookie(service: PipelineService) -> None:
    with TestClient(create_app(service, token=TOKEN)) as client:
        assert client.get("/").status_code == 401
        assert client.get("/?token=wrong").status_code == 401
        opened = client.get(f"/view/3?token={TOKEN}")
        assert opened.status_code == 200
        cookie = opened.headers["set-cookie"]
        assert cookie.startswith(f"{TOKEN_COOKIE}={cookie_value(TOKEN)};")
        assert TOKEN not in cookie  # a digest of the token, never the token
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        # The client now sends the cookie: the pages, static files and event stream take it...
        assert client.get("/").status_code == 200
        assert client.get("/static/app.js").status_code == 200
        assert client.get("/pipelines/404404/events").status_code == 404  # past the token check
        assert client.get("/launch").status_code == 200
        assert client.get("/sessions/404404/file?repo=r&sha=abcd&path=f").status_code == 404  # the diff's file link
        # ...the JSON API and every write do not (they need the Authorization header), nor do other methods.
        assert client.get("/sessions").status_code == 401
        assert client.get("/pipelines/404404").status_code == 401
        assert client.get("/pipelines").status_code == 401
        assert client.get("/sessions/404404/diff").status_code == 401
        assert client.get("/sessions/404404/costs").status_code == 401
        assert client.post("/pipelines", json={"dot": TOOL_RUN}).status_code == 401
        assert client.post("/pipelines/1/cancel").status_code == 401
        # ?token= is taken on the pages only.
        client.cookies.clear()
        assert client.get(f"/sessions?token={TOKEN}").status_code == 401
        assert client.get(f"/pipelines/404404/events?token={TOKEN}").status_code == 401
        client.cookies.set(TOKEN_COOKIE, "forged")
        assert client.get("/").status_code == 401
        headers = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/", headers=headers).status_code == 200
        assert client.get("/sessions", headers=headers).json() == {"sessions": []}
