"""SqliteSessionStore passes the SessionStore contract, on a real file."""

from __future__ import annotations

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.testing.contracts.session_store import SessionStoreContract


class TestSqliteSessionStore(SessionStoreContract):
    capabilities = frozenset({"totals", "ranges"})

    def make_store(self) -> SqliteSessionStore:
        return SqliteSessionStore(self.tmp / ".orchestra" / "orchestra.db")


class TestSqliteSessionStoreWithSmallInlineLimit(SessionStoreContract):
    """Every payload goes through the blob table."""

    capabilities = frozenset({"totals", "ranges"})

    def make_store(self) -> SqliteSessionStore:
        return SqliteSessionStore(self.tmp / "orchestra.db", inline_limit=0)
