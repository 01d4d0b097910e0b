"""Every recorder test runs against the in-memory fake and a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.testing.session_store import InMemorySessionStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    opened: SessionStore = (
        InMemorySessionStore() if request.param == "memory" else SqliteSessionStore(tmp_path / "orchestra.db")
    )
    yield opened
    opened.close()
