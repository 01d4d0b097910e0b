"""The PostgreSQL store's queries for forward ranges of a session's history (storage/history_ranges.py): keyset
reads by (session, id) over each straight chain, a walk back from the head otherwise."""

from __future__ import annotations

from orchestra_adapters.storage.history_ranges import RangeQueries
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
QUERIES = RangeQueries(
    own_turns=_OWN_TURNS,
    walk_back=_WALK_BACK,
    session=f"SELECT head_turn_id, base_turn_id, linear FROM {_S}.sessions WHERE id = %s",
    owner=f"SELECT session_id FROM {_S}.turns WHERE id = %s",
)
