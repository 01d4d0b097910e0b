"""Forward ranges of any history (`TurnRangeReader.turns_after`), paged with any limit from any turn, hold exactly
the turns of the history after that turn, in order: on the in-memory store, SQLite, PostgreSQL and CXDB (the stand-in
server), whatever mix of appends, appends after older turns and forks made the store."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.ports.session_store import SessionMetadata, SessionStore, TurnRangeReader
from orchestra_core.session.api import history
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.fleet_servers import PostgresCluster

# Each step: append to a session (0), append after an older turn of its history (1), fork at a turn (2).
_STEPS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10_000), st.integers(0, 10_000)), max_size=40)


def _build(store: SessionStore, steps: list[tuple[int, int, int]]) -> list[str]:
    sessions = [store.create_session(SessionMetadata(pipeline="p")).session_id]
    for kind, pick, other in steps:
        session = sessions[pick % len(sessions)]
        known = [turn.turn_id for turn in history(store, session)]
        if kind == 1 and known:
            store.append(session, "t.Step", 1, {1: pick}, parent_turn_id=known[other % len(known)])
        elif kind == 2 and known:
            sessions.append(store.fork_session(known[other % len(known)], SessionMetadata(pipeline="p")).session_id)
        else:
            store.append(session, "t.Step", 1, {1: pick})
    return sessions


def _pages(store: TurnRangeReader, session: str, after: str | None, limit: int) -> list[str]:
    seen: list[str] = []
    while True:
        found = store.turns_after(session, after_turn_id=after, limit=limit)
        seen += [turn.turn_id for turn in found.turns]
        assert len(found.turns) <= limit and (not found.has_more or len(found.turns) == limit)
        if not found.has_more:
            return seen
        after = seen[-1]


def _check(store: SessionStore, steps: list[tuple[int, int, int]], limit: int) -> None:
    assert isinstance(store, TurnRangeReader)
    for session in _build(store, steps):
        chain = [turn.turn_id for turn in reversed(list(history(store, session)))]
        for start in [None, *chain]:
            expected = chain if start is None else chain[chain.index(start) + 1 :]
            assert _pages(store, session, start, limit) == expected


@settings(max_examples=60, deadline=None)
@given(_STEPS, st.integers(1, 4))
def test_in_memory_ranges_page_through_every_history(steps: list[tuple[int, int, int]], limit: int) -> None:
    _check(InMemorySessionStore(), steps, limit)


@settings(max_examples=40, deadline=None)
@given(_STEPS, st.integers(1, 4))
def test_sqlite_ranges_page_through_every_history(steps: list[tuple[int, int, int]], limit: int) -> None:
    with tempfile.TemporaryDirectory() as directory, SqliteSessionStore(Path(directory) / "s.db") as store:
        _check(store, steps, limit)


@settings(max_examples=25, deadline=None)
@given(_STEPS, st.integers(1, 4))
def test_cxdb_ranges_page_through_every_history(steps: list[tuple[int, int, int]], limit: int) -> None:
    from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
    from tests.support.cxdb_server import FakeCxdbServer

    with FakeCxdbServer() as server, CxdbSessionStore(server.addr, server.url) as store:
        _check(store, steps, limit)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS, limit=st.integers(1, 4))
def test_postgres_ranges_page_through_every_history(
    postgres_cluster: PostgresCluster, steps: list[tuple[int, int, int]], limit: int
) -> None:
    from orchestra_adapters.storage.postgres.store import PostgresSessionStore

    with PostgresSessionStore(postgres_cluster.new_database()) as store:
        _check(store, steps, limit)
