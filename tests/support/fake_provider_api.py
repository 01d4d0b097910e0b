"""Scripted fakes of the model provider HTTP APIs that the real `claude` and `codex` CLIs (and `claude-code-acp`)
talk to, served on loopback so the CLI and ACP agent backends are tested against the real binaries offline
(tests/cli_agents/README.md); the Gemini API's fake, on the same base, is in fake_gemini_api.py.

A script is a list of `Reply` steps; each model request consumes the next one. Requests the CLIs make on the
side (Claude Code's title/quota calls, token counts) are answered without consuming a step and recorded in
`side_requests`. Out of steps: HTTP 500 with a JSON error that says so."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import uuid
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = ["FakeAnthropicAPI", "FakeOpenAIResponsesAPI", "Reply", "ToolUse"]


@dataclass(frozen=True)
class ToolUse:
    """A tool call the fake model makes: `name` as the model calls it (Claude Code: `mcp__orchestra__write_file`;
    Codex: the same, split into namespace `mcp__orchestra` and name `write_file` on the wire)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """One model turn: optional text, then the tool calls (none: the turn ends the conversation). `usage`: the
    tokens the answer reports instead of the estimate (Anthropic's keys: `input_tokens`, `output_tokens`,
    `cache_creation_input_tokens`, `cache_read_input_tokens`; OpenAI's: `input_tokens` with the cached ones
    included, `cached_tokens`, `output_tokens`)."""

    text: str = ""
    tool_calls: Sequence[ToolUse] = ()
    usage: Mapping[str, int] | None = None


