"""Forward ranges of a session's history in the SQLite store (`TurnRangeReader.turns_after`), read with a bound."""

from __future__ import annotations

import sqlite3
from typing import Any

from orchestra_adapters.storage.sqlite_rows import TURN_SELECT

_OWN_TURNS = TURN_SELECT.format(source="turns t") + (
    " WHERE t.session_id = ? AND t.id > ? AND t.id <= ? ORDER BY t.id LIMIT ?"
)
_WALK_BACK = (
    "WITH RECURSIVE chain(id) AS (SELECT ? UNION ALL "
    "SELECT t.parent_id FROM turns t JOIN chain ON t.id = chain.id WHERE t.parent_id > ?) "
    + TURN_SELECT.format(source="chain JOIN turns t ON t.id = chain.id")
    + " ORDER BY t.id LIMIT ?"
)


def rows_after(connection: sqlite3.Connection, number: int, floor: int, count: int) -> list[Any]:
    """The first `count` turn rows of session `number`'s history with ids above `floor`, oldest first.

    While the session and the sessions it was forked from are each one straight chain, its history is a run of
    each one's own turns (ids grow along a chain), read by id range: about `count` rows, however long the history.
    Otherwise the chain is walked back from the head down to `floor`.
    """
    segments = _segments(connection, number)
    if segments is None:
        head = connection.execute("SELECT head_turn_id FROM sessions WHERE id = ?", (number,)).fetchone()[0]
        if head is None or head <= floor:
            return []
        return connection.execute(_WALK_BACK, (head, floor, count)).fetchall()
    rows: list[Any] = []
    for owner, low, high in segments:
        if high <= floor or len(rows) >= count:
            continue
        rows += connection.execute(_OWN_TURNS, (owner, max(low, floor), high, count - len(rows))).fetchall()
    return rows


def _segments(connection: sqlite3.Connection, number: int) -> list[tuple[int, int, int]] | None:
    """The session's history as (session, ids above, ids up to) runs of own turns, oldest first; None when a
    session on the way is not one straight chain."""
    head, base, linear = connection.execute(
        "SELECT head_turn_id, base_turn_id, linear FROM sessions WHERE id = ?", (number,)
    ).fetchone()
    segments: list[tuple[int, int, int]] = []
    while head is not None:
        if not linear:
            return None
        segments.append((number, -1 if base is None else base, head))
        if base is None:
            break
        (number,) = connection.execute("SELECT session_id FROM turns WHERE id = ?", (base,)).fetchone()
        head, (base, linear) = (
            base,
            connection.execute(
                "SELECT base_turn_id, linear FROM sessions WHERE id = ?", (number,)
            ).fetchone(),
        )
    segments.reverse()
    return segments
