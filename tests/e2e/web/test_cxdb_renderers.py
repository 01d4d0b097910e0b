"""The CXDB UI renderers of `orchestra serve`: registered in the (stand-in) CXDB's type registry for the
AgentTurn, Checkpoint and HumanInteraction types, served as ES modules to any origin, and rendering the turns of
a real run (the PR review on the CXDB store) readably in chromium. The host page does what the CXDB UI's
DynamicRenderer does with React 18 (the UI's version): it reads the registry's manifest, imports each
`esm_url` from another origin and renders the named export as a component with the turn's typed data."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from attrs import frozen

from tests.support.cxdb_server import FakeCxdbServer
from tests.support.environment import hermetic_env
from tests.support.orchestra_project import ORCHESTRA
from tests.support.pr_review import ReviewProject
from tests.support.server import LiveServer, make_project, wait_until

pytestmark = pytest.mark.slow

REACT = Path(__file__).resolve().parents[2] / "cxdb_ui" / "node_modules"
TYPES = ("dev.orchestra.AgentTurn", "dev.orchestra.Checkpoint", "dev.orchestra.HumanInteraction")
HOST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>CXDB renderer host</title><link rel="icon" href="data:,">
<script src="/react/umd/react.development.js"></script>
<script src="/react-dom/umd/react-dom.development.js"></script>
<script>
  // The CXDB UI (Next.js) exposes no global React: renderers must work without one.
  const hostReact = window.React, hostDom = window.ReactDOM;
  delete window.React; delete window.ReactDOM;
  window.renderTurn = async (spec, typeId, typeVersion, data, globalReact) => {
    if (globalReact) window.React = hostReact;
    const module = await import(spec.esm_url);
    const Component = module[spec.component || "default"];
    const element = document.createElement("div");
    element.className = "turn";
    document.body.append(element);
    hostDom.flushSync(() => hostDom.createRoot(element).render(
      hostReact.createElement(Component, { data, typeId, typeVersion })));
    delete window.React;
    return element.innerText;
  };
  window.renderPlain = async (url, data) => {
    const element = document.createElement("div");
    document.body.append(element);
    (await import(url)).render(element, { data });
    return element.innerText;
  };
</script></head><body></body></html>
"""


