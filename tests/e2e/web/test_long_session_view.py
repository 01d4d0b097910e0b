"""The web view of a long recorded session: the last agent turns at first, earlier ones a page at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from tests.support.long_sessions import build_long_session
from tests.support.web_view import LiveServer, live_server


@pytest.fixture
def long_view(tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    server = live_server(tmp_path)
    with SqliteSessionStore(tmp_path / "project" / ".orchestra" / "orchestra.db") as store:
        session = build_long_session(store, 2_000)
    try:
        yield server, session
    finally:
        server.stop()


def test_the_page_shows_the_last_turns_and_loads_earlier_ones(long_view: tuple[LiveServer, str], page: Any) -> None:
    server, session = long_view
    page.goto(f"{server.url}/view/{session}")
    page.wait_for_selector('#events li[data-kind="end"]')
    first = page.eval_on_selector_all("#turns li:not(.earlier)", "items => items.length")
    assert 50 <= first < 855  # the last 50 agent turns (and node runs), not all 855
    events = page.eval_on_selector_all("#events li", "items => items.length")
    assert events < 400  # the stream replayed the turns the page shows, not the whole session
    page.click("#earlier-turns")
    page.wait_for_selector(f"#turns li:not(.earlier) >> nth={first}")
    assert page.is_visible("#earlier-turns")  # still more before them
