"""SqliteSessionStore: the embedded default store, one SQLite file in WAL mode (`.orchestra/orchestra.db`)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orchestra_adapters.storage.history_ranges import rows_after
from orchestra_adapters.storage.payload import (
    compress,
    content_hash,
    encode_payload,
)
from orchestra_adapters.storage.sqlite_errors import DAMAGE_SYMPTOMS, damage_found, store_error
from orchestra_adapters.storage.sqlite_ranges import QUERIES as RANGE_QUERIES
from orchestra_adapters.storage.sqlite_rows import (
    CHAIN,
    HEAD_AND_TOP_SELECT,
    HEAD_SELECT,
    IN_HISTORY,
    SESSION_SELECT,
    TOTALS_COLUMNS,
    TURN_CURSOR_SELECT,
    TURN_SELECT,
    cursor_columns,
    cursor_of,
    decompressed,
    from_ms,
    session_info,
    stored_turn,
    to_ms,
)
from orchestra_adapters.storage.sqlite_schema import open_database
from orchestra_core.model.store_errors import (
    BlobNotFoundError,
    BundleConflictError,
    SessionNotFoundError,
    StoreCorruptError,
    StoreError,
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
from orchestra_core.session.cursor import SessionCursor
from orchestra_core.session.identifiers import format_id, normalize_blob_hash, parse_id

DEFAULT_BUSY_TIMEOUT_S = 5.0
DEFAULT_INLINE_LIMIT = 8 * 1024  # larger payloads go to the blob table, zstd-compressed and deduplicated
_COMPRESS_FROM = 512


class SqliteSessionStore:
    """A SessionStore in one SQLite file: WAL, synchronous=NORMAL, one `BEGIN IMMEDIATE` transaction per write.

    Safe for several threads (one connection behind a lock) and several processes (SQLite file locks;
    writers wait up to `busy_timeout_s` for each other, readers never wait). Turn payloads are msgpack
    with the bundle's integer tags; payloads over `inline_limit` bytes live in the content-addressed
    blob table (BLAKE3 of the uncompressed bytes, zstd when it helps) next to `put_blob`'s blobs.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        clock: Clock | None = None,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> None:
        self._path = Path(path)
        self.location = str(self._path)
        self._clock = clock or SystemClock()
        self._busy_timeout_s = busy_timeout_s
        self._inline_limit = inline_limit
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = open_database(self._path, busy_timeout_s)

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def create_session(self, metadata: SessionMetadata) -> SessionInfo:
        return self._insert_session(metadata, None)

    def fork_session(self, base_turn_id: Id, metadata: SessionMetadata) -> SessionInfo:
        return self._insert_session(metadata, base_turn_id)

    def get_session(self, session_id: Id) -> SessionInfo:
        with self._guard(f"read session {session_id}") as connection:
            row = connection.execute(
                f"{SESSION_SELECT} WHERE s.id = ?", (self._number(session_id),)
            ).fetchone()
            if row is None:
                raise self._no_session(session_id)
            return session_info(row)

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        with self._guard("list sessions") as connection:
            rows = connection.execute(
                f"{SESSION_SELECT} ORDER BY s.updated_at_ms DESC, s.head_turn_id DESC, s.id DESC LIMIT ?",
                (max(limit, 0),),
            )
            return [session_info(row) for row in rows.fetchall()]

    def head(self, session_id: Id) -> SessionHead:
        with self._guard(f"read session {session_id}") as connection:
            head_id, depth = self._head_row(connection, session_id)[:2]
            return SessionHead(str(parse_id(session_id)), format_id(head_id), depth or 0)

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
        created_ms = to_ms(self._clock.now())
        action = f"append to session {turns[0].session_id}"
        with self._transaction(action) as connection:
            # The write lock is held from BEGIN IMMEDIATE on, so ids are handed out here, in order: a
            # checkpoint's cursor points at itself, so it needs its id before the insert.
            heads: dict[int, tuple[int | None, int, SessionCursor]] = {}
            next_id: int | None = None
            rows: list[tuple[Any, ...]] = []
            stored: list[StoredTurn] = []
            for turn, (number, plain, payload, digest, blob) in zip(turns, prepared, strict=True):
                if number not in heads:
                    head_id, depth, cursor, top = self._head_and_top(connection, number)
                    heads[number] = (head_id, depth, cursor)
                    next_id = top + 1 if next_id is None else next_id
                assert next_id is not None
                parent_id, depth, parent_cursor = heads[number]
                if turn.parent_turn_id is not None:
                    parent_id, depth, parent_cursor = self._turn_cursor(connection, turn.parent_turn_id)
                    if parent_id != heads[number][0]:
                        connection.execute("UPDATE sessions SET linear = 0 WHERE id = ?", (number,))
                cursor = (parent_cursor if parent_id else SessionCursor()).after(str(next_id), turn.type_id, plain)
                turn_depth = depth + 1 if parent_id else 0
                rows.append((
                    next_id, parent_id, turn_depth, number, turn.type_id, turn.type_version, created_ms, digest,
                    None if blob is not None else payload, *cursor_columns(cursor),
                ))  # fmt: skip
                if blob is not None:
                    connection.execute(
                        "INSERT OR IGNORE INTO blobs (hash, size, compression, data) VALUES (?, ?, ?, ?)",
                        (digest, len(payload), *blob),
                    )
                stored.append(StoredTurn(
                    str(next_id), format_id(parent_id), turn_depth, turn.type_id, turn.type_version, plain,
                    from_ms(created_ms),
                ))  # fmt: skip
                heads[number] = (next_id, turn_depth, cursor)
                next_id += 1
            _insert_turns(connection, rows)
            connection.executemany(
                "UPDATE sessions SET head_turn_id = ?, updated_at_ms = ? WHERE id = ?",
                [(head[0], created_ms, number) for number, head in heads.items()],
            )
        return stored

    def _prepare(self, turn: TurnAppend) -> tuple[int, dict[Any, Any], bytes, bytes, tuple[int, bytes] | None]:
        """The session number, plain data, payload bytes, hash and (for a large payload) blob of a turn."""
        number = self._number(turn.session_id)
        plain = normalize_turn_data(turn.data)
        payload = encode_payload(plain)
        blob = compress(payload, threshold=_COMPRESS_FROM) if len(payload) > self._inline_limit else None
        return number, plain, payload, content_hash(payload), blob

    def _head_and_top(
        self, connection: sqlite3.Connection, number: int
    ) -> tuple[int | None, int, SessionCursor, int]:
        """The session's head (id, depth, cursor) and the largest turn id so far."""
        row = connection.execute(HEAD_AND_TOP_SELECT, (number,)).fetchone()
        if row is None:
            raise self._no_session(number)
        head_id, depth, *cursor, top = row
        return head_id, depth or 0, cursor_of(tuple(cursor)), top

    def _turn_cursor(self, connection: sqlite3.Connection, turn_id: Id) -> tuple[int, int, SessionCursor]:
        """A turn's id, depth and cursor."""
        number = parse_id(turn_id)
        row = None if number is None else connection.execute(TURN_CURSOR_SELECT, (number,)).fetchone()
        if row is None:
            raise TurnNotFoundError(f"no turn {str(turn_id)!r} in session store {self.location}")
        found, depth, *cursor = row
        return found, depth, cursor_of(tuple(cursor))

    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        with self._guard(f"read turn {turn_id}") as connection:
            target = self._in_history(connection, session_id, turn_id)
            return self._load(connection, target)

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> TurnPage:
        with self._guard(f"read the turns of session {session_id}") as connection:
            start = self._head_row(connection, session_id)[0]
            if before_turn_id is not None:
                start = self._parent_of(connection, before_turn_id)
            if start is None or limit <= 0:
                return TurnPage((), None)
            rows = connection.execute(
                CHAIN + TURN_SELECT.format(source="chain JOIN turns t ON t.id = chain.id") + " ORDER BY t.id",
                (start, limit),
            ).fetchall()
            page = tuple(stored_turn(row, self.location) for row in rows)
            more = bool(page) and page[0].parent_turn_id is not None
            return TurnPage(page, page[0].turn_id if more else None)

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        with self._guard(f"read the turns of session {session_id}") as connection:
            number = self._number(session_id)
            self._head_row(connection, session_id)
            floor = -1 if after_turn_id is None else self._turn_row(connection, after_turn_id)[0]
            if limit <= 0:
                return TurnRange((), False)
            rows = rows_after(connection, RANGE_QUERIES, number, floor, limit + 1)
            return TurnRange(tuple(stored_turn(row, self.location) for row in rows[:limit]), len(rows) > limit)

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        with self._guard(f"find the latest checkpoint of session {session_id}") as connection:
            checkpoint_id = self._head_row(connection, session_id)[2]
            if at_turn_id is not None:
                target = self._in_history(connection, session_id, at_turn_id)
                checkpoint_id = self._turn_row(connection, target)[2]
            return self._load(connection, checkpoint_id) if checkpoint_id else None

    def session_totals(self, session_id: Id, *, own: bool = False) -> SessionTotals:
        with self._guard(f"read the totals of session {session_id}") as connection:
            row = self._head_row(connection, session_id)
            totals = cursor_of(row[2:]).totals if row[0] is not None else SessionCursor().totals
            if own:
                base = parse_id(self.fork_point(session_id))
                if base is not None:
                    totals = totals.since(self._turn_cursor(connection, base)[2].totals)
            return totals

    def child_sessions(self, session_id: Id) -> list[SessionInfo]:
        with self._guard(f"read the forks of session {session_id}") as connection:
            number = self._number(session_id)
            if connection.execute("SELECT 1 FROM sessions WHERE id = ?", (number,)).fetchone() is None:
                raise self._no_session(session_id)
            rows = connection.execute(
                f"{SESSION_SELECT} WHERE s.parent_session_id = ? ORDER BY s.id", (str(number),)
            )
            return [session_info(row) for row in rows.fetchall()]

    def fork_point(self, session_id: Id) -> str | None:
        with self._guard(f"read session {session_id}") as connection:
            row = connection.execute(
                "SELECT base_turn_id FROM sessions WHERE id = ?", (self._number(session_id),)
            ).fetchone()
            if row is None:
                raise self._no_session(session_id)
            return format_id(row[0])

    def put_blob(self, data: bytes) -> str:
        content = bytes(data)
        digest = content_hash(content)
        with self._guard("store a blob") as connection:
            if connection.execute("SELECT 1 FROM blobs WHERE hash = ?", (digest,)).fetchone() is None:
                connection.execute(
                    "INSERT OR IGNORE INTO blobs (hash, size, compression, data) VALUES (?, ?, ?, ?)",
                    (digest, len(content), *compress(content, threshold=_COMPRESS_FROM)),
                )
        return digest.hex()

    def get_blob(self, blob_hash: str) -> bytes:
        key = normalize_blob_hash(blob_hash)
        with self._guard(f"read blob {key}") as connection:
            row = connection.execute(
                "SELECT compression, data FROM blobs WHERE hash = ?", (bytes.fromhex(key),)
            )
            found = row.fetchone()
            if found is None:
                raise BlobNotFoundError(f"session store {self.location}: no blob {key}")
            return decompressed(found[0], found[1], f"blob {key}", self.location)

    def publish_bundle(self, bundle: bytes) -> bool:
        bundle_id = parse_bundle_id(bundle)
        with self._transaction(f"publish type bundle {bundle_id}") as connection:
            row = connection.execute(
                "SELECT content FROM bundles WHERE bundle_id = ?", (bundle_id,)
            ).fetchone()
            if row is not None:
                if bytes(row[0]) != bytes(bundle):
                    raise BundleConflictError(f"bundle {bundle_id} already exists with different content")
                return False
            connection.execute(
                "INSERT INTO bundles (bundle_id, content, published_at_ms) VALUES (?, ?, ?)",
                (bundle_id, bytes(bundle), to_ms(self._clock.now())),
            )
            return True

    def get_bundle(self, bundle_id: str) -> bytes | None:
        with self._guard(f"read type bundle {bundle_id}") as connection:
            row = connection.execute(
                "SELECT content FROM bundles WHERE bundle_id = ?", (bundle_id,)
            ).fetchone()
            return bytes(row[0]) if row else None

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._connection is None:
                raise StoreError(f"session store {self.location} is closed")
            try:
                yield self._connection
            except sqlite3.Error as error:
                raise store_error(error, self.location, action) from None
            except DAMAGE_SYMPTOMS as error:
                damage = damage_found(self._connection, self.location, action)
                if damage is None:
                    raise
                raise damage from error

    @contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._guard(action) as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    def _insert_session(self, metadata: SessionMetadata, base_turn_id: Id | None) -> SessionInfo:
        now = to_ms(self._clock.now())
        with self._transaction("create a session") as connection:
            base = self._turn_row(connection, base_turn_id)[0] if base_turn_id is not None else None
            cursor = connection.execute(
                "INSERT INTO sessions (created_at_ms, updated_at_ms, head_turn_id, base_turn_id, pipeline, title, "
                "labels, parent_session_id, spawn_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    now,
                    now,
                    base,
                    base,
                    metadata.pipeline,
                    metadata.title,
                    json.dumps(list(metadata.labels)),
                    metadata.parent_session_id,
                    metadata.spawn_reason,
                ),
            )
            number = cursor.lastrowid
        return self.get_session(number)  # type: ignore[arg-type]

    def _number(self, session_id: Id) -> int:
        number = parse_id(session_id)
        if number is None:
            raise self._no_session(session_id)
        return number

    def _no_session(self, session_id: Id) -> SessionNotFoundError:
        return SessionNotFoundError(f"no session {str(session_id)!r} in session store {self.location}")

    def _head_row(self, connection: sqlite3.Connection, session_id: Id) -> tuple[Any, ...]:
        row = connection.execute(HEAD_SELECT, (self._number(session_id),)).fetchone()
        if row is None:
            raise self._no_session(session_id)
        return tuple(row)

    def _turn_row(self, connection: sqlite3.Connection, turn_id: Id) -> tuple[Any, ...]:
        number = parse_id(turn_id)
        row = None
        if number is not None:
            row = connection.execute(
                "SELECT id, depth, checkpoint_id, status FROM turns WHERE id = ?", (number,)
            ).fetchone()
        if row is None:
            raise TurnNotFoundError(f"no turn {str(turn_id)!r} in session store {self.location}")
        return tuple(row)

    def _parent_of(self, connection: sqlite3.Connection, turn_id: Id) -> int | None:
        number = self._turn_row(connection, turn_id)[0]
        return connection.execute("SELECT parent_id FROM turns WHERE id = ?", (number,)).fetchone()[0]

    def _in_history(self, connection: sqlite3.Connection, session_id: Id, turn_id: Id) -> int:
        number, target = self._number(session_id), parse_id(turn_id)
        row = connection.execute(
            "SELECT head_turn_id, base_turn_id, linear FROM sessions WHERE id = ?", (number,)
        ).fetchone()
        if row is None:
            raise self._no_session(session_id)
        head = row[0]
        found = (
            False if head is None or target is None else _on_straight_chain(connection, number, row, target)
        )
        if found is None:  # a session appended to after an older turn: walk its chain
            found = connection.execute(IN_HISTORY, (head, target, target)).fetchone() is not None
        if not found:
            raise TurnNotFoundError(
                f"turn {str(turn_id)!r} is not in the history of session {session_id} ({self.location})"
            )
        assert target is not None
        return target

    def _load(self, connection: sqlite3.Connection, turn_id: int) -> StoredTurn:
        row = connection.execute(
            TURN_SELECT.format(source="turns t") + " WHERE t.id = ?", (turn_id,)
        ).fetchone()
        if row is None:
            raise StoreCorruptError(
                f"session store {self.location}: turn {turn_id} is referenced but missing"
            )
        return stored_turn(row, self.location)


