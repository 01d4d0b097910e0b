"""A webhook receiver on loopback for tests of notifications: a threaded HTTP server that records every request
(path, headers, exact body bytes) and answers with scripted statuses."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attrs import frozen


@frozen
class Received:
    """One request the receiver got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def signed_with(self, secret: str) -> bool:
        """Whether `X-Orchestra-Signature` is `sha256=` + the HMAC-SHA256 of the exact body with `secret`."""
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("x-orchestra-signature", ""), expected)


class WebhookReceiver:
    """Records requests; answers each with the next of `statuses` (the last one repeats), after `delay_s`.

    Attributes:
        url: `http://127.0.0.1:PORT/hooks/orchestra`.
    """

    def __init__(self, statuses: Sequence[int] = (200,), delay_s: float = 0.0) -> None:
        self._statuses = list(statuses) or [200]
        self._delay_s = delay_s
        self._received: list[Received] = []
        self._answered = 0
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                status = receiver._record(Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if receiver._delay_s:
                    time.sleep(receiver._delay_s)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks/orchestra"
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook-receiver", daemon=True)

    def _record(self, received: Received) -> int:
        with self._changed:
            self._received.append(received)
            status = self._statuses[min(self._answered, len(self._statuses) - 1)]
            self._answered += 1
            self._changed.notify_all()
            return status

    @property
    def received(self) -> list[Received]:
        with self._changed:
            return list(self._received)

    def events(self) -> list[str]:
        """The `event` of every JSON body received, in order."""
        return [request.json().get("event") for request in self.received]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """Until `count` requests arrived (or `timeout`); what arrived."""
        with self._changed:
            self._changed.wait_for(lambda: len(self._received) >= count, timeout=timeout)
            return list(self._received)

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def webhook_receiver(statuses: Sequence[int] = (200,), delay_s: float = 0.0) -> Iterator[WebhookReceiver]:
    """A started receiver, stopped afterwards."""
    receiver = WebhookReceiver(statuses, delay_s).start()
    try:
        yield receiver
    finally:
        receiver.stop()
