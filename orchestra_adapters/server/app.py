"""The Starlette application of `orchestra serve`: the pipeline endpoints of Attractor 9.5 and the session
views, JSON in and out, behind an optional bearer token."""

from __future__ import annotations

import hmac
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from orchestra_adapters.server import chat, pages, renderers, review, views
from orchestra_adapters.server.body import json_object
from orchestra_adapters.server.launch import PipelineCatalog
from orchestra_adapters.server.origin import SameOriginGuard
from orchestra_adapters.server.questions import UnknownAnswerError
from orchestra_adapters.server.runs import ServerRun
from orchestra_adapters.server.service import PipelineService, RequestError
from orchestra_adapters.server.sse import run_events, store_events

MAX_BODY_BYTES = 1 << 20


def create_app(service: PipelineService, *, token: str | None = None) -> Starlette:
    """The server's ASGI app over `service`; with `token`, every request needs `Authorization: Bearer <token>`;
    without, it refuses other sites' pages (a Host that is not a loopback name, a POST from another Origin)."""
    endpoints = _Endpoints(service)
    routes = [
        Route("/pipelines", endpoints.submit, methods=["POST"]),
        Route("/pipelines", endpoints.pipelines, methods=["GET"]),
        Route("/pipelines/{id}", endpoints.status, methods=["GET"]),
        Route("/pipelines/{id}/events", endpoints.events, methods=["GET"]),
        Route("/pipelines/{id}/cancel", endpoints.cancel, methods=["POST"]),
        Route("/pipelines/{id}/graph", endpoints.graph, methods=["GET"]),
        Route("/pipelines/{id}/questions", endpoints.questions, methods=["GET"]),
        Route("/pipelines/{id}/questions/{qid}/answer", endpoints.answer, methods=["POST"]),
        Route("/pipelines/{id}/checkpoint", endpoints.checkpoint, methods=["GET"]),
        Route("/pipelines/{id}/context", endpoints.context, methods=["GET"]),
        Route("/sessions", endpoints.sessions, methods=["GET"]),
        Route("/sessions/{id}", endpoints.session, methods=["GET"]),
        *pages.routes(),
        *chat.routes(service),
        *review.routes(service),
        *renderers.routes(),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error, RequestError: _request_error, Exception: _internal_error},
    )
    app.state.service = service
    app.state.token = token or None
    if token:
        app.add_middleware(BearerToken, token=token)
    else:
        app.add_middleware(SameOriginGuard)
    return app


def error(status: int, message: str, **details: Any) -> JSONResponse:
    """A JSON error answer: `{"error": message, ...details}`."""
    return JSONResponse({"error": message, **details}, status_code=status)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    messages = {404: "no such endpoint", 405: "method not allowed"}
    headers = dict(exc.headers) if exc.headers else None
    response = error(exc.status_code, messages.get(exc.status_code, str(exc.detail)))
    if headers:
        response.headers.update(headers)
    return response


async def _request_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestError)
    return error(exc.status, str(exc), **exc.details)


async def _internal_error(_request: Request, exc: Exception) -> Response:
    return error(500, f"internal error: {type(exc).__name__}")