def _on_straight_chain(
    connection: sqlite3.Connection, number: int, session: tuple[Any, ...], target: int
) -> bool | None:
    """Whether turn `target` is in the history of session `number` (its row `session`: head, fork point,
    linear), answered from ids while the session and the sessions it was forked from are each one straight
    chain (their turns' ids grow along it); None when one of them is not."""
    found = connection.execute("SELECT session_id FROM turns WHERE id = ?", (target,)).fetchone()
    if found is None:
        return False
    owner = found[0]
    head, base, linear = session
    while True:
        if not linear:
            return None
        if target > head:
            return False
        if owner == number:
            return True
        if base is None:
            return False
        if target == base:
            return True
        (number,) = connection.execute("SELECT session_id FROM turns WHERE id = ?", (base,)).fetchone()
        row = connection.execute("SELECT base_turn_id, linear FROM sessions WHERE id = ?", (number,)).fetchone()
        head, (base, linear) = base, row


_TURN_COLUMNS = (
    "id, parent_id, depth, session_id, type_id, type_version, created_at_ms, payload_hash, payload, "
    f"checkpoint_id, status, {TOTALS_COLUMNS}"
)
_VALUES = "(" + ", ".join("?" * len(_TURN_COLUMNS.split(", "))) + ")"
_ROWS_PER_INSERT = 256  # 22 values each, far below SQLite's limit on parameters (32,766)


def _insert_turns(connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert turn rows with one statement per `_ROWS_PER_INSERT` rows (a node's turns in one)."""
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        values = ", ".join([_VALUES] * len(chunk))
        connection.execute(
            f"INSERT INTO turns ({_TURN_COLUMNS}) VALUES {values}", [value for row in chunk for value in row]
        )
