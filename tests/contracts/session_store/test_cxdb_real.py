"""The same contract against a real CXDB server, when CXDB_ADDR (host:port) and CXDB_HTTP (base URL) are set."""

from __future__ import annotations

import os

import pytest

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from orchestra_core.testing.contracts.session_store import SessionStoreContract

ADDR = os.environ.get("CXDB_ADDR")
URL = os.environ.get("CXDB_HTTP")

pytestmark = [
    pytest.mark.real_cxdb,
    pytest.mark.skipif(not (ADDR and URL), reason="set CXDB_ADDR and CXDB_HTTP to run against a real CXDB"),
]


class TestCxdbSessionStoreOnRealServer(SessionStoreContract):
    capabilities = frozenset({"ranges"})

    def make_store(self) -> CxdbSessionStore:
        return CxdbSessionStore(str(ADDR), str(URL))
