"""The in-memory fake passes the SessionStore contract."""

from __future__ import annotations

import pytest

from orchestra_core.testing.session_store import InMemorySessionStore
from tests.contracts.session_store.contract import SessionStoreContract


class TestInMemorySessionStore(SessionStoreContract):
    @pytest.fixture
    def store(self) -> InMemorySessionStore:
        return InMemorySessionStore()
