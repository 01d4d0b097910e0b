"""Agents live in a real headless chromium: while a node runs, its agent's text and tool calls appear on the session
page as they happen (the agent is held inside a tool call until the page has shown them), as text, in a box that
does not move the page; for the LangGraph backend (the scripted model, whose reply streams word by word) and the real
Claude Code (against the scripted Anthropic fake). The event stream resumed with Last-Event-ID repeats none of it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.cli_agents import claude_binary, claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import make_repo
from tests.support.orchestra_project import ORCHESTRA
from tests.support.server import LiveServer, sse_messages, wait_until

PIPELINE = """digraph live {
    start [shape=Mdiamond]; exit [shape=Msquare]
    work [prompt="Look around, then finish", agent.tools="project:hold"]
    start -> work -> exit
}
"""
SAID = "Looking at <img src=x onerror=window.pwned=1> the code"
WRITTEN = "<script>window.pwned=2</script>"
FINAL = "All done <b>now</b>."
CASSETTE = f"""nodes:
  work:
    - content: {json.dumps(SAID)}
      tool_calls:
        - {{name: "project:write-file", args: {{path: notes.md, content: {json.dumps(WRITTEN)}}}}}
        - {{name: "project:hold", args: {{}}}}
    - content: {json.dumps(FINAL)}
default: "Done."
"""
SCRIPTED = {"providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}}, "backend": "langgraph"}
HOLD_CALL = '#live li.live-call:has(code:text-is("project:hold"))'


def live_project(root: Path, gate: Path, config: dict[str, Any], cassette: str = CASSETTE) -> Path:
    """A repo with live.dot, whose `project:hold` tool waits until the file `gate` exists."""
    hold = {"command": f"while [ ! -f {gate} ]; do sleep 0.05; done; echo released", "description": "Wait a little",
            "timeout": "120s"}
    settings = {**config, "workspace": {"repos": {"project": {"path": "."}}, "tools": {"project": {"hold": hold}}}}
    files = {"orchestra.yaml": json.dumps(settings), "live.dot": PIPELINE, "cassette.yaml": cassette,
             ".gitignore": ".orchestra/\n"}
    return make_repo(root, files).path


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    return tmp_path / "gate"


@pytest.fixture
def scripted_server(tmp_path: Path, gate: Path) -> Iterator[LiveServer]:
    server = LiveServer(live_project(tmp_path / "project", gate, SCRIPTED))
    yield server
    gate.touch()
    server.stop()


@pytest.fixture
def claude_server(tmp_path: Path, gate: Path) -> Iterator[tuple[LiveServer, FakeAnthropicAPI]]:
    claude = claude_binary()
    write = ToolUse("mcp__orchestra__project__write-file", {"path": "notes.md", "content": WRITTEN})
    script = [Reply(SAID, [write, ToolUse("mcp__orchestra__project__hold", {})]), Reply(FINAL)]
    with FakeAnthropicAPI(script) as api:
        config = {"backend": "claude-code", "claude_code": {"command": str(claude), "model": "fake-model"}}
        project = live_project(tmp_path / "project", gate, config)
        server = LiveServer(project, env=claude_env(api.base_url, tmp_path / "home"))
        yield server, api
        gate.touch()
        server.stop()


def watch_shifts(page: Any) -> None:
    page.evaluate("""() => {
        window.shifts = [];
        new PerformanceObserver((list) => {
            for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.shifts.push(entry.value);
        }).observe({ type: "layout-shift" });
    }""")


def assert_shown_as_text(page: Any) -> None:
    live = page.text_content("#live")
    assert SAID in live and WRITTEN in live
    assert page.query_selector_all("#live img, #live script, #live b") == []
    assert page.evaluate("window.pwned") is None


def assert_live_while_running(server: LiveServer, session_id: str, page: Any) -> None:
    """The page shows the agent's text and its tool calls while the node still runs (held in `project:hold`)."""
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector(HOLD_CALL)
    status = server.status(session_id)
    assert (status["status"], status["current_node"]) == ("running", "work")  # the gate is still closed
    page.wait_for_selector('#graph g.node[data-node="work"][data-status="running"]')
    assert_shown_as_text(page)
    block = '#live .live-node[data-node="work"]'
    assert page.text_content(f"{block} .live-status").startswith("running · turn 0")
    calls = page.eval_on_selector_all(f"{block} li.live-call code", "codes => codes.map(c => c.textContent)")
    assert calls == ["project:write-file", "project:hold"]
    args = page.eval_on_selector_all(
        f'{block} li.live-call:has(code:text-is("project:write-file")) .arg', "args => args.map(a => a.textContent)"
    )
    assert args == ["path: notes.md", f"content: {WRITTEN}"]  # one a line, a string as its text


