"""The web view in a real headless chromium against a live `orchestra serve`: a session page colours its graph
live, answers a human gate by a click, follows the run to its end, and shows hostile text as text."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.chat_project import DRAFTS, chat_project
from tests.support.chat_project import PIPELINE as CHAT_PIPELINE
from tests.support.orchestra_project import ORCHESTRA, run_json
from tests.support.server import STUCK, wait_until
from tests.support.web_view import LiveServer, live_server

TOKEN = "web-view-secret-token"
GATED = """digraph release {
    start [shape=Mdiamond]; done [shape=Msquare]
    prepare [shape=parallelogram, tool_command="echo prepared"]
    review [shape=hexagon, label="Ship the release?"]
    ship [shape=parallelogram, tool_command="echo shipped"]
    rework [shape=parallelogram, tool_command="echo reworked"]
    start -> prepare -> review
    review -> ship [label="[S] Ship"]
    review -> rework [label="[R] Rework"]
    ship -> done
    rework -> done
}
"""
# Not wrapped in <...> as a whole: pygraphviz would take that for an HTML-like label (the graph renderer's matter).
HOSTILE_TEXT = "Ship <script>window.pwned = 1</script><img src=x onerror=window.pwned=2> now?"
HOSTILE = """digraph hostile {
    start [shape=Mdiamond]; done [shape=Msquare]
    gate [shape=hexagon, label="HOSTILE"]
    start -> gate
    gate -> done [label="[Y] Yes"]
}
""".replace("HOSTILE", HOSTILE_TEXT)


@pytest.fixture
def token_server(tmp_path: Path) -> Iterator[LiveServer]:
    server = live_server(tmp_path, token=TOKEN)
    yield server
    server.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    server = live_server(tmp_path)
    yield server
    server.stop()


def node(page: Any, node_id: str, status: str) -> str:
    return f'#graph g.node[data-node="{node_id}"][data-status="{status}"]'


def test_a_session_page_follows_a_run_and_answers_its_gate_with_a_click(
    token_server: LiveServer, page: Any, tmp_path: Path
) -> None:
    session_id = token_server.submit(GATED)
    page.goto(f"{token_server.url}/view/{session_id}?token={TOKEN}")
    assert "token=" not in page.url  # the page keeps the token in sessionStorage, not in the address

    page.wait_for_selector(node(page, "prepare", "succeeded"), state="attached")
    page.wait_for_selector(node(page, "review", "running"), state="attached")
    button = page.wait_for_selector('#questions button[data-answer="S"]')
    assert page.text_content("#questions .question p") == "Ship the release?"
    assert page.get_attribute("#graph g.node[data-node='rework']", "data-status") == "pending"
    shot = tmp_path / "web-view.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and shot.stat().st_size > 10_000

    button.click()
    page.wait_for_selector('#status[data-status="success"]')
    page.wait_for_selector(node(page, "done", "succeeded"), state="attached")
    assert page.get_attribute("#graph g.node[data-node='ship']", "data-status") == "succeeded"
    assert page.get_attribute("#graph g.node[data-node='rework']", "data-status") == "pending"
    kinds = page.eval_on_selector_all("#events li", "items => items.map(item => item.dataset.kind)")
    assert kinds[0] == "PipelineStarted" and "InterviewCompleted" in kinds and "PipelineCompleted" in kinds
    assert page.is_hidden("#cancel")
    assert page.is_hidden("#chat")  # no chat endpoint answers for a pipeline without an interactive node
    assert token_server.status(session_id)["status"] == "success"

    page.goto(f"{token_server.url}/")  # the board, with the cookie the session page set
    card = page.wait_for_selector(f'#board [data-column="done"] li[data-session="{session_id}"]')
    assert card.query_selector(f'a[href="/view/{session_id}"]') is not None
    assert card.query_selector(".card-title").text_content() == "release"


def test_hostile_labels_are_shown_as_text_never_run(server: LiveServer, page: Any) -> None:
    session_id = server.submit(HOSTILE)
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector('#questions button[data-answer="Y"]')
    page.wait_for_selector('#events li[data-kind="InterviewStarted"]')

    assert page.text_content("#questions .question p") == HOSTILE_TEXT
    assert HOSTILE_TEXT in page.text_content('#events li[data-kind="InterviewStarted"]')
    assert HOSTILE_TEXT in page.text_content("#graph g.node[data-node='gate']")
    assert page.query_selector_all("main img, main script") == []
    assert page.evaluate("window.pwned") is None

    page.click('#questions button[data-answer="Y"]')
    page.wait_for_selector('#status[data-status="success"]')
    assert page.evaluate("window.pwned") is None


def test_the_cancel_button_stops_a_running_pipeline(server: LiveServer, page: Any) -> None:
    session_id = server.submit(STUCK)
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector(node(page, "wait", "running"), state="attached")
    page.click("#cancel")
    page.wait_for_selector('#status[data-status="cancelled"]')
    assert page.is_hidden("#cancel")
    assert server.status(session_id)["status"] == "cancelled"
    assert page.get_attribute("#graph g.node[data-node='after']", "data-status") == "pending"


def test_a_session_run_from_the_cli_shows_its_recorded_turns(server: LiveServer, page: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "cli.dot").write_text(STUCK.replace("sleep 60", "echo quick"), encoding="utf-8")
    session_id = run_json("run", "cli.dot", cwd=project)["session_id"]
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector('#events li[data-kind="end"]')
    for node_id in ("start", "wait", "after", "done"):
        assert page.get_attribute(f"#graph g.node[data-node='{node_id}']", "data-status") == "succeeded"
    assert "wait: completed success" in page.text_content("#events")
    assert page.get_attribute("#status", "data-status") == "success"


def test_an_interactive_node_is_a_chat_on_its_session_page(tmp_path: Path, page: Any) -> None:
    project = chat_project(tmp_path / "project")
    server = LiveServer(project)
    try:
        session_id = server.submit(CHAT_PIPELINE)
        page.goto(f"{server.url}/view/{session_id}")
        page.wait_for_selector('#chat[data-waiting="true"]')
        assert page.text_content("#chat-messages").count(DRAFTS[0]) == 1
        page.fill("#chat-input", "Make it shorter")
        page.click("#chat-send")
        page.wait_for_selector(f'#chat-messages li:has-text("{DRAFTS[1]}")')
        assert "Make it shorter" in page.text_content("#chat-messages")
        page.wait_for_selector('#chat[data-waiting="true"]')
        page.click('#chat-compose button[data-chat="/approve"]')
        page.wait_for_selector('#status[data-status="success"]')
        page.wait_for_selector("#turns li:has-text('synth')")
        assert page.get_attribute("#graph g.node[data-node='synth']", "data-status") == "succeeded"
    finally:
        server.stop()


LLM_STAGE = """digraph llm {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan it"]
    start -> plan -> done
}
"""


def test_llm_stages_are_coloured_by_status_like_the_other_nodes(server: LiveServer, page: Any) -> None:
    session_id = server.submit(LLM_STAGE)  # the simulate backend: plan succeeds at once
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector(node(page, "done", "succeeded"), state="attached")
    read_fills = """() => ["plan", "done"].map((id) => {
        const shape = document.querySelector(`#graph g.node[data-node="${id}"] :is(path, polygon)`);
        return [shape.tagName, getComputedStyle(shape).fill];
    })"""
    succeeded = "rgb(134, 239, 172)"  # --succeeded
    # fills change with a 0.25 s transition: read them once it has ended (a mid-way colour is no verdict)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"() => ({read_fills})().every(([, fill]) => fill === {succeeded!r})", timeout=5000)
    assert page.evaluate(read_fills) == [["path", succeeded], ["polygon", succeeded]]


def test_the_cancel_button_stops_a_run_of_orchestra_run_in_another_terminal(
    server: LiveServer, page: Any, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "cli.dot").write_text(STUCK, encoding="utf-8")
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "cli.dot", "--quiet"], cwd=project, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:  # the run's session is 1 in this fresh project; the page opens once it runs its node
        wait_until(lambda: server.status("1").get("current_node") == "wait", "the run to reach its command")
        page.goto(f"{server.url}/view/1")
        page.wait_for_selector('#status[data-status="running"]')
        page.wait_for_selector("#cancel", state="visible")
        page.click("#cancel")
        assert runner.wait(30) == 1
        page.wait_for_selector('#status[data-status="cancelled"]')
    finally:
        if runner.poll() is None:
            runner.kill()
        _, said = runner.communicate(timeout=10)
    assert b"session 1 cancelled from the web view" in said
    assert page.is_hidden("#cancel")
    assert server.status("1")["status"] == "cancelled"
