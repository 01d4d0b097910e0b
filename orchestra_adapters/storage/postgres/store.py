"""PostgresSessionStore: sessions in a PostgreSQL database shared by many processes and machines (psycopg 3)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from orchestra_adapters.storage.history_ranges import rows_after
from orchestra_adapters.storage.payload import compress, content_hash, encode_payload
from orchestra_adapters.storage.postgres.dsn import CONNECT_TIMEOUT_S, connection_options, display_dsn
from orchestra_adapters.storage.postgres.errors import store_error
from orchestra_adapters.storage.postgres.ranges import QUERIES as RANGE_QUERIES
from orchestra_adapters.storage.postgres.schema import SCHEMA, migrate, totals_columns
from orchestra_adapters.storage.sqlite_rows import (
    TOTALS_COLUMNS,
    decompressed,
    from_ms,
    session_info,
    stored_turn,
    to_ms,
)
from orchestra_core.model.store_errors import (
    BlobNotFoundError,
    BundleConflictError,
    SessionNotFoundError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    TurnNotFoundError,
)
from orchestra_core.ports.clock import Clock, SystemClock
from orchestra_core.ports.session_store import (
    Id,
    SessionHead,
    SessionInfo,
    SessionMetadata,
    SessionTotals,
    StoredTurn,
    TurnAppend,
    TurnData,
    TurnPage,
    TurnRange,
)
from orchestra_core.session.bundle import parse_bundle_id
from orchestra_core.session.codec import normalize_turn_data
from orchestra_core.session.cursor import STATUS_CODES, SessionCursor, status_from_code
from orchestra_core.session.identifiers import format_id, normalize_blob_hash, parse_id

_S = SCHEMA
DEFAULT_INLINE_LIMIT = 8 * 1024
_COMPRESS_FROM = 512
_MAX_CAS_ATTEMPTS = 200  # appends to one session that keep losing the race to move its head give up after this
_SESSION_SELECT = (
    "SELECT s.id, s.created_at_ms, s.updated_at_ms, s.head_turn_id, s.pipeline, s.title, s.labels, "
    f"s.parent_session_id, s.spawn_reason, t.depth, t.status FROM {_S}.sessions s "
    f"LEFT JOIN {_S}.turns t ON t.id = s.head_turn_id"
)
_T_TOTALS = ", ".join(f"t.{column}" for column in TOTALS_COLUMNS.split(", "))
_HEAD_SELECT = (
    f"SELECT s.head_turn_id, t.depth, t.checkpoint_id, t.status, {_T_TOTALS} FROM {_S}.sessions s "
    f"LEFT JOIN {_S}.turns t ON t.id = s.head_turn_id WHERE s.id = %s"
)
_TURN_SELECT = (
    "SELECT t.id, t.parent_id, t.depth, t.type_id, t.type_version, t.created_at_ms, t.payload, b.compression, "
    f"b.data FROM {{source}} LEFT JOIN {_S}.blobs b ON t.payload IS NULL AND b.hash = t.payload_hash"
)
_CHAIN = (
    "WITH RECURSIVE chain(id, n) AS (SELECT %s::bigint, 1 UNION ALL "
    f"SELECT t.parent_id, chain.n + 1 FROM {_S}.turns t JOIN chain ON t.id = chain.id "
    "WHERE chain.n < %s AND t.parent_id IS NOT NULL) "
)
# Turn ids grow along every chain (a parent always exists before its child takes an id), so the walk back from
# the head stops once it passes the turn looked for.
_IN_HISTORY = (
    "WITH RECURSIVE chain(id) AS (SELECT %s::bigint UNION ALL "
    f"SELECT t.parent_id FROM {_S}.turns t JOIN chain ON t.id = chain.id WHERE t.parent_id >= %s) "
    "SELECT 1 FROM chain WHERE id = %s LIMIT 1"
)
_TURN_COLUMNS = (
    "id, parent_id, depth, session_id, type_id, type_version, created_at_ms, payload_hash, payload, checkpoint_id, "
    f"status, {TOTALS_COLUMNS}"
)
_TURN_VALUES = "(" + ", ".join(["%s"] * len(_TURN_COLUMNS.split(", "))) + ")"


class _HeadMoved(Exception):
    """Another writer moved a session's head between our read and our update: the append starts over."""


