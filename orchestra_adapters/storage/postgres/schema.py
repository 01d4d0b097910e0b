"""The PostgreSQL store's schema (in its own `orchestra` schema): a version table and forward migrations, run on
first use inside one transaction under an advisory lock, so processes opening a new database at once are safe."""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from orchestra_core.model.store_errors import StoreVersionError

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

LATEST_VERSION = 1


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
            _MIGRATIONS[version](connection)
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


def _create_v1(connection: psycopg.Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            connection.execute(statement)


_MIGRATIONS: dict[int, Callable[[psycopg.Connection], None]] = {1: _create_v1}
