"""The Tracer port over OTLP/HTTP: spans queue in memory and a background thread posts them in batches through
OpenTelemetry's OTLP exporter (the `otel` extra). A collector that is down, slow or refusing costs the run
nothing but one warning: exports never block it, and the end of a run waits for its last spans only so long.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, Status, StatusCode, TraceFlags
from opentelemetry.trace import SpanContext as OtelSpanContext
from opentelemetry.trace import SpanKind as OtelSpanKind

from orchestra_adapters.telemetry.export_settings import TraceExport
from orchestra_core.model.spans import Span, SpanContext, SpanKind, SpanStatus

log = logging.getLogger("orchestra.telemetry")
BATCH_SIZE = 512  # spans per request
MAX_QUEUED = 50_000  # spans held while the collector is slow; older ones are dropped beyond it
GATHER_S = 1.0  # how long the first span of a batch waits for others
DEFAULT_SERVICE = "orchestra"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KINDS = {SpanKind.INTERNAL: OtelSpanKind.INTERNAL, SpanKind.CLIENT: OtelSpanKind.CLIENT}
_CODES = {SpanStatus.UNSET: StatusCode.UNSET, SpanStatus.OK: StatusCode.OK, SpanStatus.ERROR: StatusCode.ERROR}
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


class OtlpTracer:
    """Sends spans to an OTLP/HTTP collector (Jaeger, Tempo, Honeycomb, an OpenTelemetry Collector, ...).

    Args:
        export: The destination (`trace_export`).
        warn: Says, once per tracer, that spans did not get through and why (default: a logging warning).
    """

    def __init__(self, export: TraceExport, *, warn: Callable[[str], None] | None = None) -> None:
        _quiet_opentelemetry()
        self._changed = threading.Condition()  # the queue, a batch sent, a flush asked, the collector failing
        self._health = _Health(export.shown_url, warn or log.warning, self._wake)
        self._exporter = OTLPSpanExporter(
            endpoint=export.url,
            headers=dict(export.headers) or None,
            timeout=max(export.flush_timeout, 1.0),
            session=_WatchedSession(self._health),
        )
        self._resource = _resource(export.service_name)
        self._scope = InstrumentationScope("orchestra", _version())
        self._queue: deque[Span] = deque()
        self._sending = 0
        self._flushing = 0
        self._lost = 0
        self._closed = False
        self._thread = threading.Thread(target=self._send_batches, name="orchestra-otlp", daemon=True)
        self._thread.start()

    def export(self, span: Span) -> None:
        with self._changed:
            if self._closed:
                return
            if len(self._queue) >= MAX_QUEUED:
                self._queue.popleft()
                self._lost += 1
                self._health.say_once(f"more than {MAX_QUEUED} spans waited to be sent; the oldest were dropped")
            self._queue.append(span)
            if len(self._queue) >= BATCH_SIZE:
                self._changed.notify_all()

    def flush(self, timeout_s: float) -> bool:
        """Wait for the queue to be sent, at most `timeout_s`; give up at once when the collector is failing
        (it was warned about). True when every span since the last flush was delivered."""
        with self._changed:
            self._flushing += 1
            self._changed.notify_all()
            try:
                self._changed.wait_for(lambda: self._idle() or self._health.failing or self._closed, timeout_s)
                delivered = self._idle() and self._lost == 0
                if not delivered and not self._health.failing and not self._closed:
                    waiting = len(self._queue) + self._sending
                    self._health.say_once(f"{waiting} spans were not sent within {timeout_s:g}s")
                self._lost = 0
                return delivered
            finally:
                self._flushing -= 1

    def close(self) -> None:
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
        self._exporter.shutdown()  # ends a retry's backoff at once
        self._thread.join(timeout=1.0)

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _idle(self) -> bool:
        return not self._queue and not self._sending

    def _send_batches(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            delivered = self._send(batch)
            with self._changed:
                self._sending = 0
                if not delivered:
                    self._lost += len(batch)
                self._changed.notify_all()

    def _next_batch(self) -> list[Span] | None:
        """The next spans to send, once there are enough, a flush asks, or the first has waited GATHER_S."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._queue) or self._closed)
            if self._closed:
                return None
            self._changed.wait_for(
                lambda: len(self._queue) >= BATCH_SIZE or self._flushing > 0 or self._closed, GATHER_S
            )
            if self._closed:
                return None
            batch = [self._queue.popleft() for _ in range(min(BATCH_SIZE, len(self._queue)))]
            self._sending = len(batch)
            return batch

    def _send(self, batch: list[Span]) -> bool:
        try:
            result = self._exporter.export([self._readable(span) for span in batch])
        except Exception as error:  # the exporter's own failure: the run never sees it
            self._health.failed(f"{type(error).__name__}: {error}")
            return False
        if result is not SpanExportResult.SUCCESS:
            self._health.failed("the export failed")
            return False
        return True

    def _readable(self, span: Span) -> ReadableSpan:
        """The span as OpenTelemetry's SDK hands spans to exporters."""
        failed = span.status is SpanStatus.ERROR  # OpenTelemetry keeps a description for errors only
        status = Status(_CODES[span.status], (span.status_message or None) if failed else None)
        return ReadableSpan(
            name=span.name,
            context=_context(span.context),
            parent=_context(span.parent) if span.parent is not None else None,
            resource=self._resource,
            attributes=dict(span.attributes),
            events=[Event(event.name, dict(event.attributes), _nanos(event.timestamp)) for event in span.events],
            links=[Link(_context(link.context), dict(link.attributes)) for link in span.links],
            kind=_KINDS[span.kind],
            status=status,
            start_time=_nanos(span.start),
            end_time=_nanos(span.end),
            instrumentation_scope=self._scope,
        )


