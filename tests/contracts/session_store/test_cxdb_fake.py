"""CxdbSessionStore against the protocol-faithful fake CXDB server passes the SessionStore contract."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from tests.contracts.session_store.contract import SessionStoreContract
from tests.support.cxdb_server import FakeCxdbServer


class TestCxdbSessionStoreOnFakeServer(SessionStoreContract):
    @pytest.fixture
    def store(self) -> Iterator[CxdbSessionStore]:
        with FakeCxdbServer() as server:
            store = CxdbSessionStore(server.addr, server.url)
            yield store
            store.close()
