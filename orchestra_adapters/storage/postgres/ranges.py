"""Forward ranges of a session's history in the PostgreSQL store (`TurnRangeReader.turns_after`): keyset reads
by (session, id) over each straight chain, a walk back from the head otherwise."""

from __future__ import annotations

from typing import Any

import psycopg

from orchestra_adapters.storage.postgres.schema import SCHEMA

_S = SCHEMA
_TURN_SELECT = (
    "SELECT t.id, t.parent_id, t.depth, t.type_id, t.type_version, t.created_at_ms, t.payload, b.compression, "
    f"b.data FROM {{source}} LEFT JOIN {_S}.blobs b ON t.payload IS NULL AND b.hash = t.payload_hash"
)
# A keyset page of one session's own turns: the index turns_by_session (session_id, id) finds it directly.
_OWN_TURNS = _TURN_SELECT.format(source=f"{_S}.turns t") + (
    " WHERE t.session_id = %s AND t.id > %s AND t.id <= %s ORDER BY t.id LIMIT %s"
)
_WALK_BACK = (
    "WITH RECURSIVE chain(id) AS (SELECT %s::bigint UNION ALL "
    f"SELECT t.parent_id FROM {_S}.turns t JOIN chain ON t.id = chain.id WHERE t.parent_id > %s) "
    + _TURN_SELECT.format(source=f"chain JOIN {_S}.turns t ON t.id = chain.id")
    + " ORDER BY t.id LIMIT %s"
)
_SESSION = f"SELECT head_turn_id, base_turn_id, linear FROM {_S}.sessions WHERE id = %s"


def rows_after(connection: psycopg.Connection, number: int, floor: int, count: int) -> list[Any]:
    """The first `count` turn rows of session `number`'s history with ids above `floor`, oldest first.

    While the session and the sessions it was forked from are each one straight chain (every turn appended after
    the head of its time), its history is a run of each one's own turns, ids growing along each: about `count`
    rows are read, however long the history and wherever the range starts. Otherwise the chain is walked back
    from the head down to `floor`.
    """
    segments = _segments(connection, number)
    if segments is None:
        head = connection.execute(_SESSION, (number,)).fetchone()[0]  # type: ignore[index]
        if head is None or head <= floor:
            return []
        return connection.execute(_WALK_BACK, (head, floor, count)).fetchall()
    rows: list[Any] = []
    for owner, low, high in segments:
        if high <= floor or len(rows) >= count:
            continue
        rows += connection.execute(_OWN_TURNS, (owner, max(low, floor), high, count - len(rows))).fetchall()
    return rows


def _segments(connection: psycopg.Connection, number: int) -> list[tuple[int, int, int]] | None:
    """The session's history as (session, ids above, ids up to) runs of own turns, oldest first; None when a
    session on the way is not one straight chain."""
    row = connection.execute(_SESSION, (number,)).fetchone()
    assert row is not None  # the caller read the session
    head, base, linear = row
    segments: list[tuple[int, int, int]] = []
    while head is not None:
        if not linear:
            return None
        segments.append((number, -1 if base is None else base, head))
        if base is None:
            break
        owner = connection.execute(f"SELECT session_id FROM {_S}.turns WHERE id = %s", (base,)).fetchone()
        assert owner is not None  # a fork point is a stored turn
        number = owner[0]
        forked = connection.execute(_SESSION, (number,)).fetchone()
        assert forked is not None
        head, base, linear = base, forked[1], forked[2]
    segments.reverse()
    return segments
