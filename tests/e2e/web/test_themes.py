"""Light and dark themes: the system's by default, a toggle that overrides it and is remembered (applied before
the page is drawn), and a session page that does not shift its layout as a run's events arrive."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import GATED
from tests.support.web_view import LiveServer, live_server

LIGHT, DARK = "rgb(246, 247, 249)", "rgb(15, 20, 27)"
BACKGROUND = "getComputedStyle(document.body).backgroundColor"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = live_server(tmp_path)
    yield live
    live.stop()


def test_the_system_theme_and_the_toggle_that_overrides_it(server: LiveServer, browser: Any) -> None:
    for scheme, expected in (("light", LIGHT), ("dark", DARK)):
        context = browser.new_context(color_scheme=scheme)
        page = context.new_page()
        page.goto(f"{server.url}/")
        assert page.evaluate(BACKGROUND) == expected
        assert page.text_content("#theme-toggle") == "Theme: auto"
        context.close()

    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    page.goto(f"{server.url}/launch")
    page.click("#theme-toggle")
    assert page.text_content("#theme-toggle") == "Theme: light" and page.evaluate(BACKGROUND) == LIGHT
    page.goto(f"{server.url}/")  # remembered, and applied before the first paint
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert page.evaluate(BACKGROUND) == LIGHT
    page.click("#theme-toggle")
    assert page.text_content("#theme-toggle") == "Theme: dark" and page.evaluate(BACKGROUND) == DARK
    page.click("#theme-toggle")
    assert page.text_content("#theme-toggle") == "Theme: auto" and page.evaluate(BACKGROUND) == DARK  # the system's
    assert page.evaluate("localStorage.getItem('orchestra.theme')") is None
    context.close()


def test_events_arriving_do_not_shift_the_session_page(server: LiveServer, page: Any) -> None:
    session_id = server.submit(GATED)
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector('#questions button[data-answer="S"]')
    page.wait_for_selector("#costs tbody tr[data-node='review']")
    page.wait_for_timeout(500)  # the first drawing settles
    page.evaluate("""() => {
        window.shifts = [];
        new PerformanceObserver((list) => {
            for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.shifts.push(entry.value);
        }).observe({ type: "layout-shift" });
    }""")
    server.post(f"/pipelines/{session_id}/questions/" + server.get(f"/pipelines/{session_id}/questions").json()[0]["id"]
                + "/answer", {"answer": "S"})  # answered elsewhere: the page only follows
    page.wait_for_selector('#status[data-status="success"]')
    page.wait_for_selector("#costs tbody tr[data-node='done']")
    page.wait_for_timeout(800)
    assert sum(page.evaluate("window.shifts")) < 0.05, page.evaluate("window.shifts")
