"""CxdbSessionStore passes the SessionStore contract against the stand-in CXDB server on loopback.

This is the CXDB adapter's contract run in every `make test`; `test_cxdb_real.py` repeats it against a
real server when one is named.
"""

from __future__ import annotations

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from orchestra_core.testing.contracts.session_store import SessionStoreContract
from tests.support.cxdb_server import FakeCxdbServer


class TestCxdbSessionStoreOnFakeServer(SessionStoreContract):
    capabilities = frozenset({"ranges"})

    def make_store(self) -> CxdbSessionStore:
        server = FakeCxdbServer()
        self.add_cleanup(server.stop)
        return CxdbSessionStore(server.addr, server.url)
