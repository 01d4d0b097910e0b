"""Trace spans as plain records: what a traced run hands its tracer (OpenTelemetry's shape, none of its code).

Ids are integers as OpenTelemetry has them (a 128-bit trace id, 64-bit span ids, never 0). A session's trace id
and its first run's root span id are derived from the session itself (`session_trace`), so a resumed run, in
another process or on another machine, continues the same trace under the same root.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum

from attrs import field, frozen

from orchestra_core.model.immutable import any_tuple, frozen_map

AttributeValue = str | bool | int | float | tuple[str, ...]
"""A span attribute's value: a scalar, or a list of strings (a commit's files)."""


class SpanKind(StrEnum):
    """`client` for a call to another service (a model provider), `internal` for the rest."""

    INTERNAL = "internal"
    CLIENT = "client"


class SpanStatus(StrEnum):
    """`ok` (it did what it was for), `error` (it failed; the span says why) or `unset` (nothing to say)."""

    UNSET = "unset"
    OK = "ok"
    ERROR = "error"


@frozen
class SpanContext:
    """Where a span is: its trace and its own id."""

    trace_id: int
    span_id: int


@frozen
class SpanEvent:
    """Something that happened at one moment of a span (a retry, a warning)."""

    name: str
    timestamp: datetime
    attributes: Mapping[str, AttributeValue] = field(factory=dict, converter=frozen_map)


@frozen
class SpanLink:
    """A span of another trace this one relates to (a replay's original session)."""

    context: SpanContext
    attributes: Mapping[str, AttributeValue] = field(factory=dict, converter=frozen_map)


@frozen(kw_only=True)
class Span:
    """One finished operation of a run: the session, a stage, an agent turn, a tool call, a commit.

    Attributes:
        name: Low-cardinality, `operation target` (`stage review`, `chat claude-sonnet-4`, `execute_tool ...`).
        context: Its trace and id.
        parent: The span it is part of (None for a trace's root).
        start: When it began (UTC).
        end: When it ended (UTC, never before `start`).
        attributes: OpenTelemetry attribute names to values (`gen_ai.*`, `orchestra.*`).
        kind: `client` for model calls, else `internal`.
        status: How it ended; `status_message` says why when it failed.
        events: Moments inside it (retries, warnings).
        links: Spans of other traces it relates to.
    """

    name: str
    context: SpanContext
    parent: SpanContext | None
    start: datetime
    end: datetime
    attributes: Mapping[str, AttributeValue] = field(factory=dict, converter=frozen_map)
    kind: SpanKind = SpanKind.INTERNAL
    status: SpanStatus = SpanStatus.UNSET
    status_message: str = ""
    events: tuple[SpanEvent, ...] = field(default=(), converter=any_tuple)
    links: tuple[SpanLink, ...] = field(default=(), converter=any_tuple)


def session_trace(session_id: str, created_at: datetime | None) -> SpanContext:
    """The trace of a session and the span id of its first run's root, derived from the session's id and the
    time its store created it (ids alone repeat across stores: every SQLite store has a session `1`).

    Every run of the session (the first, each resume, in any process) derives the same context; a resumed run's
    root span is a child of this one.
    """
    key = f"orchestra-session\0{session_id}\0{created_at.isoformat() if created_at is not None else ''}"
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    trace_id = int.from_bytes(digest[:16], "big") or 1
    span_id = int.from_bytes(digest[16:24], "big") or 1
    return SpanContext(trace_id, span_id)
