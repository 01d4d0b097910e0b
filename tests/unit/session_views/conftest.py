"""Session views are read back from the in-memory fake (on a real and on a frozen clock), a real SQLite file and
CXDB (the protocol-faithful fake server on loopback).

The frozen clock stamps every turn and fork with the same instant, so telling a fork's own turns from its
inherited ones must fall back on the parent's history.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.cxdb_server import FakeCxdbServer


@pytest.fixture(params=["memory", "frozen-clock", "sqlite", "cxdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "cxdb":
        with FakeCxdbServer() as server:
            cxdb = CxdbSessionStore(server.addr, server.url)
            yield cxdb
            cxdb.close()
        return
    opened: SessionStore
    if request.param == "memory":
        opened = InMemorySessionStore()
    elif request.param == "frozen-clock":
        opened = InMemorySessionStore(ManualClock())
    else:
        opened = SqliteSessionStore(tmp_path / "orchestra.db")
    yield opened
    opened.close()
