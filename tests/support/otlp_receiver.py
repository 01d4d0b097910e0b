"""An OTLP/HTTP trace receiver on loopback for tests: decodes each `ExportTraceServiceRequest` it gets (with
opentelemetry-proto, which the exporter depends on) back into Orchestra's Span records."""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attrs import frozen
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from orchestra_core.model.spans import (
    AttributeValue,
    Span,
    SpanContext,
    SpanEvent,
    SpanKind,
    SpanLink,
    SpanStatus,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KINDS = {trace_pb2.Span.SPAN_KIND_INTERNAL: SpanKind.INTERNAL, trace_pb2.Span.SPAN_KIND_CLIENT: SpanKind.CLIENT}
_STATUSES = {
    trace_pb2.Status.STATUS_CODE_UNSET: SpanStatus.UNSET,
    trace_pb2.Status.STATUS_CODE_OK: SpanStatus.OK,
    trace_pb2.Status.STATUS_CODE_ERROR: SpanStatus.ERROR,
}


@frozen
class ReceivedSpan:
    """A span as the collector got it, with its resource's and scope's names."""

    span: Span
    resource: dict[str, AttributeValue]
    scope: str

    @property
    def name(self) -> str:
        return self.span.name

    @property
    def attributes(self) -> dict[str, AttributeValue]:
        return dict(self.span.attributes)


@frozen
class ReceivedRequest:
    """One POST: its path, headers (lower-case names) and decoded body."""

    path: str
    headers: dict[str, str]
    body: ExportTraceServiceRequest


class OtlpReceiver:
    """A collector's OTLP/HTTP endpoint (`url`, POST `/v1/traces`) in a thread; answers `status` (200 by default).

    Use it as a context manager; `spans()` lists what it decoded so far.
    """

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return None

            def do_GET(self) -> None:  # `/spans`: how many spans came (for a receiver in another process)
                body = str(len(receiver.spans())).encode()
                self.send_response(200 if self.path == "/spans" else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver._lock:
                    receiver.requests.append(ReceivedRequest(self.path, headers, request))
                answer = ExportTraceServiceResponse().SerializeToString() if receiver.status == 200 else b""
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[ReceivedSpan]:
        """Every span received so far, in the order they came."""
        with self._lock:
            bodies = [request.body for request in self.requests]
        return [span for body in bodies for span in decode(body)]

    def wait_for(self, check: Callable[[list[ReceivedSpan]], bool], timeout: float = 30) -> list[ReceivedSpan]:
        """The spans, once `check` holds for them (a readiness wait, not a timing assertion)."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if check(spans) or time.monotonic() > deadline:
                return spans
            time.sleep(0.05)


def decode(request: ExportTraceServiceRequest) -> list[ReceivedSpan]:
    """The spans of one request as Span records."""
    found = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(ReceivedSpan(to_span(span), resource, scope_spans.scope.name))
    return found


def to_span(span: trace_pb2.Span) -> Span:
    """A protobuf span as the Span record it was made from."""
    parent = SpanContext(_trace_id(span.trace_id), _span_id(span.parent_span_id)) if span.parent_span_id else None
    return Span(
        name=span.name,
        context=SpanContext(_trace_id(span.trace_id), _span_id(span.span_id)),
        parent=parent,
        start=_moment(span.start_time_unix_nano),
        end=_moment(span.end_time_unix_nano),
        attributes=_attributes(span.attributes),
        kind=_KINDS[span.kind],
        status=_STATUSES[span.status.code],
        status_message=span.status.message,
        events=tuple(
            SpanEvent(event.name, _moment(event.time_unix_nano), _attributes(event.attributes)) for event in span.events
        ),
        links=tuple(
            SpanLink(SpanContext(_trace_id(link.trace_id), _span_id(link.span_id)), _attributes(link.attributes))
            for link in span.links
        ),
    )


def _attributes(pairs: Any) -> dict[str, AttributeValue]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> AttributeValue:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(item.string_value for item in value.array_value.values)
    if kind is None:
        raise AssertionError("an attribute without a value")
    found: AttributeValue = getattr(value, kind)
    return found


def _trace_id(raw: bytes) -> int:
    assert len(raw) == 16, raw
    return int.from_bytes(raw, "big")


def _span_id(raw: bytes) -> int:
    assert len(raw) == 8, raw
    return int.from_bytes(raw, "big")


def _moment(nanos: int) -> datetime:
    return _EPOCH + timedelta(microseconds=nanos // 1000)


def hex_trace(trace_id: int) -> str:
    """A trace id as Jaeger and Tempo show it."""
    return f"{trace_id:032x}"


def serve() -> None:
    """A receiver as a process of its own: prints its URL, then serves until its standard input closes."""
    import sys

    with OtlpReceiver() as receiver:
        print(receiver.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    serve()