class _Health:
    """Whether the collector answers; the first failure is said once."""

    def __init__(self, shown_url: str, warn: Callable[[str], None], on_failure: Callable[[], None]) -> None:
        self._shown_url = shown_url
        self._warn = warn
        self._on_failure = on_failure
        self._warned = False
        self._lock = threading.Lock()
        self.failing = False

    def failed(self, reason: str) -> None:
        """The collector failed a request (or could not be reached): flushes stop waiting for it."""
        with self._lock:
            self.failing = True
        self._on_failure()
        self.say_once(reason)

    def say_once(self, reason: str) -> None:
        with self._lock:
            first, self._warned = not self._warned, True
        if first:
            self._warn(
                f"orchestra: traces are not reaching {self._shown_url} ({reason}); the run goes on, its spans are "
                "dropped (telemetry in docs/running.md)"
            )

    def ok(self) -> None:
        with self._lock:
            self.failing = False


class _WatchedSession(requests.Session):
    """The exporter's HTTP session, telling the tracer how each request went (the exporter only logs it)."""

    def __init__(self, health: _Health) -> None:
        super().__init__()
        self._health = health

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            response = super().request(*args, **kwargs)
        except requests.RequestException as error:
            self._health.failed(_reason(error))
            raise
        if response.status_code >= 400:
            self._health.failed(f"HTTP {response.status_code} {response.reason}".strip())
        else:
            self._health.ok()
        return response


def _quiet_opentelemetry() -> None:
    """OpenTelemetry's own log lines (each retry of an export) stay out of the console: the tracer warns once.
    An application that configured logging still gets them."""
    logger = logging.getLogger("opentelemetry")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _reason(error: requests.RequestException) -> str:
    if isinstance(error, requests.Timeout):
        return "no answer in time"
    found = _ERRNO.search(str(error))
    if found:
        return found.group(1).strip().lower()
    return type(error).__name__


def _resource(service_name: str | None) -> Resource:
    """service.name: the file's, else OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES), else `orchestra`."""
    attributes: dict[str, str] = {SERVICE_VERSION: _version()}
    if service_name:
        attributes[SERVICE_NAME] = service_name
    resource = Resource.create(attributes)
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE}))
    return resource


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("orchestra")
    except PackageNotFoundError:
        return "unknown"


def _context(context: SpanContext) -> OtelSpanContext:
    return OtelSpanContext(context.trace_id, context.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))


def _nanos(moment: datetime) -> int:
    """Nanoseconds since the epoch, exactly (a float timestamp would lose the microseconds)."""
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000
