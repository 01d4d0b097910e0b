"""Rows of the SQLite store as port values, and the SQL that reads them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from orchestra_adapters.storage.payload import decode_payload, decompress
from orchestra_adapters.storage.sqlite_errors import DAMAGE_SYMPTOMS
from orchestra_core.model.store_errors import StoreCorruptError
from orchestra_core.ports.session_store import SessionInfo, SessionMetadata, SessionTotals, StoredTurn
from orchestra_core.session.cursor import STATUS_CODES, SessionCursor, status_from_code
from orchestra_core.session.identifiers import format_id

SESSION_SELECT = (
    "SELECT s.id, s.created_at_ms, s.updated_at_ms, s.head_turn_id, s.pipeline, s.title, s.labels, "
    "s.parent_session_id, s.spawn_reason, t.depth, t.status "
    "FROM sessions s LEFT JOIN turns t ON t.id = s.head_turn_id"
)
# A turn row's running totals (SessionTotals, in field order) and its latest lifecycle turn.
TOTALS_COLUMNS = (
    "agent_turns, prompt_tokens, completion_tokens, node_runs, checkpoints, pushes, rollbacks, cleanups, "
    "parallel, session_branches, cost_nanos, unpriced_turns, lifecycle_id"
)
_T_TOTALS = ", ".join(f"t.{column}" for column in TOTALS_COLUMNS.split(", "))
HEAD_SELECT = (
    f"SELECT s.head_turn_id, t.depth, t.checkpoint_id, t.status, {_T_TOTALS} "
    "FROM sessions s LEFT JOIN turns t ON t.id = s.head_turn_id WHERE s.id = ?"
)
HEAD_AND_TOP_SELECT = (
    f"SELECT s.head_turn_id, t.depth, t.checkpoint_id, t.status, {_T_TOTALS}, "
    "(SELECT COALESCE(MAX(id), 0) FROM turns) "
    "FROM sessions s LEFT JOIN turns t ON t.id = s.head_turn_id WHERE s.id = ?"
)
TURN_CURSOR_SELECT = f"SELECT t.id, t.depth, t.checkpoint_id, t.status, {_T_TOTALS} FROM turns t WHERE t.id = ?"
TURN_SELECT = (
    "SELECT t.id, t.parent_id, t.depth, t.type_id, t.type_version, t.created_at_ms, t.payload, "
    "b.compression, b.data FROM {source} LEFT JOIN blobs b ON t.payload IS NULL AND b.hash = t.payload_hash"
)
CHAIN = (
    "WITH RECURSIVE chain(id, n) AS (SELECT ?, 1 UNION ALL "
    "SELECT t.parent_id, chain.n + 1 FROM turns t JOIN chain ON t.id = chain.id "
    "WHERE chain.n < ? AND t.parent_id IS NOT NULL) "
)
IN_HISTORY = (
    "WITH RECURSIVE chain(id) AS (SELECT ? UNION ALL "
    "SELECT t.parent_id FROM turns t JOIN chain ON t.id = chain.id WHERE t.parent_id >= ?) "
    "SELECT 1 FROM chain WHERE id = ? LIMIT 1"
)


def session_info(row: tuple[Any, ...]) -> SessionInfo:
    """A SessionInfo from a `SESSION_SELECT` row."""
    number, created_ms, updated_ms, head_id, pipeline, title, labels, parent, reason, depth, status = row
    metadata = SessionMetadata(pipeline, title, tuple(json.loads(labels)), parent, reason)
    return SessionInfo(
        session_id=str(number),
        metadata=metadata,
        status=status_from_code(status or 0),
        created_at=from_ms(created_ms),
        updated_at=from_ms(updated_ms),
        head_turn_id=format_id(head_id),
        head_depth=depth or 0,
    )


def cursor_of(row: tuple[Any, ...]) -> SessionCursor:
    """The SessionCursor kept in a turn row: its checkpoint id, status code and `TOTALS_COLUMNS`, in that
    order (the columns `HEAD_SELECT` and `TURN_CURSOR_SELECT` read after a turn's id and depth)."""
    checkpoint_id, status, *counts, lifecycle_id = row
    totals = SessionTotals.of([count or 0 for count in counts], format_id(lifecycle_id))
    return SessionCursor(format_id(checkpoint_id), status_from_code(status or 0), totals)


def cursor_columns(cursor: SessionCursor) -> tuple[Any, ...]:
    """A cursor as the values of a turn row's checkpoint id, status code and `TOTALS_COLUMNS`."""
    totals = cursor.totals
    checkpoint = int(cursor.checkpoint_turn_id) if cursor.checkpoint_turn_id else None
    lifecycle = int(totals.lifecycle_turn_id) if totals.lifecycle_turn_id else None
    return (checkpoint, STATUS_CODES[cursor.status], *totals.counts(), lifecycle)


def stored_turn(row: tuple[Any, ...], location: str) -> StoredTurn:
    """A StoredTurn from a `TURN_SELECT` row (payload inline, or from its blob).

    Raises:
        StoreCorruptError: The payload or its blob is missing or unreadable.
    """
    turn_id, parent_id, depth, type_id, version, created_ms, inline, compression, blob = row
    payload = inline if inline is not None else decompressed(compression, blob, f"turn {turn_id}", location)
    try:
        data = decode_payload(payload)
        return StoredTurn(
            str(turn_id), format_id(parent_id), depth, type_id, version, data, from_ms(created_ms)
        )
    except DAMAGE_SYMPTOMS as error:  # a damaged row: its values are not of their column's kind
        raise StoreCorruptError(f"session store {location}: turn {turn_id} cannot be read: {error}") from None


def decompressed(compression: int | None, data: bytes | None, what: str, location: str) -> bytes:
    """A blob row's original bytes.

    Raises:
        StoreCorruptError: The blob is missing or damaged.
    """
    if compression is None or data is None:
        raise StoreCorruptError(f"session store {location}: the blob of {what} is missing")
    try:
        return decompress(compression, data)
    except ValueError as error:
        raise StoreCorruptError(f"session store {location}: {what} cannot be read: {error}") from None


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(milliseconds: int) -> datetime:
    return datetime.fromtimestamp(milliseconds / 1000, UTC)