class _FakeAPI:
    """A threaded HTTP server on 127.0.0.1:0 answering from a script; a context manager."""

    _prefix = ""

    def __init__(
        self, script: Sequence[Reply], *, model: str = "fake-model", failing_models: Mapping[str, int] | None = None
    ) -> None:
        self._script: deque[Reply] = deque(script)
        self.failing_models = dict(failing_models or {})  # model -> the HTTP status every request for it gets
        self.failed_requests: list[str] = []  # the models of the requests answered with their failing status
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.side_requests: list[tuple[str, dict[str, Any]]] = []
        self.unknown_requests: list[tuple[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def remaining(self) -> int:
        """Script steps not consumed yet."""
        with self._lock:
            return len(self._script)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the fake API is not started (use it as a context manager)"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}"

    def __enter__(self) -> _FakeAPI:
        handler = type("Handler", (_Handler,), {"api": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}{uuid.uuid4().hex[:12]}"

    def next_step(self, body: dict[str, Any]) -> Reply | None:
        """Record a model request and take its step (None when the script is used up)."""
        with self._lock:
            self.requests.append(body)
            return self._script.popleft() if self._script else None

    def record_side(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.side_requests.append((path, body))

    def handle(self, handler: _Handler, method: str, path: str, body: dict[str, Any] | None) -> None:
        raise NotImplementedError


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a CLI closing its keep-alive connection mid-read is not our failure; the tests check the answers


class _Handler(BaseHTTPRequestHandler):
    api: _FakeAPI
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def _serve(self, method: str) -> None:
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: dict[str, Any] | None = None
        if raw:
            try:
                parsed = json.loads(raw)
            except ValueError:
                self.send_json(
                    400, {"error": {"type": "invalid_request_error", "message": "body is not JSON"}}
                )
                return
            body = parsed if isinstance(parsed, dict) else {"_body": parsed}
        # the CLI may go away mid-answer (killed, timed out): nothing to tell it then
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.api.handle(self, method, path, body)

    def send_json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_events(self, events: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """A complete Server-Sent Events stream (`event:` + `data:` per event), then the connection closes."""
        data = b"".join(
            f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode() for name, payload in events
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_data_events(self, chunks: Sequence[Mapping[str, Any]]) -> None:
        """A complete Server-Sent Events stream of unnamed `data:` events (Google's `alt=sse`)."""
        data = b"".join(f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in chunks)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self, method: str, path: str) -> None:
        with self.api._lock:
            self.api.unknown_requests.append((method, path))
        self.send_json(
            404, {"error": {"type": "not_found_error", "message": f"fake API: no {method} {path}"}}
        )


def _out_of_steps(api: _FakeAPI) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": f"fake API: the script is used up (request {len(api.requests)} of a {len(api.requests) - 1}-step script)",
        },
    }


def _usage_tokens(body: Mapping[str, Any]) -> int:
    """A stable token count for a request: its JSON size in 4-character tokens."""
    return max(1, len(json.dumps(body, sort_keys=True)) // 4)


class FakeAnthropicAPI(_FakeAPI):
    """The Anthropic Messages API as Claude Code uses it: POST /v1/messages (SSE when `stream`, else JSON),
    POST /v1/messages/count_tokens. `base_url` is what ANTHROPIC_BASE_URL takes."""

    def __enter__(self) -> FakeAnthropicAPI:
        super().__enter__()
        return self

    @staticmethod
    def is_side_request(body: Mapping[str, Any]) -> bool:
        """Claude Code's own small requests (quota probe, title generation): not streamed, or a 1-token answer,
        or offering no tools (an agent turn always has Orchestra's MCP tools; the Claude Agent SDK's interactive
        sessions, as claude-code-acp runs them, ask a streamed tool-less question about the git history at start).
        Its agent loop always streams (`-p` with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 made no side
        request at all in 2.1.332; this keeps a stray one from eating a step)."""
        return not body.get("stream") or body.get("max_tokens") == 1 or not body.get("tools")

    def handle(self, handler: _Handler, method: str, path: str, body: dict[str, Any] | None) -> None:
        if method == "POST" and path == "/v1/messages/count_tokens":
            self.record_side(path, body or {})
            handler.send_json(200, {"input_tokens": _usage_tokens(body or {})})
            return
        if method != "POST" or path != "/v1/messages":
            handler.not_found(method, path)
            return
        body = body or {}
        streaming = bool(body.get("stream"))
        failing = self.failing_models.get(str(body.get("model")))
        if failing is not None:
            with self._lock:
                self.failed_requests.append(str(body.get("model")))
            error = {"type": "overloaded_error" if failing >= 500 else "not_found_error", "message": "Unavailable"}
            handler.send_json(failing, {"type": "error", "error": error})
            return
        if self.is_side_request(body):
            self.record_side(path, body)
            reply = Reply(text="Fake side reply")
        else:
            step = self.next_step(body)
            if step is None:
                handler.send_json(500, _out_of_steps(self))
                return
            reply = step
        message_id = self.new_id("msg_fake")
        model = str(body.get("model") or self.model)
        blocks = self._blocks(reply)
        stop_reason = "tool_use" if reply.tool_calls else "end_turn"
        input_tokens = _usage_tokens(body)
        output_tokens = max(1, sum(len(json.dumps(block)) for block in blocks) // 4)
        usage = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **(reply.usage or {}),
        }
        if not streaming:
            handler.send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        handler.send_events(list(self._events(message_id, model, blocks, stop_reason, usage)))

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": self.new_id("toolu_fake"),
                    "name": call.name,
                    "input": dict(call.arguments),
                }
            )
        return blocks

    @staticmethod
    def _events(
        message_id: str, model: str, blocks: list[dict[str, Any]], stop_reason: str, usage: Mapping[str, int]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        start_usage = {**usage, "output_tokens": 1}
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield "message_stop", {"type": "message_stop"}


class FakeOpenAIResponsesAPI(_FakeAPI):
    """The OpenAI Responses API as Codex uses it: POST /v1/responses, answered as an SSE stream.
    `base_url` (ending in /v1) is what a Codex model provider's `base_url` takes."""

    _prefix = "/v1"

    def __enter__(self) -> FakeOpenAIResponsesAPI:
        super().__enter__()
        return self

    def handle(self, handler: _Handler, method: str, path: str, body: dict[str, Any] | None) -> None:
        if method != "POST" or path != "/v1/responses":
            handler.not_found(method, path)
            return
        body = body or {}
        step = self.next_step(body)
        if step is None:
            handler.send_json(500, _out_of_steps(self))
            return
        response_id = self.new_id("resp_fake")
        model = str(body.get("model") or self.model)
        items = self._items(step)
        given = step.usage or {}
        input_tokens = given.get("input_tokens", _usage_tokens(body))
        output_tokens = given.get("output_tokens", max(1, len(json.dumps(items)) // 4))
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        response = {
            "id": response_id,
            "object": "response",
            "model": model,
            "status": "in_progress",
            "output": [],
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": response})
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        done = {**response, "status": "completed", "output": items, "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        for number, (_name, payload) in enumerate(events):
            payload["sequence_number"] = number
        handler.send_events(events)

    def _items(self, reply: Reply) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if reply.text:
            items.append(
                {
                    "type": "message",
                    "id": self.new_id("msg_fake"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for call in reply.tool_calls:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self.new_id("fc_fake"),
                "call_id": self.new_id("call_fake"),
                "status": "completed",
                "arguments": json.dumps(dict(call.arguments)),
            }
            parts = call.name.split("__", 2)
            if len(parts) == 3 and parts[0] == "mcp":  # mcp__<server>__<tool>: Codex's namespaced MCP tools
                item["namespace"] = f"mcp__{parts[1]}"
                item["name"] = parts[2]
            else:
                item["name"] = call.name
            items.append(item)
        return items