@frozen
class Traced:
    cxdb: FakeCxdbServer
    project: ReviewProject
    serve_url: str
    host_url: str
    turns: list[dict[str, Any]]  # the session's typed turns, as the CXDB UI reads them


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _host(directory: Path) -> Iterator[str]:
    """The host page and React's UMD builds on a loopback origin of their own."""
    (directory / "index.html").write_text(HOST_PAGE, encoding="utf-8")
    for package in ("react", "react-dom"):
        (directory / package).symlink_to(REACT / package)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    if not (REACT / "react" / "umd" / "react.development.js").exists():
        pytest.skip("React 18 for the renderer host is not installed (make install runs npm ci in tests/cxdb_ui)")
    root = tmp_path_factory.mktemp("renderers")
    env = {**hermetic_env(root / "home"), "NO_COLOR": "1"}
    with FakeCxdbServer() as cxdb:
        storage = {"backend": "cxdb", "addr": cxdb.addr, "url": cxdb.url}
        project = ReviewProject.create(root / "pr-review", env, storage)
        assert project.json("run", "pipeline.dot", "--answers", "answers.yaml")["status"] == "success"
        port = _free_port()
        serve = subprocess.Popen(
            [str(ORCHESTRA), "serve", "--port", str(port)], cwd=project.root, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        try:
            serve_url = f"http://127.0.0.1:{port}"
            wait_until(lambda: _answers(serve_url), "orchestra serve to answer")
            wait_until(lambda: requests.get(f"{cxdb.url}/v1/registry/renderers", timeout=5).json()["renderers"],
                       "the renderers to be registered")
            turns = requests.get(
                f"{cxdb.url}/v1/contexts/1/turns", params={"view": "typed", "limit": "500"}, timeout=30
            ).json()["turns"]
            (root / "host").mkdir()
            for host_url in _host(root / "host"):
                yield Traced(cxdb, project, serve_url, host_url, turns)
        finally:
            serve.terminate()
            serve.wait(30)


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/sessions", timeout=5).status_code == 200
    except requests.ConnectionError:
        return False


def _manifest(traced: Traced) -> dict[str, Any]:
    renderers: dict[str, Any] = requests.get(f"{traced.cxdb.url}/v1/registry/renderers", timeout=10).json()["renderers"]
    return renderers


def test_serve_registers_a_renderer_for_each_turn_type(traced: Traced) -> None:
    manifest = _manifest(traced)
    assert manifest == {
        "dev.orchestra.AgentTurn": {"esm_url": f"{traced.serve_url}/cxdb/renderers/agent-turn.js", "component": "default"},
        "dev.orchestra.Checkpoint": {"esm_url": f"{traced.serve_url}/cxdb/renderers/checkpoint.js", "component": "default"},
        "dev.orchestra.HumanInteraction": {
            "esm_url": f"{traced.serve_url}/cxdb/renderers/human-interaction.js", "component": "default"
        },
    }
    described = requests.get(f"{traced.cxdb.url}/v1/registry/types/dev.orchestra.AgentTurn/versions/3", timeout=10)
    assert described.json()["renderer"] == manifest["dev.orchestra.AgentTurn"]
    assert any(bundle.startswith("dev.orchestra.renderers.") for bundle in traced.cxdb.registry.bundles)
    assert any(bundle.startswith("dev.orchestra.types.") for bundle in traced.cxdb.registry.bundles)


def test_the_modules_are_es_modules_any_origin_may_import(traced: Traced) -> None:
    for type_id, spec in _manifest(traced).items():
        module = requests.get(spec["esm_url"], headers={"Origin": "https://cxdb.example.com"}, timeout=10)
        assert module.status_code == 200, type_id
        assert module.headers["content-type"] == "text/javascript; charset=utf-8"
        assert module.headers["access-control-allow-origin"] == "*"
        assert "export default built.component;" in module.text
    assert requests.get(f"{traced.serve_url}/cxdb/renderers/common.js", timeout=10).status_code == 200
    assert requests.get(f"{traced.serve_url}/cxdb/renderers/../app.py", timeout=10).status_code == 404
    assert requests.get(f"{traced.serve_url}/cxdb/renderers/nope.js", timeout=10).status_code == 404


def _first(traced: Traced, type_id: str, **fields: Any) -> dict[str, Any]:
    return next(
        turn for turn in traced.turns
        if turn["declared_type"]["type_id"] == type_id
        and all(turn["data"].get(key) == value for key, value in fields.items())
    )


def _render(page: Any, traced: Traced, turn: dict[str, Any], *, global_react: bool = False) -> str:
    type_id, version = turn["declared_type"]["type_id"], turn["declared_type"]["type_version"]
    spec = _manifest(traced)[type_id]
    text: str = page.evaluate(
        "([spec, typeId, version, data, g]) => window.renderTurn(spec, typeId, version, data, g)",
        [spec, type_id, version, turn["data"], global_react],
    )
    return text


def test_a_pipeline_trace_renders_readably_in_the_cxdb_ui(page: Any, traced: Traced) -> None:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{traced.host_url}/index.html")
    draft = _first(traced, "dev.orchestra.AgentTurn", node_id="synthesizer", turn_number=0)
    text = _render(page, traced, draft)
    assert "Agent turn · synthesizer #0 · scripted (scripted)" in text
    assert "Reasoning\nuser: You turn several code reviews into the one review the author will act on: … (" in text
    assert "assistant: [calls backend:write-file]\nWriting the review." in text
    assert "Key context values" not in text  # the prompt is folded
    assert "Tool calls (1)" in text and "backend:write-file" in text
    assert "Files written" in text and "backend:REVIEW.md" in text
    sha = draft["data"]["commits"][0]["sha"]
    assert f"backend {sha[:12]} Add REVIEW.md, the synthesized review of the customer search PR diff" in text
    link = page.locator(".turn a", has_text="diff").last
    href = link.get_attribute("href")
    assert href == f"{traced.serve_url}/repos/backend/commits/{sha}"
    diff = requests.get(href, timeout=10)
    assert diff.status_code == 200 and "Author: synthesizer (scripted) <orchestra@local>" in diff.text
    assert "+# Review: customer search (backend and frontend)" in diff.text

    critic = next(t for t in traced.turns if t["declared_type"]["type_id"] == "dev.orchestra.Checkpoint"
                  and t["data"].get("current_node") == "critic" and t["data"].get("next_node") == "synthesizer")
    text = _render(page, traced, critic)
    assert "Checkpoint · after critic · next synthesizer · running" in text
    assert "critic success → Proceed" in text

    chat = _first(traced, "dev.orchestra.HumanInteraction", node_id="synthesizer")
    text = _render(page, traced, chat, global_react=True)  # a host that does expose React works too
    assert "Conversation · synthesizer" in text
    assert "agent:\nREVIEW.md is on the session branch" in text
    assert "human:\nLead with the SQL injection and give each finding its CWE id." in text
    assert errors == []  # React (development build) found nothing wrong with the elements


def test_turn_data_is_shown_as_text_never_as_markup(page: Any, traced: Traced) -> None:
    page.goto(f"{traced.host_url}/index.html")
    hostile = {
        "declared_type": {"type_id": "dev.orchestra.AgentTurn", "type_version": 3},
        "data": {
            "node_id": "<img src=x onerror=\"window.pwned=1\">",
            "turn_number": 0,
            "messages": [{"role": "assistant", "content": "<script>window.pwned=2</script><b>bold?</b>"}],
            "tool_calls": [{"name": "x", "args": {"a": "<i>"}, "result": "<img src=y onerror=\"window.pwned=3\">"}],
            "commits": [{"repo": "javascript:alert(1)//", "sha": "0123456789abcdef", "message": "m"}],
        },
    }
    text = _render(page, traced, hostile)
    assert "<script>window.pwned=2</script><b>bold?</b>" in text
    assert page.evaluate("() => window.pwned") is None
    assert page.locator(".turn img, .turn script, .turn b").count() == 0
    href = page.locator(".turn a").last.get_attribute("href")
    assert href.startswith(f"{traced.serve_url}/repos/javascript%3Aalert(1)%2F%2F/commits/")


def test_pages_without_react_use_the_render_export(page: Any, traced: Traced) -> None:
    page.goto(f"{traced.host_url}/index.html")
    chat = _first(traced, "dev.orchestra.HumanInteraction", node_id="synthesizer")
    url = _manifest(traced)["dev.orchestra.HumanInteraction"]["esm_url"]
    text = page.evaluate("([url, data]) => window.renderPlain(url, data)", [url, chat["data"]])
    assert "Conversation · synthesizer" in text and "human:\nLead with the SQL injection" in text


def test_with_a_token_the_modules_need_none_but_the_diffs_do(tmp_path: Path) -> None:
    server = LiveServer(make_project(tmp_path / "project"), token="s3cret")
    try:
        assert requests.get(f"{server.url}/cxdb/renderers/agent-turn.js", timeout=10).status_code == 200
        assert requests.get(f"{server.url}/repos/backend/commits/abcd", timeout=10).status_code == 401
        answered = server.get("/repos/backend/commits/abcd")
        assert answered.status_code == 404 and "no workspace repo 'backend'" in answered.text
        assert server.get("/repos/backend/commits/NOT-A-SHA").status_code == 400
    finally:
        server.stop()


@pytest.mark.parametrize("url", ["ftp://example.com", "example.com", "https://example.com/?x=1"])
def test_a_public_url_that_is_not_http_is_refused(tmp_path: Path, url: str) -> None:
    done = subprocess.run(
        [str(ORCHESTRA), "serve", "--public-url", url, "--port", str(_free_port())],
        cwd=make_project(tmp_path / "project"), capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2 and f"--public-url {url!r}: expected an http(s) URL" in done.stderr