class BearerToken:
    """Refuses (401) every request without `Authorization: Bearer <token>`; compares in constant time. The web
    view's pages and event stream also take it as a browser can send it (`pages.browser_token_allows`); the
    CXDB renderer modules (code, no data) need none."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            allowed = (
                hmac.compare_digest(given, self._expected)
                or pages.browser_token_allows(scope, self._token)
                or (scope.get("method") == "GET" and renderers.is_public(scope.get("path", "")))
            )
            if not allowed:
                response = error(401, "missing or wrong bearer token (Authorization: Bearer <token>)")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _Endpoints:
    def __init__(self, service: PipelineService) -> None:
        self.service = service
        self.catalog = PipelineCatalog()

    def _cancel_elsewhere(self, session_id: str) -> None:
        from orchestra_adapters.console.cancel_watch import NotRunningError

        views.pipeline_status(self.service, session_id)  # 404 for an unknown session
        try:
            self.service.cancel_elsewhere(session_id, "the web view")
        except NotRunningError as error:
            raise RequestError(409, str(error)) from None

    def _run(self, request: Request) -> ServerRun:
        """The run started here with the request's id (404 otherwise; 409 for a session run elsewhere)."""
        session_id = request.path_params["id"]
        run = self.service.run_of(session_id)
        if run is None:
            views.pipeline_status(self.service, session_id)  # 404 for an unknown session
            raise RequestError(409, f"session {session_id} is not running in this server")
        return run

    async def submit(self, request: Request) -> Response:
        body = await json_object(request, MAX_BODY_BYTES)
        run = await run_in_threadpool(self.service.submit, body)
        return JSONResponse({"id": run.session_id, "status": run.status}, status_code=201)

    async def pipelines(self, _request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.catalog.listing, self.service))

    async def status(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.pipeline_status, self.service, request.path_params["id"]))

    async def events(self, request: Request) -> Response:
        session_id = request.path_params["id"]
        header = request.headers.get("last-event-id", "").strip()
        run = self.service.run_of(session_id)
        # EventSource sends Last-Event-ID when it reconnects; a page opening a recorded session's stream at the end
        # of what it shows says `?after=TURN` (a run started here numbers its own events).
        last = header or ("0" if run is not None else request.query_params.get("after", "0").strip() or "0")
        if not (last.isascii() and last.isdigit()):  # "²".isdigit() too, which int() refuses
            raise RequestError(400, f"Last-Event-ID {last!r} is not an event id (a number)")
        if run is not None:
            stream = run_events(run, int(last))
        else:
            await run_in_threadpool(views.pipeline_status, self.service, session_id)  # 404 for an unknown session
            after = await run_in_threadpool(views.stream_start, self.service, session_id, last)
            stream = store_events(self.service, session_id, after, reconnected=bool(header))
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    async def cancel(self, request: Request) -> Response:
        session_id = request.path_params["id"]
        run = self.service.run_of(session_id)
        if run is None:  # a run another process runs (`orchestra run`): asked through its attach channel
            await run_in_threadpool(self._cancel_elsewhere, session_id)
            return JSONResponse({"id": session_id, "status": "cancelling"}, status_code=202)
        if not run.cancel():
            raise RequestError(409, f"session {run.session_id} is not running (it ended: {run.status})")
        return JSONResponse({"id": run.session_id, "status": "cancelling"}, status_code=202)

    async def graph(self, request: Request) -> Response:
        legend = request.query_params.get("legend", "true").lower() not in ("false", "0", "no")
        svg = await run_in_threadpool(
            lambda: views.graph_svg(self.service, request.path_params["id"], legend=legend)
        )
        return Response(svg, media_type="image/svg+xml")

    async def questions(self, request: Request) -> Response:
        session_id = request.path_params["id"]
        run = self.service.run_of(session_id)
        if run is None:
            await run_in_threadpool(views.pipeline_status, self.service, session_id)
            return JSONResponse([])
        pending = run.interviewer.pending() if run.interviewer is not None else []
        return JSONResponse([question.to_json() for question in pending])

    async def answer(self, request: Request) -> Response:
        run = await run_in_threadpool(self._run, request)
        body = await json_object(request, MAX_BODY_BYTES)
        reply = body.get("answer")
        if not isinstance(reply, str) or not reply.strip():
            raise RequestError(400, '"answer" must be an option key or label (a non-empty string)')
        question_id = request.path_params["qid"]
        if run.interviewer is None:
            raise RequestError(404, f"no pending question {question_id!r} (the run auto-approves)")
        try:
            chosen = run.interviewer.answer(question_id, reply)
        except KeyError:
            raise RequestError(404, f"no pending question {question_id!r} in session {run.session_id}") from None
        except UnknownAnswerError as exc:
            raise RequestError(400, str(exc)) from None
        return JSONResponse({"id": question_id, "answer": chosen.value, "text": chosen.text})

    async def checkpoint(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.checkpoint_json, self.service, request.path_params["id"]))

    async def context(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(views.context_json, self.service, request.path_params["id"]))

    async def sessions(self, request: Request) -> Response:
        raw = request.query_params.get("limit", "50")
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise RequestError(400, f"limit {raw!r} must be a positive whole number")
        return JSONResponse(await run_in_threadpool(views.sessions_json, self.service, int(raw)))

    async def session(self, request: Request) -> Response:
        query = views.SessionQuery.of(request.query_params)
        document = await run_in_threadpool(views.session_json, self.service, request.path_params["id"], query)
        return JSONResponse(document)
