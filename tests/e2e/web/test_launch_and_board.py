"""Launching from the browser: the pipelines page lists the project's `.dot` files with their goal and compile
result, its form starts a run (--set values, backend, budget) through the same origin and token checks as every
change, and the sessions board sorts sessions into running, waiting, failed and done, with filters and search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.server import GATED, LiveServer, make_project

TOKEN = "launch-secret-token"
HOSTILE = "<img src=x onerror=window.pwned=1><script>window.pwned=2</script>"
TOOL = """digraph tool_run {
    goal="Echo the ticket GOAL"
    start [shape=Mdiamond]; done [shape=Msquare]
    work [shape=parallelogram, tool_command="echo working"]
    start -> work -> done
}
"""
BROKEN = """digraph broken {
    start [shape=Mdiamond]; done [shape=Msquare]
    orphan [shape=parallelogram, tool_command="echo lost"]
    start -> done
}
"""
NAMED = 'digraph "NAME" {\n start [shape=Mdiamond]; done [shape=Msquare]\n start -> done\n}\n'.replace(
    "NAME", HOSTILE.replace('"', "'")
)
FAILING = """digraph failing {
    start [shape=Mdiamond]; done [shape=Msquare]
    boom [shape=parallelogram, tool_command="exit 3"]
    start -> boom -> done
}
"""


def project(root: Path) -> Path:
    make_project(root)
    (root / "tool.dot").write_text(TOOL.replace("GOAL", HOSTILE.replace('"', "'")), encoding="utf-8")
    (root / "flows").mkdir()
    (root / "flows" / "gated.dot").write_text(GATED, encoding="utf-8")
    (root / "flows" / "failing.dot").write_text(FAILING, encoding="utf-8")
    (root / "broken.dot").write_text(BROKEN, encoding="utf-8")
    (root / "named.dot").write_text(NAMED, encoding="utf-8")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "skip.dot").write_text(TOOL, encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skip.dot").write_text(TOOL, encoding="utf-8")
    return root


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(project(tmp_path / "project"), token=TOKEN)
    yield live
    live.stop()


def test_the_launch_page_lists_pipelines_and_starts_one_with_its_settings(server: LiveServer, page: Any) -> None:
    page.goto(f"{server.url}/launch?token={TOKEN}")
    page.wait_for_selector('#pipelines li[data-path="tool.dot"]')
    paths = page.eval_on_selector_all("#pipelines > li", "items => items.map(item => item.dataset.path)")
    # hidden directories and dependencies skipped
    assert paths == ["broken.dot", "flows/failing.dot", "flows/gated.dot", "named.dot", "tool.dot"]
    named = page.query_selector('#pipelines li[data-path="named.dot"] strong')
    assert named.text_content() == HOSTILE.replace('"', "'")  # the graph's name, as text
    tool = page.query_selector('#pipelines li[data-path="tool.dot"]')
    assert HOSTILE.replace('"', "'") in tool.text_content()  # the goal, as text
    assert "valid" in tool.text_content()
    broken = page.query_selector('#pipelines li[data-path="broken.dot"]')
    assert "error" in broken.text_content() and broken.query_selector("button").is_disabled()
    assert page.query_selector_all("main img, main script") == []

    page.click('#pipelines li[data-path="tool.dot"] button')
    assert page.input_value("#pipeline") == "tool.dot"
    page.fill("#set-values", "ticket=ORC-12\nnote=a=b")
    page.select_option("#backend", "simulate")
    page.fill("#max-cost", "5")
    page.click("#start")
    page.wait_for_url(f"{server.url}/view/*")
    session_id = page.url.rsplit("/", 1)[1]
    page.wait_for_selector('#status[data-status="success"]')
    context = server.get(f"/pipelines/{session_id}/context").json()["context"]
    assert context["ticket"] == "ORC-12" and context["note"] == "a=b"
    assert page.evaluate("window.pwned") is None


def test_a_bad_budget_is_refused_with_the_reason_and_starts_nothing(server: LiveServer, page: Any) -> None:
    page.goto(f"{server.url}/launch?token={TOKEN}")
    page.wait_for_selector('#pipelines li[data-path="tool.dot"]')
    page.select_option("#pipeline", "tool.dot")
    page.fill("#max-cost", "lots")
    page.click("#start")
    page.wait_for_selector("#launch-error:not([hidden])")
    assert "max_cost" in page.text_content("#launch-error")
    assert server.get("/sessions").json()["sessions"] == []


def test_starting_a_run_needs_the_token_and_the_same_origin(tmp_path: Path) -> None:
    with_token = LiveServer(project(tmp_path / "a"), token=TOKEN)
    try:
        bare = requests.post(f"{with_token.url}/pipelines", json={"path": "tool.dot"}, timeout=30)
        assert bare.status_code == 401
        assert requests.get(f"{with_token.url}/pipelines", timeout=30).status_code == 401
        # the cookie a page sets lets a browser GET pages, never POST a run
        cookies = requests.get(f"{with_token.url}/launch?token={TOKEN}", timeout=30).cookies
        assert requests.post(f"{with_token.url}/pipelines", json={"path": "tool.dot"}, cookies=cookies,
                             timeout=30).status_code == 401
    finally:
        with_token.stop()
    without = LiveServer(project(tmp_path / "b"))
    try:
        other = requests.post(f"{without.url}/pipelines", json={"path": "tool.dot"},
                              headers={"Origin": "http://evil.example"}, timeout=30)
        assert other.status_code == 403
        assert without.get("/sessions").json()["sessions"] == []
    finally:
        without.stop()


def test_the_board_sorts_sessions_into_columns_with_filters_and_search(server: LiveServer, page: Any) -> None:
    done = server.submit(TOOL.replace("GOAL", "x"))
    failed = server.submit(FAILING)
    waiting = server.submit(GATED)
    named = server.post("/pipelines", {"path": "named.dot"}).json()["id"]
    server.ended(done)
    server.ended(failed)
    server.ended(named)
    page.goto(f"{server.url}/?token={TOKEN}")
    page.wait_for_selector(f'#board [data-column="waiting"] li[data-session="{waiting}"]')
    page.wait_for_selector(f'#board [data-column="done"] li[data-session="{done}"]')
    page.wait_for_selector(f'#board [data-column="failed"] li[data-session="{failed}"]')
    assert page.text_content('#board [data-column="waiting"] .count') == "1"
    title = page.wait_for_selector(f'#board li[data-session="{named}"] .card-title')
    assert title.text_content() == HOSTILE.replace('"', "'")
    assert page.query_selector_all("main img, main script") == [] and page.evaluate("window.pwned") is None

    page.fill("#search", "failing")
    assert page.is_hidden(f'li[data-session="{done}"]') or page.query_selector(f'li[data-session="{done}"]') is None
    assert page.query_selector(f'li[data-session="{failed}"]') is not None
    page.fill("#search", "")
    page.select_option("#filter", "done")
    assert page.is_hidden('#board [data-column="waiting"]') and page.is_visible('#board [data-column="done"]')
    assert "column=done" in page.url
    page.select_option("#filter", "all")

    page.click(f'li[data-session="{waiting}"] a')  # to the session's page, to answer its gate
    page.click('#questions button[data-answer="S"]')
    page.wait_for_selector('#status[data-status="success"]')
    page.goto(f"{server.url}/?column=done")
    page.wait_for_selector(f'#board [data-column="done"] li[data-session="{waiting}"]')
    assert page.input_value("#filter") == "done"