def assert_finishes_in_place(page: Any, gate: Path) -> None:
    """Released, the agent's last words join the box, which neither grows nor moves what is around it."""
    box = page.eval_on_selector("#live", "box => box.getBoundingClientRect().height")
    watch_shifts(page)
    gate.touch()
    page.wait_for_selector('#status[data-status="success"]')
    page.wait_for_selector('#live .live-node.done[data-node="work"]')
    assert FINAL in page.text_content("#live")
    assert page.eval_on_selector("#live", "box => box.getBoundingClientRect().height") == box
    page.wait_for_timeout(500)
    assert sum(page.evaluate("window.shifts")) < 0.05, page.evaluate("window.shifts")
    assert_shown_as_text(page)


def test_the_langgraph_agents_text_and_tool_calls_appear_while_the_node_runs(
    scripted_server: LiveServer, gate: Path, page: Any
) -> None:
    session_id = _start(scripted_server)
    assert_live_while_running(scripted_server, session_id, page)
    result = '#live li.live-result:has(code:text-is("project:write-file")) .result'
    assert page.text_content(result).startswith("Wrote ")  # the first call's result, the second call still running
    shots = os.environ.get("ORCHESTRA_WEB_SCREENSHOTS")
    if shots:  # for a person to look at (docs/images/web-view.png is one)
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / "session-live.png"), full_page=True)
    page.focus("#live")  # the box takes the keyboard's focus, to scroll it
    assert page.evaluate("document.activeElement.id") == "live"
    assert page.get_attribute("#live", "aria-label")
    assert_finishes_in_place(page, gate)


STREAMED = "Streaming <i>word</i> by word, the rest still being written."


def test_the_langgraph_agents_first_words_show_while_the_rest_of_its_reply_is_written(
    tmp_path: Path, gate: Path, page: Any
) -> None:
    """The scripted model streams its reply and holds it after the first word (a real model takes 10-60 s to
    write one): the page shows that word while the node runs and the reply is not over, then the whole reply."""
    written = tmp_path / "written"
    cassette = f"nodes:\n  work:\n    - {{content: {json.dumps(STREAMED)}, hold: {json.dumps(str(written))}}}\n"
    server = LiveServer(live_project(tmp_path / "project", gate, SCRIPTED, cassette))
    try:
        session_id = _start(server)
        page.goto(f"{server.url}/view/{session_id}")
        page.wait_for_selector('#live .live-node[data-node="work"] li.live-text')
        page.wait_for_timeout(300)  # the rest would have come by now were it not still being written
        assert page.text_content('#live .live-node[data-node="work"] li.live-text') == "Streaming"
        status = server.status(session_id)
        assert (status["status"], status["current_node"]) == ("running", "work")
        written.touch()
        page.wait_for_selector('#status[data-status="success"]')
        page.wait_for_selector('#live .live-node.done[data-node="work"]')
        assert page.text_content('#live .live-node[data-node="work"] li.live-text') == STREAMED
        assert page.query_selector_all("#live i") == []
    finally:
        written.touch()
        server.stop()


def test_the_real_claude_codes_text_and_tool_calls_appear_while_the_node_runs(
    claude_server: tuple[LiveServer, FakeAnthropicAPI], gate: Path, page: Any
) -> None:
    server, _api = claude_server
    session_id = _start(server)
    assert_live_while_running(server, session_id, page)
    assert_finishes_in_place(page, gate)


