"""The in-memory fake passes the SessionStore contract."""

from __future__ import annotations

from orchestra_core.testing.contracts.session_store import SessionStoreContract
from orchestra_core.testing.session_store import InMemorySessionStore


class TestInMemorySessionStore(SessionStoreContract):
    capabilities = frozenset({"totals", "ranges"})

    def make_store(self) -> InMemorySessionStore:
        return InMemorySessionStore()
