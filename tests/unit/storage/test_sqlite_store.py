"""SqliteSessionStore specifics: pragmas, blob storage of large payloads, schema versions and migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestra_adapters.storage.payload import content_hash, encode_payload
from orchestra_adapters.storage.sqlite_schema import LATEST_VERSION, migrate
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.records import (
    CheckpointRecord,
    LifecycleEvent,
    NodeEvent,
    NodeExecution,
    PipelineLifecycle,
)
from orchestra_core.model.store_errors import StoreCorruptError, StoreVersionError
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.session_store import SessionMetadata, SessionStatus, SessionTotals
from orchestra_core.session import api
from orchestra_core.session.codec import encode_record

META = SessionMetadata(pipeline="p")


def _sql(path: Path, query: str) -> list[tuple]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(query).fetchall()
    finally:
        connection.close()


def test_the_file_is_created_with_wal_and_normal_sync(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".orchestra" / "orchestra.db"
    with SqliteSessionStore(path) as store:
        store.create_session(META)
        connection = store._connection
        assert connection is not None
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert _sql(path, "SELECT version FROM schema_version") == [(LATEST_VERSION,)]


def test_large_payloads_live_compressed_and_deduplicated_in_blobs(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    big = {1: "log line\n" * 5000}
    with SqliteSessionStore(path, inline_limit=1024) as store:
        session = store.create_session(META).session_id
        first = store.append(session, "t.E", 1, big)
        store.append(session, "t.E", 1, big)
        store.append(session, "t.E", 1, {1: "small"})
        assert store.get_turn(session, first.turn_id).data == big
    assert _sql(path, "SELECT payload IS NULL FROM turns ORDER BY id") == [(1,), (1,), (0,)]
    blobs = _sql(path, "SELECT hash, size, compression, length(data) FROM blobs")
    assert len(blobs) == 1
    digest, size, compression, stored = blobs[0]
    assert digest == content_hash(encode_payload(big)) and size == len(encode_payload(big))
    assert compression == 1 and stored < size / 10


def test_a_version_1_store_is_migrated_and_its_cursor_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    connection = sqlite3.connect(path, isolation_level=None)
    migrate(connection, str(path), target=1)
    connection.execute(
        "INSERT INTO sessions (id, created_at_ms, updated_at_ms, head_turn_id, pipeline) VALUES (1, 0, 0, 4, 'p')"
    )
    turns = [
        PipelineLifecycle(LifecycleEvent.STARTED, "p"),
        CheckpointRecord("a", ("a",)),
        PipelineLifecycle(LifecycleEvent.COMPLETED, "p"),
    ]
    rows = [encode_record(record) for record in turns]
    rows.append(encode_record(CheckpointRecord("b", ("a", "b"))))
    for number, encoded in enumerate(rows, start=1):
        payload = encode_payload(encoded.data)
        connection.execute(
            "INSERT INTO turns (id, parent_id, depth, session_id, type_id, type_version, created_at_ms, payload_hash, "
            "payload) VALUES (?, ?, ?, 1, ?, ?, 0, ?, ?)",
            (
                number,
                number - 1 or None,
                number - 1,
                encoded.type_id,
                encoded.type_version,
                content_hash(payload),
                payload,
            ),
        )
    connection.close()
    with SqliteSessionStore(path) as store:
        info = store.get_session("1")
        assert (info.status, info.turn_count) == (SessionStatus.SUCCESS, 4)
        assert store.latest_checkpoint("1").turn_id == "4"
        assert store.latest_checkpoint("1", at_turn_id="3").turn_id == "2"
        found = api.latest_checkpoint(store, "1", at_turn_id="2")
        assert found is not None and found.checkpoint.current_node == "a"
    assert _sql(path, "SELECT version FROM schema_version") == [(LATEST_VERSION,)]


def test_a_version_2_store_is_migrated_and_its_totals_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    connection = sqlite3.connect(path, isolation_level=None)
    migrate(connection, str(path), target=2)
    connection.execute(
        "INSERT INTO sessions (id, created_at_ms, updated_at_ms, head_turn_id, pipeline) VALUES (1, 0, 0, 5, 'p')"
    )
    records = [
        PipelineLifecycle(LifecycleEvent.STARTED, "p"),
        NodeExecution("a", NodeEvent.STARTED, "codergen"),
        AgentTurn(node_id="a", turn_number=1, model="m", provider="p", token_usage=TokenUsage(30, 4)),
        NodeExecution("a", NodeEvent.COMPLETED, "codergen"),
        CheckpointRecord("a", ("a",)),
    ]
    for number, record in enumerate(records, start=1):
        encoded = encode_record(record)
        payload = encode_payload(encoded.data)
        connection.execute(
            "INSERT INTO turns (id, parent_id, depth, session_id, type_id, type_version, created_at_ms, payload_hash, "
            "payload) VALUES (?, ?, ?, 1, ?, ?, 0, ?, ?)",
            (number, number - 1 or None, number - 1, encoded.type_id, encoded.type_version, content_hash(payload),
             payload),
        )  # fmt: skip
    connection.close()
    with SqliteSessionStore(path) as store:
        assert store.session_totals("1") == SessionTotals(
            agent_turns=1, prompt_tokens=30, completion_tokens=4, node_runs=1, checkpoints=1, unpriced_turns=1,
            lifecycle_turn_id="1",
        )  # an agent turn recorded before costs were: its cost is unknown
        after = store.append("1", *_encoded(AgentTurn(node_id="b", turn_number=1, model="m", provider="p",
                                                      token_usage=TokenUsage(1, 1))))  # fmt: skip
        assert after.turn_id == "6" and store.session_totals("1").agent_turns == 2
    assert _sql(path, "SELECT version FROM schema_version") == [(LATEST_VERSION,)]


def _encoded(record: object) -> tuple:
    encoded = encode_record(record)
    return encoded.type_id, encoded.type_version, encoded.data


def test_a_store_from_a_newer_orchestra_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    SqliteSessionStore(path).close()
    connection = sqlite3.connect(path)
    connection.execute("UPDATE schema_version SET version = 99")
    connection.commit()
    connection.close()
    with pytest.raises(StoreVersionError, match=rf"{path}.*version 99.*newer Orchestra"):
        SqliteSessionStore(path)


def test_an_sqlite_file_of_something_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE invoices (id INTEGER)")
    connection.commit()
    connection.close()
    with pytest.raises(StoreCorruptError, match=str(path)):
        SqliteSessionStore(path)
    assert _sql(path, "SELECT name FROM sqlite_master") == [("invoices",)]