def test_a_stream_resumed_with_last_event_id_repeats_no_activity(scripted_server: LiveServer, gate: Path) -> None:
    session_id = _start(scripted_server)
    first = _read_until(scripted_server, session_id, {}, lambda m: m["event"] == "AgentActivity")
    seen = int(first[-1]["id"])
    rest = _read_until(
        scripted_server, session_id, {"Last-Event-ID": str(seen)},
        lambda m: m["event"] == "AgentActivity" and m["data"]["tool"] == "project:hold",
    )
    assert all(int(message["id"]) > seen for message in rest)
    activity = [m["data"] for m in first + rest if m["event"] == "AgentActivity"]
    texts = [a for a in activity if a["activity"] == "text"]  # the reply streams: its words in one event or more
    assert [(a["activity"], a["tool"]) for a in activity[len(texts):]] == [
        ("tool_call", "project:write-file"), ("tool_result", "project:write-file"), ("tool_call", "project:hold"),
    ]
    assert activity[: len(texts)] == texts
    assert "".join(a["text"] for a in texts) == SAID
    assert {(a["node_id"], a["turn"]) for a in texts} == {("work", 0)}
    ids = [int(m["id"]) for m in first + rest]
    assert ids == sorted(set(ids))


def _start(server: LiveServer) -> str:
    response = server.post("/pipelines", {"path": "live.dot"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _read_until(server: LiveServer, session_id: str, headers: dict[str, str], done: Any) -> list[dict[str, Any]]:
    """The stream's messages up to the first for which `done` is true (then the connection is closed)."""
    url = f"{server.url}/pipelines/{session_id}/events"
    read: list[dict[str, Any]] = []
    with requests.get(url, headers={**server.headers, **headers}, stream=True, timeout=60) as response:
        for message in sse_messages(response.iter_lines(decode_unicode=True)):
            read.append(message)
            if done(message):
                return read
    raise AssertionError(f"the stream ended before the awaited message: {read}")


def test_a_run_started_from_the_cli_shows_its_agents_live_too(tmp_path: Path, gate: Path, page: Any) -> None:
    project = live_project(tmp_path / "project", gate, SCRIPTED)
    run = subprocess.Popen(
        [str(ORCHESTRA), "run", "live.dot", "--auto-approve", "--quiet"], cwd=project,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    server = LiveServer(project)
    try:
        session_id = str(wait_until(lambda: server.get("/sessions").json()["sessions"][:1], "the run's session")[0]["session_id"])
        assert_live_while_running(server, session_id, page)
        gate.touch()
        assert run.wait(timeout=120) == 0, run.stderr.read() if run.stderr else ""
        page.wait_for_selector('#status[data-status="success"]')
        try:
            page.wait_for_selector('#live .live-node.done[data-node="work"]', timeout=10_000)
        except Exception:
            raise AssertionError(page.inner_html("#live") + page.inner_text("#events")) from None
        assert_shown_as_text(page)
    finally:
        gate.touch()
        if run.poll() is None:
            run.kill()
        server.stop()


def test_the_box_keeps_a_nodes_latest_32_kb_and_an_ended_node_stays_ended(scripted_server: LiveServer, page: Any) -> None:
    session_id = _start(scripted_server)
    page.goto(f"{scripted_server.url}/view/{session_id}")
    page.wait_for_selector(HOLD_CALL)
    shown = page.evaluate("""() => {
        const box = document.createElement("ol");
        document.body.append(box);
        const live = new window.OrchestraLive.Live(box);
        const text = (n, turn) => ({node_id: "n", branch: null, activity: "text", text: String(n).repeat(1000), turn});
        for (let n = 0; n < 100; n++) live.add(text(n % 10, n < 50 ? 0 : 1));
        const kept = box.textContent.length;
        const last = box.querySelector(".live-text:last-child").textContent.slice(-5);
        live.finish("n", null, "done");
        live.add(text(7, 1));  // read after the node's end (a stored session's stream): it stays ended
        const ended = [box.querySelector(".live-status").textContent, box.querySelector(".live-node.done") !== null];
        live.start("n", null);  // it runs again
        return {kept, last, ended, again: box.querySelector(".live-node.done") === null};
    }""")
    assert 32 * 1024 <= shown["kept"] <= 32 * 1024 + 100 and shown["last"] == "99999"
    assert shown["ended"] == ["done", True] and shown["again"]
