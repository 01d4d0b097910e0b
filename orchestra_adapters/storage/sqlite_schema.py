"""The SQLite store's schema: a version table and forward migrations, each run in one write transaction."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from orchestra_adapters.storage.payload import decode_payload, decompress
from orchestra_adapters.storage.sqlite_errors import DAMAGE_SYMPTOMS, damage_found, store_error
from orchestra_adapters.storage.sqlite_rows import TOTALS_COLUMNS, cursor_columns
from orchestra_core.model.store_errors import (
    StoreCorruptError,
    StoreError,
    StoreReadOnlyError,
    StoreUnavailableError,
    StoreVersionError,
)
from orchestra_core.session.cursor import LIFECYCLE_TYPE_ID, SessionCursor
from orchestra_core.session.totals import COUNTED_TYPE_IDS

_V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    head_turn_id INTEGER,
    base_turn_id INTEGER,
    pipeline TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    labels TEXT NOT NULL DEFAULT '[]',
    parent_session_id TEXT,
    spawn_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_activity ON sessions (updated_at_ms DESC, head_turn_id DESC, id DESC);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER,
    depth INTEGER NOT NULL,
    session_id INTEGER NOT NULL,
    type_id TEXT NOT NULL,
    type_version INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    payload_hash BLOB NOT NULL,
    payload BLOB
);
CREATE TABLE blobs (
    hash BLOB PRIMARY KEY,
    size INTEGER NOT NULL,
    compression INTEGER NOT NULL,
    data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE bundles (
    bundle_id TEXT PRIMARY KEY,
    content BLOB NOT NULL,
    published_at_ms INTEGER NOT NULL
);
INSERT INTO schema_version (version) VALUES (1);
"""

# Version 2: the per-turn session cursor (latest checkpoint at or before the turn, session status), so
# resume and status read the head instead of scanning; existing turns are backfilled in id order.
_V2 = """
ALTER TABLE turns ADD COLUMN checkpoint_id INTEGER;
ALTER TABLE turns ADD COLUMN status INTEGER NOT NULL DEFAULT 0;
"""

# Version 3: each turn's running totals (SessionTotals: agent turns, tokens, node runs, ... and the latest
# lifecycle turn), so `status` of a long session reads counts from the head; sessions found by their parent;
# whether each session is one straight chain from its fork point (no append after an older turn), so that
# "is this turn in its history" is an id comparison instead of a walk.
_V3 = """
ALTER TABLE turns ADD COLUMN agent_turns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN node_runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN checkpoints INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN pushes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN rollbacks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN cleanups INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN parallel INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN session_branches INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN lifecycle_id INTEGER;
ALTER TABLE sessions ADD COLUMN linear INTEGER NOT NULL DEFAULT 1;
CREATE INDEX sessions_by_parent ON sessions (parent_session_id);
"""

# Version 4: the running totals also hold the known cost of the agent turns (nanodollars) and how many agent turns
# have an unknown cost, so `status` shows a long session's cost from its head.
_V4 = """
ALTER TABLE turns ADD COLUMN cost_nanos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN unpriced_turns INTEGER NOT NULL DEFAULT 0;
"""

# Version 5: turns found by session, so a page of a session's history (`turns_after`) is read by id range within the
# session instead of scanning the turns of every session appended meanwhile.
_V5 = """
CREATE INDEX turns_by_session ON turns (session_id, id);
"""

LATEST_VERSION = 5
_OWN_TABLES = {"schema_version", "sessions", "turns", "blobs", "bundles"}


