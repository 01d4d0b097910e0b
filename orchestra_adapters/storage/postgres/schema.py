"""The PostgreSQL store's schema (in its own `orchestra` schema): a version table and forward migrations, run on
first use inside one transaction under an advisory lock, so processes opening a new database at once are safe."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from orchestra_adapters.storage.payload import decode_payload
from orchestra_adapters.storage.sqlite_rows import TOTALS_COLUMNS, decompressed
from orchestra_core.model.store_errors import StoreCorruptError, StoreVersionError
from orchestra_core.session.cursor import SessionCursor
from orchestra_core.session.identifiers import parse_id
from orchestra_core.session.totals import COUNTED_TYPE_IDS

SCHEMA = "orchestra"
_MIGRATION_LOCK = 0x4F524348  # 'ORCH': serializes the migrations of concurrent first uses

_V1 = f"""
CREATE TABLE {SCHEMA}.schema_version (version integer NOT NULL);
CREATE TABLE {SCHEMA}.sessions (
    id bigserial PRIMARY KEY,
    created_at_ms bigint NOT NULL,
    updated_at_ms bigint NOT NULL,
    head_turn_id bigint,
    base_turn_id bigint,
    pipeline text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    labels text NOT NULL DEFAULT '[]',
    parent_session_id text,
    spawn_reason text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_activity ON {SCHEMA}.sessions (updated_at_ms DESC, head_turn_id DESC NULLS LAST, id DESC);
CREATE SEQUENCE {SCHEMA}.turn_ids;
CREATE TABLE {SCHEMA}.turns (
    id bigint PRIMARY KEY,
    parent_id bigint,
    depth integer NOT NULL,
    session_id bigint NOT NULL,
    type_id text NOT NULL,
    type_version integer NOT NULL,
    created_at_ms bigint NOT NULL,
    payload_hash bytea NOT NULL,
    payload bytea,
    checkpoint_id bigint,
    status smallint NOT NULL DEFAULT 0
);
CREATE TABLE {SCHEMA}.blobs (
    hash bytea PRIMARY KEY,
    size bigint NOT NULL,
    compression smallint NOT NULL,
    data bytea NOT NULL
);
CREATE TABLE {SCHEMA}.bundles (
    bundle_id text PRIMARY KEY,
    content bytea NOT NULL,
    published_at_ms bigint NOT NULL
);
CREATE TABLE {SCHEMA}.session_runners (
    session_id text PRIMARY KEY,
    holder text NOT NULL,
    acquired_at_ms bigint NOT NULL
);
CREATE TABLE {SCHEMA}.fleet_sessions (
    session_id text PRIMARY KEY,
    state text NOT NULL,
    task_id text NOT NULL,
    queue text NOT NULL,
    worker text NOT NULL DEFAULT '',
    submission jsonb NOT NULL DEFAULT '{{}}',
    cancel_requested boolean NOT NULL DEFAULT false,
    pickups integer NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fleet_sessions_by_state ON {SCHEMA}.fleet_sessions (state, updated_at DESC);
CREATE TABLE {SCHEMA}.fleet_workers (
    name text PRIMARY KEY,
    queues text NOT NULL,
    concurrency integer NOT NULL,
    running jsonb NOT NULL DEFAULT '{{}}',
    started_at timestamptz NOT NULL,
    beat_at timestamptz NOT NULL
);
INSERT INTO {SCHEMA}.schema_version (version) VALUES (1);
"""

# Version 2: each turn's running totals (SessionTotals: agent turns, tokens, node runs, ... and the latest
# lifecycle turn), kept like the cursor, so `status` of a long session reads its counts from the head; sessions
# found by their parent. Existing turns are backfilled in id order (a parent's id is always below its child's).
# And the fleet's parallel branches (`fleet_branches`: one row per branch of a session handed to the fleet).
_V2 = f"""
ALTER TABLE {SCHEMA}.turns ADD COLUMN agent_turns bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN prompt_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN completion_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN node_runs bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN checkpoints bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN pushes bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN rollbacks bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN cleanups bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN parallel bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN session_branches bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN lifecycle_id bigint;
CREATE INDEX sessions_by_parent ON {SCHEMA}.sessions (parent_session_id);
CREATE TABLE {SCHEMA}.fleet_branches (
    session_id text NOT NULL,
    branch text NOT NULL,
    state text NOT NULL,
    task_id text NOT NULL,
    queue text NOT NULL,
    line text NOT NULL DEFAULT '',
    worker text NOT NULL DEFAULT '',
    result jsonb NOT NULL DEFAULT '{{}}',
    cancel_requested boolean NOT NULL DEFAULT false,
    pickups integer NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, branch)
);
"""

# Version 3: the running totals also hold the known cost of the agent turns (nanodollars) and how many agent turns
# have an unknown cost.
_V3 = f"""
ALTER TABLE {SCHEMA}.turns ADD COLUMN cost_nanos bigint NOT NULL DEFAULT 0;
ALTER TABLE {SCHEMA}.turns ADD COLUMN unpriced_turns bigint NOT NULL DEFAULT 0;
"""
_V3_COLUMNS = ("cost_nanos", "unpriced_turns")

# Version 4: a page of a session's history read forwards (`turns_after`) by keyset over (session, id) instead of
# walking the chain back from the head: turns found by session, and whether each session is one straight chain
# (every turn appended after the head of its time; a turn hung off an older one clears it).
_V4 = f"""
ALTER TABLE {SCHEMA}.sessions ADD COLUMN linear boolean NOT NULL DEFAULT true;
CREATE INDEX turns_by_session ON {SCHEMA}.turns (session_id, id);
"""

LATEST_VERSION = 4


def migrate(connection: psycopg.Connection, location: str) -> int:
    """Bring the database to the latest schema; return the version it had (0: none).

    Raises:
        StoreVersionError: The database was migrated by a newer Orchestra.
        psycopg.Error: The database could not be read or written (the caller translates it).
    """
    found = current_version(connection, location)
    if found == LATEST_VERSION:
        return found
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        found = current_version(connection, location)
        if found == 0:
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        for version in range(found + 1, LATEST_VERSION + 1):
            _MIGRATIONS[version](connection, location)
            connection.execute(f"UPDATE {SCHEMA}.schema_version SET version = %s", (version,))
    return found


def current_version(connection: psycopg.Connection, location: str) -> int:
    """The schema version of the database (0 before the first migration).

    Raises:
        StoreVersionError: The version is newer than this Orchestra knows.
    """
    # pg_tables, not to_regclass: an advisory lock does not refresh the catalog cache that to_regclass reads,
    # so a process that waited for another's migration would not see its tables.
    exists = connection.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s AND tablename = 'schema_version'", (SCHEMA,)
    ).fetchone()
    if exists is None:
        return 0
    row = connection.execute(f"SELECT version FROM {SCHEMA}.schema_version").fetchone()
    version = int(row[0]) if row else 0
    if version > LATEST_VERSION:
        raise StoreVersionError(
            f"session store {location} has schema version {version}, written by a newer Orchestra "
            f"(this one knows up to {LATEST_VERSION}); upgrade Orchestra"
        )
    return version


def _create_v1(connection: psycopg.Connection, location: str) -> None:
    _execute_script(connection, _V1)


def _add_session_totals(connection: psycopg.Connection, location: str) -> None:
    _execute_script(connection, _V2)
    backfill_totals(connection, location, tuple(c for c in TOTALS_COLUMNS.split(", ") if c not in _V3_COLUMNS))


def _add_session_cost(connection: psycopg.Connection, location: str) -> None:
    _execute_script(connection, _V3)
    backfill_totals(connection, location)


def _add_turns_by_session(connection: psycopg.Connection, location: str) -> None:
    _execute_script(connection, _V4)
    backfill_linear(connection)


def backfill_linear(connection: psycopg.Connection) -> None:
    """Mark every session whose turns do not each follow the one before (or its fork point) as not linear."""
    last: dict[int, int | None] = dict(connection.execute(f"SELECT id, base_turn_id FROM {SCHEMA}.sessions").fetchall())
    branched: set[int] = set()
    for turn_id, parent_id, session_id in connection.execute(
        f"SELECT id, parent_id, session_id FROM {SCHEMA}.turns ORDER BY id"
    ):
        if parent_id != last.get(session_id):
            branched.add(session_id)
        last[session_id] = turn_id
    with connection.cursor() as statement:
        statement.executemany(
            f"UPDATE {SCHEMA}.sessions SET linear = false WHERE id = %s", [(number,) for number in branched]
        )


def backfill_totals(connection: psycopg.Connection, location: str, columns: tuple[str, ...] | None = None) -> None:
    """Compute every turn's totals from its parent's, oldest first, and write their `columns` (of
    `TOTALS_COLUMNS`; all by default); only turns whose totals are not all zero are written (the columns' defaults
    are), and only the data of the types that count is decoded."""
    every = TOTALS_COLUMNS.split(", ")
    columns = columns or tuple(every)
    positions = [every.index(column) for column in columns]
    cursors: dict[int, SessionCursor] = {}
    updates: list[tuple[Any, ...]] = []
    rows = connection.execute(
        f"SELECT t.id, t.parent_id, t.type_id, t.payload, b.compression, b.data FROM {SCHEMA}.turns t "
        f"LEFT JOIN {SCHEMA}.blobs b ON t.payload IS NULL AND b.hash = t.payload_hash ORDER BY t.id"
    )
    for turn_id, parent_id, type_id, inline, compression, blob in rows:
        parent = cursors.get(parent_id, _EMPTY) if parent_id else _EMPTY
        data = {}
        if type_id in COUNTED_TYPE_IDS:
            payload = bytes(inline) if inline is not None else decompressed(compression, _bytes(blob), f"turn {turn_id}", location)
            try:
                data = decode_payload(payload)
            except ValueError as error:
                raise StoreCorruptError(f"session store {location}: turn {turn_id} cannot be read: {error}") from None
        cursor = parent.after(str(turn_id), type_id, data)
        cursors[turn_id] = cursor
        if cursor.totals != _EMPTY.totals:
            values = totals_columns(cursor)
            updates.append((*(values[position] for position in positions), turn_id))
    assignments = ", ".join(f"{column} = %s" for column in columns)
    with connection.cursor() as statement:
        statement.executemany(f"UPDATE {SCHEMA}.turns SET {assignments} WHERE id = %s", updates)


def totals_columns(cursor: SessionCursor) -> tuple[Any, ...]:
    """A cursor's totals as the values of a turn row's `TOTALS_COLUMNS`."""
    totals = cursor.totals
    return (*totals.counts(), parse_id(totals.lifecycle_turn_id))


def _bytes(value: Any) -> bytes | None:
    return bytes(value) if value is not None else None


def _execute_script(connection: psycopg.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            connection.execute(statement)


_EMPTY = SessionCursor()
_MIGRATIONS: dict[int, Callable[[psycopg.Connection, str], None]] = {
    1: _create_v1,
    2: _add_session_totals,
    3: _add_session_cost,
    4: _add_turns_by_session,
}
