"""SqliteSessionStore passes the SessionStore contract, on a real file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from tests.contracts.session_store.contract import SessionStoreContract


class TestSqliteSessionStore(SessionStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteSessionStore]:
        store = SqliteSessionStore(tmp_path / ".orchestra" / "orchestra.db")
        yield store
        store.close()


class TestSqliteSessionStoreWithSmallInlineLimit(SessionStoreContract):
    """Every payload goes through the blob table."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SqliteSessionStore]:
        store = SqliteSessionStore(tmp_path / "orchestra.db", inline_limit=0)
        yield store
        store.close()
