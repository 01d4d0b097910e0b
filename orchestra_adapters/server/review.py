"""The endpoints a reviewer reads a session by: its diffs (a turn's with the turn, a node's, the whole session's),
a file at one of its commits, and where its time and money went (per node, totals, the Gantt's bars)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from orchestra_adapters.server.service import PipelineService, RequestError
from orchestra_adapters.server.session_index import SessionIndexes


def routes(service: PipelineService) -> list[Route]:
    """`GET /sessions/{id}/diff`, `/sessions/{id}/file` and `/sessions/{id}/costs`."""
    endpoints = _Review(service)
    return [
        Route("/sessions/{id}/diff", endpoints.diff, methods=["GET"]),
        Route("/sessions/{id}/file", endpoints.file, methods=["GET"]),
        Route("/sessions/{id}/costs", endpoints.costs, methods=["GET"]),
    ]


def _param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    if value is not None and (not value or len(value) > 4096 or "\x00" in value):
        raise RequestError(400, f"{name} must be a non-empty value")
    return value


class _Review:
    def __init__(self, service: PipelineService) -> None:
        self.service = service
        self.indexes = SessionIndexes()

    async def diff(self, request: Request) -> Response:
        from orchestra_adapters.server import diffs

        session_id = request.path_params["id"]
        turn, node, path = _param(request, "turn"), _param(request, "node"), _param(request, "path")
        if turn is not None and node is not None:
            raise RequestError(400, "give turn=TURN or node=NODE (or neither: the whole session), not both")
        document: dict[str, Any]
        if turn is not None:
            document = await run_in_threadpool(diffs.turn_diff, self.service, session_id, turn, path)
        elif node is not None:
            document = await run_in_threadpool(diffs.node_diff, self.service, self.indexes, session_id, node, path)
        else:
            document = await run_in_threadpool(diffs.session_diff, self.service, session_id, path)
        return JSONResponse(document)

    async def file(self, request: Request) -> Response:
        from orchestra_adapters.server import diffs

        repo = request.query_params.get("repo", "")  # empty: a single-repo record's only repo
        sha, path = _param(request, "sha"), _param(request, "path")
        if sha is None or path is None:
            raise RequestError(400, "give repo=REPO, sha=SHA and path=PATH")
        text = await run_in_threadpool(diffs.file_text, self.service, request.path_params["id"], repo, sha, path)
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                   "Content-Security-Policy": "default-src 'none'; sandbox"}
        return PlainTextResponse(text, headers=headers)

    async def costs(self, request: Request) -> Response:
        from orchestra_adapters.server.diffs import session_store

        session_id = request.path_params["id"]

        def read() -> dict[str, Any]:
            store = session_store(self.service, session_id)
            return self.indexes.read(store, session_id, lambda index: index.to_json())

        return JSONResponse(await run_in_threadpool(read))