def open_database(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    """Connect to the store at `path` (creating it and its directory), in WAL mode, migrated to the latest schema.

    Raises:
        StoreError: A subclass naming the path: the directory or file cannot be created, read or written,
            the file is damaged or not a store, or it is newer than this Orchestra.
    """
    location = str(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        kind = StoreReadOnlyError if isinstance(error, PermissionError) else StoreUnavailableError
        raise kind(f"session store {location}: cannot create its directory: {error.strerror}") from None
    connection = None
    try:
        connection = sqlite3.connect(
            path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        _enable_wal(connection, busy_timeout_s)
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(f"PRAGMA cache_size = {PAGE_CACHE_KIB}")
        migrate(connection, location)
        return connection
    except (sqlite3.Error, StoreError) as error:
        if connection is not None:
            connection.close()
        if isinstance(error, StoreError):
            raise
        raise store_error(error, location, "open the store") from None
    except DAMAGE_SYMPTOMS as error:
        assert connection is not None  # only reading the file decodes values
        damage = damage_found(connection, location, "open the store")
        connection.close()
        if damage is None:
            raise
        raise damage from error


# SQLite's own page cache, in KiB (negative: a size, not a page count). Its default, 2 MB, filled up with the pages
# a long run appended (never read again) and was a fifth of what a 2,000-node run's peak memory grew by over a
# 5-node run's (issue 33). A run writes at the end of the file, and the operating system's cache holds the pages a
# read goes back to: side by side (alternating, median of 4), 2,000-node runs into a 119 MB store took the same CPU
# time with 512 KiB as with 2 MB (4.62 s and 4.60 s) and peaked 1.7 MB lower.
PAGE_CACHE_KIB = -512


def _enable_wal(connection: sqlite3.Connection, busy_timeout_s: float) -> None:
    """Switch to WAL. SQLite answers SQLITE_BUSY at once, without its busy handler, when another connection
    is switching a new file or creating its schema, so wait here as the busy timeout would."""
    deadline = time.monotonic() + busy_timeout_s
    delay = 0.002
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if (
                getattr(error, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY
                or time.monotonic() >= deadline
            ):
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def migrate(connection: sqlite3.Connection, path: str, *, target: int = LATEST_VERSION) -> int:
    """Bring the store at `path` to schema version `target` (default: the latest); return the version it had.

    Runs inside BEGIN IMMEDIATE, so two processes opening a new store at once do not both create it.

    Raises:
        StoreVersionError: The store is newer than this Orchestra.
        StoreCorruptError: The file is an SQLite database of something else.
        sqlite3.Error: The database could not be read or written (the caller translates it).
    """
    found = current_version(connection, path)
    if found >= target:
        return found
    connection.execute("BEGIN IMMEDIATE")
    try:
        found = current_version(connection, path)
        for version in range(found + 1, target + 1):
            _MIGRATIONS[version](connection, path)
            connection.execute("UPDATE schema_version SET version = ?", (version,))
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return found


def read_schema_version(path: Path) -> int | None:
    """The schema version of the store at `path`, read without changing the file (None when unreadable)."""
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
    except sqlite3.Error:
        return None
    try:
        row = connection.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    return row[0] if row and isinstance(row[0], int) else None


def current_version(connection: sqlite3.Connection, path: str) -> int:
    """The schema version of the store (0 for an empty file)."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_version" not in tables:
        if tables - _OWN_TABLES:
            raise StoreCorruptError(f"session store {path}: the file is an SQLite database of something else")
        return 0
    row = connection.execute("SELECT version FROM schema_version").fetchone()
    if row is None:
        raise StoreCorruptError(f"session store {path}: the schema version is missing")
    version = row[0]
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        # A damaged page can hand back any value; it is the file, not a newer Orchestra.
        raise StoreCorruptError(f"session store {path}: the schema version is damaged ({version!r})")
    if version > LATEST_VERSION:
        raise StoreVersionError(
            f"session store {path} has schema version {version}, written by a newer Orchestra "
            f"(this one knows up to {LATEST_VERSION}); upgrade Orchestra"
        )
    return version


def _create_v1(connection: sqlite3.Connection, path: str) -> None:
    _execute_script(connection, _V1)


_CURSOR_COLUMNS = ("checkpoint_id", "status", *TOTALS_COLUMNS.split(", "))
_V4_COLUMNS = ("cost_nanos", "unpriced_turns")


def _add_session_cursor(connection: sqlite3.Connection, path: str) -> None:
    _execute_script(connection, _V2)
    _backfill_cursors(connection, path, ("checkpoint_id", "status"), frozenset({LIFECYCLE_TYPE_ID}))


def _add_session_totals(connection: sqlite3.Connection, path: str) -> None:
    _execute_script(connection, _V3)
    columns = tuple(column for column in _CURSOR_COLUMNS if column not in _V4_COLUMNS)
    _backfill_cursors(connection, path, columns, COUNTED_TYPE_IDS)
    _backfill_linear(connection)


def _add_session_cost(connection: sqlite3.Connection, path: str) -> None:
    _execute_script(connection, _V4)
    _backfill_cursors(connection, path, _CURSOR_COLUMNS, COUNTED_TYPE_IDS)


def _add_turns_by_session(connection: sqlite3.Connection, path: str) -> None:
    _execute_script(connection, _V5)


def _backfill_linear(connection: sqlite3.Connection) -> None:
    """Mark every session whose turns do not each follow the one before (or its fork point) as not linear."""
    last: dict[int, int | None] = dict(connection.execute("SELECT id, base_turn_id FROM sessions").fetchall())
    branched: set[int] = set()
    for turn_id, parent_id, session_id in connection.execute(
        "SELECT id, parent_id, session_id FROM turns ORDER BY id"
    ).fetchall():
        if parent_id != last.get(session_id):
            branched.add(session_id)
        last[session_id] = turn_id
    connection.executemany("UPDATE sessions SET linear = 0 WHERE id = ?", [(number,) for number in branched])


def _execute_script(connection: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            connection.execute(statement)


def _backfill_cursors(
    connection: sqlite3.Connection, path: str, columns: tuple[str, ...], decoded: frozenset[str]
) -> None:
    """Compute every turn's cursor from its parent's, oldest first, and store its `columns` (of
    `cursor_columns`); only the data of `decoded` types is read."""
    assignments = ", ".join(f"{column} = ?" for column in columns)
    positions = [_CURSOR_COLUMNS.index(column) for column in columns]
    cursors: dict[int, SessionCursor] = {}
    rows = connection.execute(
        "SELECT t.id, t.parent_id, t.type_id, t.payload, b.compression, b.data FROM turns t "
        "LEFT JOIN blobs b ON t.payload IS NULL AND b.hash = t.payload_hash ORDER BY t.id"
    )
    for turn_id, parent_id, type_id, inline, compression, blob in rows.fetchall():
        parent = cursors.get(parent_id, SessionCursor()) if parent_id else SessionCursor()
        data = {}
        if type_id in decoded:
            try:
                data = decode_payload(inline if inline is not None else decompress(compression, blob))
            except ValueError as error:
                raise StoreCorruptError(
                    f"session store {path}: turn {turn_id} cannot be read: {error}"
                ) from None
        cursor = parent.after(str(turn_id), type_id, data)
        cursors[turn_id] = cursor
        every = cursor_columns(cursor)
        values = [every[position] for position in positions]
        connection.execute(f"UPDATE turns SET {assignments} WHERE id = ?", (*values, turn_id))


_MIGRATIONS: dict[int, Callable[[sqlite3.Connection, str], None]] = {
    1: _create_v1,
    2: _add_session_cursor,
    3: _add_session_totals,
    4: _add_session_cost,
    5: _add_turns_by_session,
}