class PostgresSessionStore:
    """A SessionStore in PostgreSQL: the shared store of a fleet of workers (docs/storage.md, docs/fleet.md).
    It has both optional capabilities: running totals per turn and forward ranges of a history.

    Appends are one transaction each (a batch too): turn ids come from a sequence, and a session's head moves by
    compare-and-set (`UPDATE ... WHERE head_turn_id IS NOT DISTINCT FROM <the head read>`), so any number of
    processes on any number of machines append at once, and appends to one session from two writers both land on
    its chain (the loser of a race reads the new head and tries again). Turns are never updated. Payloads are the
    same msgpack bytes as SQLite's and CXDB's; large ones go to the content-addressed blob table. The schema is
    created (and migrated) on first use. Connections come from a small psycopg pool (safe for threads).
    """

    def __init__(
        self,
        dsn: str,
        *,
        clock: Clock | None = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        application_name: str = "orchestra",
        max_connections: int = 4,
    ) -> None:
        self.location = display_dsn(dsn)
        self._clock = clock or SystemClock()
        self._inline_limit = inline_limit
        options = connection_options(application_name)
        self._connect_check(dsn, options)
        self._pool: ConnectionPool | None = ConnectionPool(
            dsn,
            kwargs=options,
            min_size=1,
            max_size=max(max_connections, 1),
            open=False,
            timeout=CONNECT_TIMEOUT_S * 2,
            check=ConnectionPool.check_connection,
            name="orchestra-store",
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailableError(f"session store {self.location}: no connection within {CONNECT_TIMEOUT_S * 2}s") from None

    def _connect_check(self, dsn: str, options: dict[str, Any]) -> None:
        """Connect once (a clear error, within the connect timeout, when the database cannot be reached) and
        create or migrate the schema."""
        try:
            with psycopg.connect(dsn, autocommit=True, **options) as connection:
                migrate(connection, self.location)
        except psycopg.Error as error:
            raise store_error(error, self.location, "open the store") from None

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # sessions ---------------------------------------------------------------------------------------------
    def create_session(self, metadata: SessionMetadata) -> SessionInfo:
        return self._insert_session(metadata, None)

    def fork_session(self, base_turn_id: Id, metadata: SessionMetadata) -> SessionInfo:
        return self._insert_session(metadata, base_turn_id)

    def get_session(self, session_id: Id) -> SessionInfo:
        number = self._number(session_id)
        with self._connection(f"read session {session_id}") as connection:
            row = connection.execute(f"{_SESSION_SELECT} WHERE s.id = %s", (number,)).fetchone()
        if row is None:
            raise self._no_session(session_id)
        return session_info(tuple(row))

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        with self._connection("list sessions") as connection:
            rows = connection.execute(
                f"{_SESSION_SELECT} ORDER BY s.updated_at_ms DESC, s.head_turn_id DESC NULLS LAST, s.id DESC LIMIT %s",
                (max(limit, 0),),
            ).fetchall()
        return [session_info(tuple(row)) for row in rows]

    def head(self, session_id: Id) -> SessionHead:
        number = self._number(session_id)
        with self._connection(f"read session {session_id}") as connection:
            head_id, depth, *_cursor = self._head_row(connection, number, session_id)
        return SessionHead(str(number), format_id(head_id), depth or 0)

    def _insert_session(self, metadata: SessionMetadata, base_turn_id: Id | None) -> SessionInfo:
        now = to_ms(self._clock.now())
        with self._connection("create a session") as connection:
            base = self._turn_row(connection, base_turn_id)[0] if base_turn_id is not None else None
            row = connection.execute(
                f"INSERT INTO {_S}.sessions (created_at_ms, updated_at_ms, head_turn_id, base_turn_id, pipeline, title, "
                "labels, parent_session_id, spawn_reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    now, now, base, base, metadata.pipeline, metadata.title, json.dumps(list(metadata.labels)),
                    metadata.parent_session_id, metadata.spawn_reason,
                ),
            ).fetchone()  # fmt: skip
        assert row is not None
        return self.get_session(int(row[0]))

    # appends ----------------------------------------------------------------------------------------------
    def append(
        self,
        session_id: Id,
        type_id: str,
        type_version: int,
        data: TurnData,
        *,
        parent_turn_id: Id | None = None,
    ) -> StoredTurn:
        return self.append_batch([TurnAppend(session_id, type_id, type_version, data, parent_turn_id)])[0]

    def append_batch(self, turns: Sequence[TurnAppend]) -> list[StoredTurn]:
        if not turns:
            return []
        prepared = [self._prepare(turn) for turn in turns]
        action = f"append to session {turns[0].session_id}"
        for attempt in range(_MAX_CAS_ATTEMPTS):
            try:
                with self._connection(action) as connection, connection.transaction():
                    return self._append_once(connection, turns, prepared)
            except _HeadMoved:
                time.sleep(random.uniform(0, min(0.002 * (attempt + 1), 0.05)))
        raise StoreLockedError(
            f"session store {self.location}: cannot {action}: other writers kept moving its head "
            f"({_MAX_CAS_ATTEMPTS} attempts)"
        )

    def _append_once(
        self, connection: psycopg.Connection, turns: Sequence[TurnAppend], prepared: list[tuple[Any, ...]]
    ) -> list[StoredTurn]:
        created_ms = to_ms(self._clock.now())
        heads: dict[int, tuple[int | None, int, SessionCursor]] = {}
        for turn, (number, *_rest) in zip(turns, prepared, strict=True):
            if number not in heads:
                heads[number] = _with_cursor(self._head_row(connection, number, turn.session_id))
        read = {number: head[0] for number, head in heads.items()}  # the compare of the compare-and-set
        # Ids after the heads are read: a turn's id is then larger than its parent's, whoever committed first.
        ids = [
            int(row[0])
            for row in connection.execute(
                f"SELECT nextval('{_S}.turn_ids') FROM generate_series(1, %s)", (len(turns),)
            ).fetchall()
        ]
        rows: list[tuple[Any, ...]] = []
        blobs: list[tuple[Any, ...]] = []
        stored: list[StoredTurn] = []
        branched: set[int] = set()  # sessions a turn of the batch hangs off an older turn of: no longer linear
        for turn, (number, plain, payload, digest, blob), turn_id in zip(turns, prepared, ids, strict=True):
            parent_id, depth, parent = heads[number]
            if turn.parent_turn_id is not None:
                parent_id, depth, parent = _with_cursor(self._turn_row(connection, turn.parent_turn_id))
                if parent_id != heads[number][0]:
                    branched.add(number)
            cursor = (parent if parent_id else SessionCursor()).after(str(turn_id), turn.type_id, plain)
            turn_depth = depth + 1 if parent_id else 0
            rows.append((
                turn_id, parent_id, turn_depth, number, turn.type_id, turn.type_version, created_ms, digest,
                None if blob is not None else payload, parse_id(cursor.checkpoint_turn_id), STATUS_CODES[cursor.status],
                *totals_columns(cursor),
            ))  # fmt: skip
            if blob is not None:
                blobs.append((digest, len(payload), *blob))
            stored.append(StoredTurn(
                str(turn_id), format_id(parent_id), turn_depth, turn.type_id, turn.type_version, plain, from_ms(created_ms),
            ))  # fmt: skip
            heads[number] = (turn_id, turn_depth, cursor)
        with connection.cursor() as statement:
            if blobs:
                statement.executemany(
                    f"INSERT INTO {_S}.blobs (hash, size, compression, data) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (hash) DO NOTHING",
                    blobs,
                )
            values = ", ".join([_TURN_VALUES] * len(rows))
            statement.execute(
                f"INSERT INTO {_S}.turns ({_TURN_COLUMNS}) VALUES {values}",
                [value for row in rows for value in row],
            )
            for number, head in heads.items():
                statement.execute(
                    f"UPDATE {_S}.sessions SET head_turn_id = %s, updated_at_ms = %s "
                    "WHERE id = %s AND head_turn_id IS NOT DISTINCT FROM %s",
                    (head[0], created_ms, number, read[number]),
                )
                if statement.rowcount != 1:
                    raise _HeadMoved()
            for number in branched:
                statement.execute(f"UPDATE {_S}.sessions SET linear = false WHERE id = %s AND linear", (number,))
        return stored

    def _prepare(self, turn: TurnAppend) -> tuple[int, dict[Any, Any], bytes, bytes, tuple[int, bytes] | None]:
        number = self._number(turn.session_id)
        plain = normalize_turn_data(turn.data)
        payload = encode_payload(plain)
        blob = compress(payload, threshold=_COMPRESS_FROM) if len(payload) > self._inline_limit else None
        return number, plain, payload, content_hash(payload), blob

    # reads ------------------------------------------------------------------------------------------------
    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        with self._connection(f"read turn {turn_id}") as connection:
            target = self._in_history(connection, session_id, turn_id)
            return self._load(connection, target)

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> TurnPage:
        number = self._number(session_id)
        with self._connection(f"read the turns of session {session_id}") as connection:
            start = self._head_row(connection, number, session_id)[0]
            if before_turn_id is not None:
                start = self._parent_of(connection, before_turn_id)
            if start is None or limit <= 0:
                return TurnPage((), None)
            source = f"chain JOIN {_S}.turns t ON t.id = chain.id"
            rows = connection.execute(
                _CHAIN + _TURN_SELECT.format(source=source) + " ORDER BY t.id",
                (start, limit),
            ).fetchall()
        page = tuple(stored_turn(_bytes_row(row), self.location) for row in rows)
        more = bool(page) and page[0].parent_turn_id is not None
        return TurnPage(page, page[0].turn_id if more else None)

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        number = self._number(session_id)
        with self._connection(f"read the turns of session {session_id}") as connection:
            self._head_row(connection, number, session_id)
            floor = -1 if after_turn_id is None else int(self._turn_row(connection, after_turn_id)[0])
            if limit <= 0:
                return TurnRange((), False)
            rows = rows_after(connection, RANGE_QUERIES, number, floor, limit + 1)
        found = tuple(stored_turn(_bytes_row(row), self.location) for row in rows[:limit])
        return TurnRange(found, len(rows) > limit)

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        number = self._number(session_id)
        with self._connection(f"find the latest checkpoint of session {session_id}") as connection:
            checkpoint_id = self._head_row(connection, number, session_id)[2]
            if at_turn_id is not None:
                target = self._in_history(connection, session_id, at_turn_id)
                checkpoint_id = self._turn_row(connection, target)[2]
            return self._load(connection, checkpoint_id) if checkpoint_id else None

    # totals (the optional SessionTotalsReader) ------------------------------------------------------------
    def session_totals(self, session_id: Id, *, own: bool = False) -> SessionTotals:
        number = self._number(session_id)
        with self._connection(f"read the totals of session {session_id}") as connection:
            head_id, _depth, cursor = _with_cursor(self._head_row(connection, number, session_id))
            totals = cursor.totals if head_id is not None else SessionTotals()
            if own:
                base = self._base_turn(connection, number, session_id)
                if base is not None:
                    totals = totals.since(_with_cursor(self._turn_row(connection, base))[2].totals)
        return totals

    def child_sessions(self, session_id: Id) -> list[SessionInfo]:
        number = self._number(session_id)
        with self._connection(f"read the forks of session {session_id}") as connection:
            if connection.execute(f"SELECT 1 FROM {_S}.sessions WHERE id = %s", (number,)).fetchone() is None:
                raise self._no_session(session_id)
            rows = connection.execute(
                f"{_SESSION_SELECT} WHERE s.parent_session_id = %s ORDER BY s.id", (str(number),)
            ).fetchall()
        return [session_info(tuple(row)) for row in rows]

    def fork_point(self, session_id: Id) -> str | None:
        number = self._number(session_id)
        with self._connection(f"read session {session_id}") as connection:
            return format_id(self._base_turn(connection, number, session_id))

    def _base_turn(self, connection: psycopg.Connection, number: int, session_id: Id) -> int | None:
        row = connection.execute(f"SELECT base_turn_id FROM {_S}.sessions WHERE id = %s", (number,)).fetchone()
        if row is None:
            raise self._no_session(session_id)
        return None if row[0] is None else int(row[0])

    # blobs and bundles ------------------------------------------------------------------------------------
    def put_blob(self, data: bytes) -> str:
        content = bytes(data)
        digest = content_hash(content)
        with self._connection("store a blob") as connection:
            if connection.execute(f"SELECT 1 FROM {_S}.blobs WHERE hash = %s", (digest,)).fetchone() is None:
                connection.execute(
                    f"INSERT INTO {_S}.blobs (hash, size, compression, data) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (hash) DO NOTHING",
                    (digest, len(content), *compress(content, threshold=_COMPRESS_FROM)),
                )
        return digest.hex()

    def get_blob(self, blob_hash: str) -> bytes:
        key = normalize_blob_hash(blob_hash)
        with self._connection(f"read blob {key}") as connection:
            found = connection.execute(
                f"SELECT compression, data FROM {_S}.blobs WHERE hash = %s", (bytes.fromhex(key),)
            ).fetchone()
        if found is None:
            raise BlobNotFoundError(f"session store {self.location}: no blob {key}")
        return decompressed(found[0], bytes(found[1]), f"blob {key}", self.location)

    def publish_bundle(self, bundle: bytes) -> bool:
        bundle_id = parse_bundle_id(bundle)
        with self._connection(f"publish type bundle {bundle_id}") as connection:
            inserted = connection.execute(
                f"INSERT INTO {_S}.bundles (bundle_id, content, published_at_ms) VALUES (%s, %s, %s) "
                "ON CONFLICT (bundle_id) DO NOTHING RETURNING 1",
                (bundle_id, bytes(bundle), to_ms(self._clock.now())),
            ).fetchone()
            if inserted is not None:
                return True
            row = connection.execute(f"SELECT content FROM {_S}.bundles WHERE bundle_id = %s", (bundle_id,)).fetchone()
        if row is not None and bytes(row[0]) != bytes(bundle):
            raise BundleConflictError(f"bundle {bundle_id} already exists with different content")
        return False

    def get_bundle(self, bundle_id: str) -> bytes | None:
        with self._connection(f"read type bundle {bundle_id}") as connection:
            row = connection.execute(f"SELECT content FROM {_S}.bundles WHERE bundle_id = %s", (bundle_id,)).fetchone()
        return bytes(row[0]) if row else None

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # helpers ----------------------------------------------------------------------------------------------
    @contextmanager
    def _connection(self, action: str) -> Iterator[psycopg.Connection]:
        pool = self._pool
        if pool is None:
            raise StoreError(f"session store {self.location} is closed")
        try:
            with pool.connection() as connection:
                yield connection
        except psycopg.Error as error:
            raise store_error(error, self.location, action) from None
        except PoolTimeout:
            raise StoreUnavailableError(
                f"session store {self.location}: cannot {action}: no database connection became free"
            ) from None

    def _number(self, session_id: Id) -> int:
        number = parse_id(session_id)
        if number is None or number >= 2**63:
            raise self._no_session(session_id)
        return number

    def _no_session(self, session_id: Id) -> SessionNotFoundError:
        return SessionNotFoundError(f"no session {str(session_id)!r} in session store {self.location}")

    def _head_row(self, connection: psycopg.Connection, number: int, session_id: Id) -> tuple[Any, ...]:
        row = connection.execute(_HEAD_SELECT, (number,)).fetchone()
        if row is None:
            raise self._no_session(session_id)
        return tuple(row)

    def _turn_row(self, connection: psycopg.Connection, turn_id: Id) -> tuple[Any, ...]:
        number = parse_id(turn_id)
        row = None
        if number is not None and number < 2**63:
            row = connection.execute(
                f"SELECT id, depth, checkpoint_id, status, {TOTALS_COLUMNS} FROM {_S}.turns WHERE id = %s", (number,)
            ).fetchone()
        if row is None:
            raise TurnNotFoundError(f"no turn {str(turn_id)!r} in session store {self.location}")
        return tuple(row)

    def _parent_of(self, connection: psycopg.Connection, turn_id: Id) -> int | None:
        number = self._turn_row(connection, turn_id)[0]
        row = connection.execute(f"SELECT parent_id FROM {_S}.turns WHERE id = %s", (number,)).fetchone()
        return None if row is None else row[0]

    def _in_history(self, connection: psycopg.Connection, session_id: Id, turn_id: Id) -> int:
        head = self._head_row(connection, self._number(session_id), session_id)[0]
        target = parse_id(turn_id)
        if (
            head is None
            or target is None
            or target >= 2**63
            or connection.execute(_IN_HISTORY, (head, target, target)).fetchone() is None
        ):
            raise TurnNotFoundError(
                f"turn {str(turn_id)!r} is not in the history of session {session_id} ({self.location})"
            )
        return target

    def _load(self, connection: psycopg.Connection, turn_id: int) -> StoredTurn:
        row = connection.execute(
            _TURN_SELECT.format(source=f"{_S}.turns t") + " WHERE t.id = %s",
            (turn_id,),
        ).fetchone()
        if row is None:
            raise StoreCorruptError(f"session store {self.location}: turn {turn_id} is referenced but missing")
        return stored_turn(_bytes_row(row), self.location)


def _with_cursor(row: Sequence[Any]) -> tuple[int | None, int, SessionCursor]:
    """A head or turn row (id, depth, checkpoint id, status code, `TOTALS_COLUMNS`) as (id, depth, cursor)."""
    turn_id, depth, checkpoint_id, status, *counts, lifecycle_id = row
    totals = SessionTotals.of([int(count or 0) for count in counts], format_id(lifecycle_id))
    cursor = SessionCursor(format_id(checkpoint_id), status_from_code(status or 0), totals)
    return (None if turn_id is None else int(turn_id)), depth or 0, cursor


def _bytes_row(row: Sequence[Any]) -> tuple[Any, ...]:
    """A turn row with its payload and blob as bytes (psycopg may hand back memoryviews)."""
    values = list(row)
    for index in (6, 8):
        if isinstance(values[index], memoryview):
            values[index] = bytes(values[index])
    return tuple(values)
