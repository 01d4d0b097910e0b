"""How the pages look and read: screenshots of the session page in both themes for a person to look at (kept in
$ORCHESTRA_WEB_SCREENSHOTS when set), and the browser's accessibility tree: every control of every page has a name."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.orchestra_project import run_json
from tests.support.server import LiveServer
from tests.support.traced_project import traced_project

CONTROLS = {"button", "link", "textbox", "combobox", "checkbox", "searchbox", "listbox", "radio", "spinbutton"}


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    project, _repo = traced_project(tmp_path)
    session_id = run_json("run", "traced.dot", cwd=project)["session_id"]
    server = LiveServer(project)
    yield server, session_id
    server.stop()


def unnamed_controls(page: Any) -> list[str]:
    """The controls of the page's accessibility tree (Chromium's) without an accessible name."""
    session = page.context.new_cdp_session(page)
    nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    session.detach()
    found = []
    for node in nodes:
        role = (node.get("role") or {}).get("value")
        if role in CONTROLS and not node.get("ignored") and not str((node.get("name") or {}).get("value", "")).strip():
            found.append(f"{role} {node.get('backendDOMNodeId')}")
    return found


def test_the_session_page_in_both_themes(traced: tuple[LiveServer, str], browser: Any, tmp_path: Path) -> None:
    server, session_id = traced
    folder = Path(os.environ.get("ORCHESTRA_WEB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shots = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
        page = context.new_page()
        page.goto(f"{server.url}/view/{session_id}")
        page.wait_for_selector('#events li[data-kind="end"]')
        page.wait_for_selector("#costs tbody tr[data-node='plan']")
        page.click("#turns button[data-label='plan · turn 0']")
        page.wait_for_selector('#review[data-state="ready"]')
        assert "Legend" not in page.text_content("#graph") and page.is_visible(".shapes")  # the legend outside
        shots[scheme] = folder / f"session-{scheme}.png"
        page.screenshot(path=str(shots[scheme]), full_page=True)
        assert unnamed_controls(page) == []
        context.close()
    light, dark = (shots[scheme].read_bytes() for scheme in ("light", "dark"))
    assert light.startswith(b"\x89PNG") and len(light) > 50_000 and len(dark) > 50_000 and light != dark


def test_every_control_of_the_board_and_the_launch_page_has_a_name(
    traced: tuple[LiveServer, str], page: Any
) -> None:
    server, session_id = traced
    page.goto(f"{server.url}/")
    page.wait_for_selector(f'#board li[data-session="{session_id}"]')
    assert unnamed_controls(page) == []
    page.goto(f"{server.url}/launch")
    page.wait_for_selector('#pipelines li[data-path="traced.dot"]')
    assert unnamed_controls(page) == []
    page.evaluate("document.querySelector('main').append(document.createElement('button'))")
    assert len(unnamed_controls(page)) == 1  # the check sees one


def test_the_pages_fit_a_phone(traced: tuple[LiveServer, str], browser: Any) -> None:
    server, session_id = traced
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    for path, ready in ((f"/view/{session_id}", "#costs tbody tr"), ("/", "#board li.card"), ("/launch", "#pipelines li")):
        page.goto(server.url + path)
        page.wait_for_selector(ready)
        if path.startswith("/view/"):
            page.click("#turns button[data-label='plan · turn 0']")
            page.wait_for_selector('#review[data-state="ready"]')
        # nothing wider than the screen: tables, diffs and the graph scroll inside their own boxes
        assert page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]") == [390, 390], path
    context.close()
