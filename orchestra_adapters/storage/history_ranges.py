"""Forward ranges of a session's history (`TurnRangeReader.turns_after`) in the SQL stores, read with a bound.

While the session and the sessions it was forked from are each one straight chain (every turn appended after the
head of its time), its history is a run of each one's own turns, ids growing along each, read by id range: about
`count` rows, however long the history and wherever the range starts. Otherwise the chain is walked back from the
head down to the range's start. The SQLite and PostgreSQL stores differ only in their queries (`RangeQueries`).
"""

from __future__ import annotations

from typing import Any

from attrs import frozen


@frozen
class RangeQueries:
    """A store's queries, each with positional parameters.

    Attributes:
        own_turns: Turn rows of one session's own turns in an id range: (session, ids above, ids up to, limit).
        walk_back: Turn rows of the chain from a head down to ids above a floor: (head, floor, limit).
        session: A session's head_turn_id, base_turn_id and linear flag: (session,).
        owner: The session a turn belongs to: (turn,).
    """

    own_turns: str
    walk_back: str
    session: str
    owner: str


def rows_after(connection: Any, queries: RangeQueries, number: int, floor: int, count: int) -> list[Any]:
    """The first `count` turn rows of session `number`'s history with ids above `floor`, oldest first."""
    segments = _segments(connection, queries, number)
    if segments is None:
        head = connection.execute(queries.session, (number,)).fetchone()[0]
        if head is None or head <= floor:
            return []
        return list(connection.execute(queries.walk_back, (head, floor, count)).fetchall())
    rows: list[Any] = []
    for owner, low, high in segments:
        if high <= floor or len(rows) >= count:
            continue
        rows += connection.execute(queries.own_turns, (owner, max(low, floor), high, count - len(rows))).fetchall()
    return rows


def _segments(connection: Any, queries: RangeQueries, number: int) -> list[tuple[int, int, int]] | None:
    """The session's history as (session, ids above, ids up to) runs of own turns, oldest first; None when a
    session on the way is not one straight chain."""
    row = connection.execute(queries.session, (number,)).fetchone()
    assert row is not None  # the caller read the session
    head, base, linear = row
    segments: list[tuple[int, int, int]] = []
    while head is not None:
        if not linear:
            return None
        segments.append((number, -1 if base is None else base, head))
        if base is None:
            break
        owner = connection.execute(queries.owner, (base,)).fetchone()
        assert owner is not None  # a fork point is a stored turn
        number = owner[0]
        forked = connection.execute(queries.session, (number,)).fetchone()
        assert forked is not None
        head, base, linear = base, forked[1], forked[2]
    segments.reverse()
    return segments
