"""For a server without a token: requests a page of another site makes through the user's browser, refused.
A request whose Host is not a loopback name (DNS rebinding) and a state-changing request from another origin
(CSRF). Without them a page the user visits could start a pipeline, that is run commands. (With a token, a
state-changing request needs the Authorization header, which no other site's page can send.)"""

from __future__ import annotations

import ipaddress
import json

from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or `localhost`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The name in a Host header (or an origin's authority) without its port: `[::1]:80` -> `[::1]`."""
    if host_header.startswith("["):
        return host_header.partition("]")[0] + "]"
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header


class SameOriginGuard:
    """Refuses (403) a request whose Host header is not a loopback name, and a state-changing one whose Origin
    is another site."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            reason = self._refusal(scope)
            if reason is not None:
                body = json.dumps({"error": reason}).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 403, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> str | None:
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        if not is_loopback(host_name(host)):
            return f"Host {host!r} is not a loopback name (a server without a token answers only those)"
        origin = headers.get(b"origin")
        if scope.get("method") in SAFE_METHODS or origin is None:
            return None
        if origin.decode("latin-1").partition("://")[2] != host:
            return f"a {scope.get('method')} from another origin ({origin.decode('latin-1')}) is refused"
        return None
