"""The web view of `orchestra serve`: its HTML pages and static files (package data under `web/`), their
security headers, and the token cookie that lets a browser page and its event stream in."""

from __future__ import annotations

import hashlib
import hmac
import re
from importlib import resources
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Scope

TOKEN_COOKIE = "orchestra_token"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_JS = "text/javascript; charset=utf-8"
STATIC_TYPES = {
    **{name: _JS for name in ("theme.js", "common.js", "app.js", "board.js", "launch.js", "diff.js", "costs.js", "live.js")},
    "style.css": "text/css; charset=utf-8",
}
# GET requests a browser makes without being able to add an Authorization header: the pages, their static
# files, the event stream (EventSource sets no headers), the commit diffs the CXDB renderers link to and the files
# the diff view links to. Only
# these accept the token cookie.
_COOKIE_PATHS = re.compile(r"^/(?:|launch|view/[^/]+|static/[^/]+|pipelines/[^/]+/events|sessions/[^/]+/file|repos/[^/]+/commits/[^/]+)$")
_PAGE_PATHS = re.compile(r"^/(?:|launch|view/[^/]+)$")


def routes() -> list[Route]:
    """The web view's routes: `/` (the sessions board), `/launch` (start a pipeline), `/view/{id}` (one session),
    `/static/{name}`."""
    return [
        Route("/", _index, methods=["GET"]),
        Route("/launch", _launch_page, methods=["GET"]),
        Route("/view/{id}", _session_page, methods=["GET"]),
        Route("/static/{name}", _static, methods=["GET"]),
    ]


def _web_file(name: str) -> bytes:
    return resources.files("orchestra_adapters.server").joinpath("web", name).read_bytes()


def _security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"  # a ?token= must not leak to other sites
    response.headers["Cache-Control"] = "no-store"
    return response


def _page(request: Request, name: str) -> Response:
    token: str | None = request.app.state.token
    given = request.query_params.get("token")
    if token and given is not None:
        # The token came in the address once: an HttpOnly cookie keeps (a digest of) it for the pages and the
        # event stream; the page's script keeps it in sessionStorage for the Authorization header of its API
        # calls and drops it from the address.
        if not hmac.compare_digest(given.encode(), token.encode()):
            return _security_headers(Response("wrong token\n", status_code=401, media_type="text/plain"))
        response = Response(_web_file(name), media_type="text/html; charset=utf-8")
        response.set_cookie(TOKEN_COOKIE, cookie_value(token), httponly=True, samesite="strict", path="/")
        return _security_headers(response)
    return _security_headers(Response(_web_file(name), media_type="text/html; charset=utf-8"))


async def _index(request: Request) -> Response:
    return _page(request, "index.html")


async def _launch_page(request: Request) -> Response:
    return _page(request, "launch.html")


async def _session_page(request: Request) -> Response:
    return _page(request, "session.html")


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC_TYPES:
        return Response('{"error": "no such file"}', status_code=404, media_type="application/json")
    return _security_headers(Response(_web_file(name), media_type=STATIC_TYPES[name]))


def cookie_value(token: str) -> str:
    """What the cookie holds: a digest of the token (never the token itself, and always cookie-safe)."""
    return hmac.new(token.encode(), b"orchestra web view cookie", hashlib.sha256).hexdigest()


def browser_token_allows(scope: Scope, token: str) -> bool:
    """Whether a request without the Authorization header carries the token as a browser can: the cookie (on
    the pages, their static files and the event stream, GET only) or `?token=` (on the pages only, which then
    set the cookie). Both compared in constant time."""
    if scope.get("method") != "GET":
        return False
    path = scope.get("path", "")
    if _PAGE_PATHS.match(path):
        for given in parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", []):
            if hmac.compare_digest(given.encode(), token.encode()):
                return True
    if not _COOKIE_PATHS.match(path):
        return False
    expected = cookie_value(token).encode()
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            for part in value.split(b";"):
                name, _, given_cookie = part.strip().partition(b"=")
                if name == TOKEN_COOKIE.encode() and hmac.compare_digest(given_cookie, expected):
                    return True
    return False
