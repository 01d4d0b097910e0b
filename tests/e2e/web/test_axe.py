"""axe-core (from npm, tests/a11y) on the web view's pages in chromium: the session page in both themes (its review
panel and Agents live box open), the board and the launch page have no serious or critical accessibility
violation."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.orchestra_project import run_json
from tests.support.server import LiveServer
from tests.support.traced_project import traced_project

AXE = Path(__file__).resolve().parents[2] / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


@pytest.fixture
def axe() -> Path:
    if not AXE.exists():
        reason = f"axe-core is not installed at {AXE}: run make install (needs npm)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return AXE


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    project, _repo = traced_project(tmp_path)
    session_id = run_json("run", "traced.dot", cwd=project)["session_id"]
    server = LiveServer(project)
    yield server, session_id
    server.stop()


def violations(page: Any, axe: Path) -> list[str]:
    """The page's serious and critical axe violations, each as `rule: the nodes' selectors`."""
    page.add_script_tag(path=str(axe))  # the page's CSP allows only its own scripts: the context bypasses it
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        f"{item['id']} ({item['impact']}): {[node['target'] for node in item['nodes']][:5]}"
        for item in found
        if item.get("impact") in SERIOUS
    ]


def test_the_pages_have_no_serious_accessibility_violation(
    traced: tuple[LiveServer, str], browser: Any, axe: Path
) -> None:
    server, session_id = traced
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme, bypass_csp=True)
        page = context.new_page()
        page.goto(f"{server.url}/view/{session_id}")
        page.wait_for_selector('#events li[data-kind="end"]')
        page.wait_for_selector("#costs tbody tr[data-node='plan']")
        page.click("#turns button[data-label='plan · turn 0']")
        page.wait_for_selector('#review[data-state="ready"]')
        found = violations(page, axe)
        assert found == [], "\n".join([scheme, *found])
        for path, ready in (("/", "#board li.card"), ("/launch", "#pipelines li")):
            page.goto(server.url + path)
            page.wait_for_selector(ready)
            assert violations(page, axe) == [], (scheme, path)
        context.close()


def test_the_check_sees_a_violation(traced: tuple[LiveServer, str], browser: Any, axe: Path) -> None:
    server, _session_id = traced
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.goto(f"{server.url}/")
    page.wait_for_selector("#board li.card")
    page.evaluate("document.querySelector('main').append(document.createElement('button'))")
    assert [item for item in violations(page, axe) if item.startswith("button-name")]
    context.close()
