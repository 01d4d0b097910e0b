"""The fake CXDB server's HTTP side (PROTOCOL.md section 1): one request at a time, GET plus the bundle PUT."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import blake3
import msgpack

from tests.support.cxdb_registry import MissingDescriptor, Registry, RegistryError, project

if TYPE_CHECKING:
    from tests.support.cxdb_state import FakeCxdbState, Turn


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def start_http(state: FakeCxdbState) -> tuple[HTTPServer, Registry]:
    """Serve on an ephemeral loopback port; one request at a time (like tiny_http), keep-alive allowed."""
    registry = Registry()
    handler = type(
        "Handler", (_Handler,), {"state": state, "registry": registry, "one_at_a_time": threading.Lock()}
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server, registry


class _Handler(BaseHTTPRequestHandler):
    state: FakeCxdbState
    registry: Registry
    one_at_a_time: threading.Lock
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        segments = [s for s in parts.path.split("/") if s]  # not percent-decoded, as upstream
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.state.counts["http"] += 1
        try:
            with self.one_at_a_time:
                self._route(method, segments, query, body)
        except HttpError as error:
            self._json(error.status, {"error": {"code": error.status, "message": error.message}})

    def _route(self, method: str, segments: list[str], query: dict[str, str], body: bytes) -> None:
        if method == "GET" and segments == ["healthz"]:
            return self._send(200, b"ok", "text/plain")
        if segments[:3] == ["v1", "registry", "bundles"] and len(segments) == 4:
            if method == "PUT":
                return self._put_bundle(body)
            if method == "GET":
                return self._get_bundle(segments[3])
        if method == "GET" and segments[:3] == ["v1", "registry", "types"] and len(segments) == 6:
            return self._type_version(segments[3], segments[5])
        if method == "GET" and segments == ["v1", "registry", "renderers"]:
            return self._json(200, {"renderers": self.registry.renderer_manifest()})
        if method == "GET" and segments == ["v1", "contexts"]:
            return self._json(200, self._contexts(query))
        if method == "GET" and len(segments) == 4 and segments[:2] == ["v1", "contexts"]:
            if segments[3] == "turns":
                return self._json(200, self._turns(_number(segments[2]), query))
            if segments[3] == "provenance":
                return self._provenance(_number(segments[2]))
        raise HttpError(404, "route")

    def _put_bundle(self, body: bytes) -> None:
        try:
            with self.state.lock:
                created = self.registry.ingest(body)
        except RegistryError as error:
            raise HttpError(422, str(error)) from None
        if not created:
            return self._send(204, b"", None)
        return self._json(201, {"bundle_id": json.loads(body)["bundle_id"]})

    def _get_bundle(self, bundle_id: str) -> None:
        content = self.registry.bundles.get(bundle_id)
        if content is None:
            raise HttpError(404, "bundle")
        etag = f'"{blake3.blake3(content).hexdigest()}"'
        if self.headers.get("If-None-Match") == etag:
            return self._send(304, b"", None, {"ETag": etag})
        return self._send(200, content, "application/json", {"ETag": etag})

    def _type_version(self, type_id: str, version: str) -> None:
        if not version.isdigit():
            raise HttpError(422, "invalid version")
        try:
            fields = self.registry.descriptor(type_id, int(version))
        except MissingDescriptor:
            raise HttpError(404, "type version") from None
        body: dict[str, Any] = {"fields": {str(tag): field for tag, field in fields.items()}}
        renderer = self.registry.renderers.get((type_id, int(version)))
        if renderer is not None:
            body["renderer"] = renderer
        return self._json(200, body)

    def _contexts(self, query: dict[str, str]) -> dict[str, Any]:
        limit = int(query["limit"]) if query.get("limit", "").isdigit() else 20
        with self.state.lock:
            contexts = sorted(self.state.contexts.values(), key=lambda c: c.created_at_ms, reverse=True)[
                :limit
            ]
            items = [self._context_item(context) for context in contexts]
        if "tag" in query:  # applied after the limit, as upstream
            items = [item for item in items if item.get("client_tag") == query["tag"]]
        return {"contexts": items, "count": len(items), "active_sessions": [], "active_tags": []}

    def _context_item(self, context: Any) -> dict[str, Any]:
        session = self.state.sessions.get(context.session_id)
        item: dict[str, Any] = {
            "context_id": str(context.context_id),
            "head_turn_id": str(context.head_turn_id),
            "head_depth": context.head_depth,
            "created_at_unix_ms": context.created_at_ms,
            "is_live": bool(session and session.live),
        }
        tag = (context.metadata or {}).get(1) or context.hello_tag
        if tag:
            item["client_tag"] = tag
        if session is not None:
            item["session_id"] = str(session.session_id)
        return item

    def _provenance(self, context_id: int) -> None:
        context = self.state.contexts.get(context_id)
        provenance = (context.metadata or {}).get(10) if context else None
        return self._json(200, {"context_id": str(context_id), "provenance": provenance})

    def _turns(self, context_id: int, query: dict[str, str]) -> dict[str, Any]:
        limit = int(query["limit"]) if query.get("limit", "").isdigit() else 64
        before = int(query["before_turn_id"]) if query.get("before_turn_id", "").isdigit() else 0
        view = query.get("view", "typed")
        with self.state.lock:
            context = self.state.contexts.get(context_id)
            if context is None:
                raise HttpError(404, "context")
            start = context.head_turn_id
            if before:
                if before not in self.state.turns:
                    raise HttpError(404, "turn")
                start = self.state.turns[before].parent_turn_id  # X itself is excluded; X is not checked
            turns = self.state.chain(start, limit)
            items = [self._turn_item(turn, view, query) for turn in turns]
            meta = {
                "context_id": str(context_id),
                "head_turn_id": str(context.head_turn_id),
                "head_depth": context.head_depth,
                "registry_bundle_id": self.registry.last_bundle_id,
            }
        return {"meta": meta, "turns": items, "next_before_turn_id": str(turns[0].turn_id) if turns else None}

    def _turn_item(self, turn: Turn, view: str, query: dict[str, str]) -> dict[str, Any]:
        item: dict[str, Any] = {
            "turn_id": str(turn.turn_id),
            "parent_turn_id": str(turn.parent_turn_id),
            "depth": turn.depth,
            "declared_type": {"type_id": turn.type_id, "type_version": turn.type_version},
        }
        payload = self.state.blobs[turn.content_hash]
        if view in ("typed", "both"):
            item.update(self._typed(turn, payload, query))
        if view in ("raw", "both"):
            self.state.counts["payloads"] += 1  # turns served with their payload bytes
            item.update(
                {
                    "content_hash_b3": turn.content_hash.hex(),
                    "encoding": turn.encoding,
                    "compression": 0,
                    "uncompressed_len": turn.uncompressed_len,
                }
            )
            render = query.get("bytes_render", "base64")
            if render == "hex":
                item["bytes_hex"] = payload.hex()
            elif render == "len_only":
                item["bytes_len"] = len(payload)
            else:
                item["bytes_b64"] = base64.b64encode(payload).decode()
        return item

    def _typed(self, turn: Turn, payload: bytes, query: dict[str, str]) -> dict[str, Any]:
        try:
            if query.get("type_hint_mode") == "latest":
                version, fields = self.registry.latest(turn.type_id)
            else:
                version, fields = turn.type_version, self.registry.descriptor(turn.type_id, turn.type_version)
        except MissingDescriptor:
            raise HttpError(424, "type descriptor") from None
        try:
            decoded = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception:
            decoded = None
        if not isinstance(decoded, dict):
            raise HttpError(422, "payload is not a msgpack map")
        data, unknown = project(self.registry, fields, decoded, query.get("include_unknown") == "1")
        typed: dict[str, Any] = {
            "decoded_as": {"type_id": turn.type_id, "type_version": version},
            "data": data,
        }
        if unknown is not None:
            typed["unknown"] = unknown
        return typed

    def _json(self, status: int, document: Any) -> None:
        self._send(status, json.dumps(document).encode(), "application/json")

    def _send(
        self, status: int, body: bytes, content_type: str | None, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _number(text: str) -> int:
    if not text.isdigit():
        raise HttpError(422, "invalid id")
    return int(text)
