"""The SQLite store's queries for forward ranges of a session's history (storage/history_ranges.py)."""

from __future__ import annotations

from orchestra_adapters.storage.history_ranges import RangeQueries
from orchestra_adapters.storage.sqlite_rows import TURN_SELECT

QUERIES = RangeQueries(
    own_turns=TURN_SELECT.format(source="turns t")
    + " WHERE t.session_id = ? AND t.id > ? AND t.id <= ? ORDER BY t.id LIMIT ?",
    walk_back=(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION ALL "
        "SELECT t.parent_id FROM turns t JOIN chain ON t.id = chain.id WHERE t.parent_id > ?) "
        + TURN_SELECT.format(source="chain JOIN turns t ON t.id = chain.id")
        + " ORDER BY t.id LIMIT ?"
    ),
    session="SELECT head_turn_id, base_turn_id, linear FROM sessions WHERE id = ?",
    owner="SELECT session_id FROM turns WHERE id = ?",
)
