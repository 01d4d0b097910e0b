"""The PostgreSQL store beyond the contract: many writer processes, schema on first use, clear errors without the
password, the DSN from the environment, and session locks seen across processes."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
import pytest

from orchestra_adapters.storage.factory import open_session_store, store_location
from orchestra_adapters.storage.postgres.dsn import display_dsn
from orchestra_adapters.storage.postgres.schema import LATEST_VERSION
from orchestra_adapters.storage.postgres.store import PostgresSessionStore
from orchestra_adapters.storage.sqlite_rows import TOTALS_COLUMNS
from orchestra_core.model.records import (
    LifecycleEvent,
    NodeEvent,
    NodeExecution,
    ParallelEvent,
    ParallelExecution,
    PipelineLifecycle,
)
from orchestra_core.model.settings import StorageSettings
from orchestra_core.model.store_errors import StoreUnavailableError
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record, fork_session
from tests.support.fleet_servers import free_port

ROOT = Path(__file__).resolve().parents[3]
_WRITER = textwrap.dedent(
    """
    import sys
    from orchestra_adapters.storage.postgres.store import PostgresSessionStore
    dsn, shared, own, index = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = PostgresSessionStore(dsn)
    for n in range(40):
        store.append(shared, "test.Event", 1, {1: index, 2: n})
        store.append(own, "test.Event", 1, {1: n})
    store.close()
    """
)


def test_appends_from_many_processes_all_land_on_the_chains(postgres_dsn: str) -> None:
    store = PostgresSessionStore(postgres_dsn)
    shared = store.create_session(SessionMetadata(pipeline="p")).session_id
    own = [store.create_session(SessionMetadata(pipeline="p")).session_id for _ in range(4)]
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, postgres_dsn, shared, own[i], str(i)], cwd=ROOT)
        for i in range(4)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0, 0, 0]
    chain = store.turns(shared, limit=1000).turns
    assert len(chain) == 160 and store.get_session(shared).turn_count == 160
    assert sorted((t.data[1], t.data[2]) for t in chain) == [(i, n) for i in range(4) for n in range(40)]
    assert [t.depth for t in chain] == list(range(160))  # one chain: every turn's parent is the one before
    assert all(int(b.turn_id) > int(a.turn_id) for a, b in itertools.pairwise(chain))
    for session in own:
        assert [t.data[1] for t in store.turns(session, limit=100).turns] == list(range(40))
    store.close()


def test_the_schema_is_created_once_by_concurrent_first_users(postgres_dsn: str) -> None:
    errors: list[BaseException] = []
    stores: list[PostgresSessionStore] = []

    def open_one() -> None:
        try:
            stores.append(PostgresSessionStore(postgres_dsn))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(stores) == 6
    with psycopg.connect(postgres_dsn) as connection:
        assert connection.execute("SELECT version FROM orchestra.schema_version").fetchall() == [(LATEST_VERSION,)]
    for store in stores:
        store.close()


def _record_a_run(store: PostgresSessionStore) -> tuple[str, str]:
    """A session with every kind of counted turn, and a branch forked from it with turns of its own."""
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, session, PipelineLifecycle(LifecycleEvent.STARTED, "p"))
    append_record(store, session, NodeExecution("plan", NodeEvent.STARTED, "codergen"))
    usage = TokenUsage(120, 30)
    append_record(store, session, AgentTurn(node_id="plan", turn_number=1, model="m", provider="p", token_usage=usage))
    append_record(store, session, NodeExecution("plan", NodeEvent.COMPLETED, "codergen"))
    fork_at = append_record(store, session, ParallelExecution("fan", ParallelEvent.FAN_OUT, branch_count=1)).turn_id
    branch = fork_session(store, session, fork_at, spawn_reason="parallel").session_id
    append_record(store, branch, NodeExecution("a", NodeEvent.STARTED, "codergen"))
    append_record(store, branch, AgentTurn(node_id="a", turn_number=1, model="m", provider="p", token_usage=usage))
    append_record(store, session, PipelineLifecycle(LifecycleEvent.COMPLETED, "p"))
    return session, branch


def test_a_version_1_database_gets_the_totals_of_its_turns(postgres_dsn: str) -> None:
    store = PostgresSessionStore(postgres_dsn)
    session, branch = _record_a_run(store)
    expected = {
        (line, own): store.session_totals(line, own=own) for line in (session, branch) for own in (False, True)
    }
    assert expected[(session, False)].agent_turns == 1 and expected[(branch, False)].agent_turns == 2
    store.close()
    columns = TOTALS_COLUMNS.split(", ")
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:  # back to what version 1 wrote
        connection.execute(f"ALTER TABLE orchestra.turns {', '.join(f'DROP COLUMN {c}' for c in columns)}")
        connection.execute("DROP INDEX orchestra.sessions_by_parent")
        connection.execute("DROP TABLE orchestra.fleet_branches")
        connection.execute("ALTER TABLE orchestra.sessions DROP COLUMN linear")
        connection.execute("DROP INDEX orchestra.turns_by_session")
        connection.execute("UPDATE orchestra.schema_version SET version = 1")
    migrated = PostgresSessionStore(postgres_dsn)
    found = {(line, own): migrated.session_totals(line, own=own) for line, own in expected}
    assert found == expected
    assert [info.session_id for info in migrated.child_sessions(session)] == [branch]
    with psycopg.connect(postgres_dsn) as connection:
        assert connection.execute("SELECT version FROM orchestra.schema_version").fetchall() == [(LATEST_VERSION,)]
    migrated.close()


def test_a_version_3_database_learns_which_sessions_are_straight_chains(postgres_dsn: str) -> None:
    store = PostgresSessionStore(postgres_dsn)
    straight, branched = (store.create_session(SessionMetadata(pipeline="p")).session_id for _ in range(2))
    ids = [store.append(line, "test.Event", 1, {1: n}).turn_id for n in range(3) for line in (straight, branched)]
    retry = store.append(branched, "test.Event", 1, {1: 9}, parent_turn_id=ids[1]).turn_id  # hung off its first
    fork = store.fork_session(ids[2], SessionMetadata(pipeline="p")).session_id
    own = store.append(fork, "test.Event", 1, {1: 7}).turn_id
    store.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:  # back to what version 3 wrote
        connection.execute("ALTER TABLE orchestra.sessions DROP COLUMN linear")
        connection.execute("DROP INDEX orchestra.turns_by_session")
        connection.execute("UPDATE orchestra.schema_version SET version = 3")
    migrated = PostgresSessionStore(postgres_dsn)
    with psycopg.connect(postgres_dsn) as connection:
        linear = dict(connection.execute("SELECT id, linear FROM orchestra.sessions").fetchall())
    assert linear == {int(straight): True, int(branched): False, int(fork): True}
    assert [t.turn_id for t in migrated.turns_after(branched, limit=10).turns] == [ids[1], retry]
    assert [t.turn_id for t in migrated.turns_after(fork, after_turn_id=ids[0], limit=10).turns] == [ids[2], own]
    migrated.close()


def test_an_unreachable_database_is_named_without_its_password_within_seconds(tmp_path: Path) -> None:
    port = free_port()
    dsn = f"postgresql://alice:s3cret-pw@127.0.0.1:{port}/fleet"
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        open_session_store(StorageSettings(backend="postgres", dsn=dsn), tmp_path)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert f"postgresql://alice@127.0.0.1:{port}/fleet" in message and "unreachable" in message
    assert "s3cret" not in message
    assert "s3cret" not in repr(StorageSettings(backend="postgres", dsn=dsn))


def test_the_dsn_may_come_from_the_environment(postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_DSN", postgres_dsn)
    settings = StorageSettings(backend="postgres", dsn_env="FLEET_DSN")
    store = open_session_store(settings, tmp_path)
    try:
        assert store.location == display_dsn(postgres_dsn)
        assert store_location(settings, tmp_path) == (display_dsn(postgres_dsn), True)
    finally:
        store.close()


def test_display_dsn_never_shows_a_password() -> None:
    assert display_dsn("postgresql://bob:pw@db.example:5433/orc") == "postgresql://bob@db.example:5433/orc"
    assert display_dsn("host=db user=bob password=pw dbname=orc") == "postgresql://bob@db/orc"
    assert display_dsn("postgresql://bob@/orc?host=/run/pg") == "postgresql://bob@/orc?host=/run/pg"
    assert "pw" not in display_dsn("postgresql://bob:pw@[not a dsn")
    assert os.environ.get("PGPASSWORD") is None
