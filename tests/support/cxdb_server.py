"""A protocol-faithful fake CXDB server (strongdm/cxdb c7bab7c as PROTOCOL.md describes it) on loopback.

Binary TCP (writes) and HTTP GET (reads, plus the bundle PUT), real sockets, server threads. The quirks
are kept: handler errors drop the connection without an ERROR frame (only unknown message types get one),
the first turn has depth 0, ids are JSON strings, POST routes are 404 `route`, the idempotency key is
ignored, an explicit parent may live anywhere, typed views of unregistered types are 424 for the page.
`faults` lets a test drop the connection around an append.
"""

from __future__ import annotations

import threading

from tests.support.cxdb_binary import BinaryServer
from tests.support.cxdb_http import start_http
from tests.support.cxdb_state import FakeCxdbState, Faults


class FakeCxdbServer:
    """Both listeners on 127.0.0.1 with ephemeral ports; `addr` and `url` are what the adapter takes."""

    def __init__(self) -> None:
        self.state = FakeCxdbState()
        self._binary = BinaryServer(self.state)
        self._http, self.registry = start_http(self.state)
        self._thread = threading.Thread(target=self._binary.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self._binary.server_address[1]}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def faults(self) -> Faults:
        return self.state.faults

    def stop(self) -> None:
        self._binary.shutdown()
        self._binary.server_close()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> FakeCxdbServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
