"""SqliteSessionStore: the embedded default store, one SQLite file in WAL mode (`.orchestra/orchestra.db`)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestra_adapters.process.system_clock import SystemClock
from orchestra_adapters.storage.payload import (
    compress,
    content_hash,
    decode_payload,
    decompress,
    encode_payload,
)
from orchestra_adapters.storage.sqlite_errors import store_error
from orchestra_adapters.storage.sqlite_schema import cursor_of, migrate
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.session_store import (
    Id,
    SessionHead,
    SessionInfo,
    SessionMetadata,
    StoredTurn,
    TurnData,
    TurnPage,
)
from orchestra_core.session.bundle import parse_bundle_id
from orchestra_core.session.codec import normalize_turn_data
from orchestra_core.session.cursor import STATUS_CODES, SessionCursor, status_from_code
from orchestra_core.session.errors import (
    BlobNotFoundError,
    BundleConflictError,
    SessionNotFoundError,
    StoreCorruptError,
    StoreError,
    StoreReadOnlyError,
    StoreUnavailableError,
    TurnNotFoundError,
)
from orchestra_core.session.identifiers import format_id, normalize_blob_hash, parse_id

DEFAULT_BUSY_TIMEOUT_S = 5.0
DEFAULT_INLINE_LIMIT = 8 * 1024  # larger payloads go to the blob table, zstd-compressed and deduplicated
_COMPRESS_FROM = 512

_SESSION_SELECT = (
    "SELECT s.id, s.created_at_ms, s.updated_at_ms, s.head_turn_id, s.pipeline, s.title, s.labels, "
    "s.parent_session_id, s.spawn_reason, t.depth, t.status "
    "FROM sessions s LEFT JOIN turns t ON t.id = s.head_turn_id"
)
_HEAD_SELECT = (
    "SELECT s.head_turn_id, t.depth, t.checkpoint_id, t.status "
    "FROM sessions s LEFT JOIN turns t ON t.id = s.head_turn_id WHERE s.id = ?"
)
_TURN_SELECT = (
    "SELECT t.id, t.parent_id, t.depth, t.type_id, t.type_version, t.created_at_ms, t.payload, "
    "b.compression, b.data FROM {source} LEFT JOIN blobs b ON t.payload IS NULL AND b.hash = t.payload_hash"
)
_CHAIN = (
    "WITH RECURSIVE chain(id, n) AS (SELECT ?, 1 UNION ALL "
    "SELECT t.parent_id, chain.n + 1 FROM turns t JOIN chain ON t.id = chain.id "
    "WHERE chain.n < ? AND t.parent_id IS NOT NULL) "
)
_IN_HISTORY = (
    "WITH RECURSIVE chain(id) AS (SELECT ? UNION ALL "
    "SELECT t.parent_id FROM turns t JOIN chain ON t.id = chain.id WHERE t.parent_id >= ?) "
    "SELECT 1 FROM chain WHERE id = ? LIMIT 1"
)


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
        self._connection: sqlite3.Connection | None = self._open()

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
                f"{_SESSION_SELECT} WHERE s.id = ?", (self._number(session_id),)
            ).fetchone()
            if row is None:
                raise self._no_session(session_id)
            return _info(row)

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        with self._guard("list sessions") as connection:
            rows = connection.execute(
                f"{_SESSION_SELECT} ORDER BY s.updated_at_ms DESC, s.head_turn_id DESC, s.id DESC LIMIT ?",
                (max(limit, 0),),
            )
            return [_info(row) for row in rows.fetchall()]

    def head(self, session_id: Id) -> SessionHead:
        with self._guard(f"read session {session_id}") as connection:
            head_id, depth, _checkpoint, _status = self._head_row(connection, session_id)
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
        plain = normalize_turn_data(data)
        payload = encode_payload(plain)
        digest = content_hash(payload)
        blob = compress(payload, threshold=_COMPRESS_FROM) if len(payload) > self._inline_limit else None
        now = self._clock.now()
        with self._transaction(f"append to session {session_id}") as connection:
            head_id, depth, checkpoint_id, status = self._head_row(connection, session_id)
            if parent_turn_id is not None:
                head_id, depth, checkpoint_id, status = self._turn_row(connection, parent_turn_id)
            parent = cursor_of(checkpoint_id, status) if head_id else SessionCursor()
            turn_id = connection.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM turns").fetchone()[0]
            cursor = parent.after(str(turn_id), type_id, plain)
            if blob is not None:
                connection.execute(
                    "INSERT OR IGNORE INTO blobs (hash, size, compression, data) VALUES (?, ?, ?, ?)",
                    (digest, len(payload), *blob),
                )
            connection.execute(
                "INSERT INTO turns (id, parent_id, depth, session_id, type_id, type_version, created_at_ms, "
                "payload_hash, payload, checkpoint_id, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn_id,
                    head_id,
                    depth + 1 if head_id else 0,
                    parse_id(session_id),
                    type_id,
                    type_version,
                    _ms(now),
                    digest,
                    None if blob is not None else payload,
                    parse_id(cursor.checkpoint_turn_id),
                    STATUS_CODES[cursor.status],
                ),
            )
            connection.execute(
                "UPDATE sessions SET head_turn_id = ?, updated_at_ms = ? WHERE id = ?",
                (turn_id, _ms(now), parse_id(session_id)),
            )
        created = datetime.fromtimestamp(_ms(now) / 1000, UTC)
        return StoredTurn(
            str(turn_id),
            format_id(head_id),
            depth + 1 if head_id else 0,
            type_id,
            type_version,
            plain,
            created,
        )

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
                _CHAIN
                + _TURN_SELECT.format(source="chain JOIN turns t ON t.id = chain.id")
                + " ORDER BY t.id",
                (start, limit),
            ).fetchall()
            page = tuple(self._stored(row) for row in rows)
            more = bool(page) and page[0].parent_turn_id is not None
            return TurnPage(page, page[0].turn_id if more else None)

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        with self._guard(f"find the latest checkpoint of session {session_id}") as connection:
            checkpoint_id = self._head_row(connection, session_id)[2]
            if at_turn_id is not None:
                target = self._in_history(connection, session_id, at_turn_id)
                checkpoint_id = self._turn_row(connection, target)[2]
            return self._load(connection, checkpoint_id) if checkpoint_id else None

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
            return self._decompressed(found[0], found[1], f"blob {key}")

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
                (bundle_id, bytes(bundle), _ms(self._clock.now())),
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

    def _open(self) -> sqlite3.Connection:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            kind = StoreReadOnlyError if isinstance(error, PermissionError) else StoreUnavailableError
            raise kind(
                f"session store {self.location}: cannot create its directory: {error.strerror}"
            ) from None
        connection = None
        try:
            connection = sqlite3.connect(
                self._path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            migrate(connection, self.location)
            return connection
        except (sqlite3.Error, StoreError) as error:
            if connection is not None:
                connection.close()
            if isinstance(error, StoreError):
                raise
            raise store_error(error, self.location, "open the store") from None

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._connection is None:
                raise StoreError(f"session store {self.location} is closed")
            try:
                yield self._connection
            except sqlite3.Error as error:
                raise store_error(error, self.location, action) from None

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
        now = _ms(self._clock.now())
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
        row = connection.execute(_HEAD_SELECT, (self._number(session_id),)).fetchone()
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
        head = self._head_row(connection, session_id)[0]
        target = parse_id(turn_id)
        if (
            head is None
            or target is None
            or connection.execute(_IN_HISTORY, (head, target, target)).fetchone() is None
        ):
            raise TurnNotFoundError(
                f"turn {str(turn_id)!r} is not in the history of session {session_id} ({self.location})"
            )
        return target

    def _load(self, connection: sqlite3.Connection, turn_id: int) -> StoredTurn:
        row = connection.execute(
            _TURN_SELECT.format(source="turns t") + " WHERE t.id = ?", (turn_id,)
        ).fetchone()
        if row is None:
            raise StoreCorruptError(
                f"session store {self.location}: turn {turn_id} is referenced but missing"
            )
        return self._stored(row)

    def _stored(self, row: tuple[Any, ...]) -> StoredTurn:
        turn_id, parent_id, depth, type_id, version, created_ms, inline, compression, blob = row
        payload = inline if inline is not None else self._decompressed(compression, blob, f"turn {turn_id}")
        try:
            data = decode_payload(payload)
        except ValueError as error:
            raise StoreCorruptError(
                f"session store {self.location}: turn {turn_id} cannot be read: {error}"
            ) from None
        created = datetime.fromtimestamp(created_ms / 1000, UTC)
        return StoredTurn(str(turn_id), format_id(parent_id), depth, type_id, version, data, created)

    def _decompressed(self, compression: int | None, data: bytes | None, what: str) -> bytes:
        if compression is None or data is None:
            raise StoreCorruptError(f"session store {self.location}: the blob of {what} is missing")
        try:
            return decompress(compression, data)
        except ValueError as error:
            raise StoreCorruptError(
                f"session store {self.location}: {what} cannot be read: {error}"
            ) from None


def _info(row: tuple[Any, ...]) -> SessionInfo:
    number, created_ms, updated_ms, head_id, pipeline, title, labels, parent, reason, depth, status = row
    metadata = SessionMetadata(pipeline, title, tuple(json.loads(labels)), parent, reason)
    return SessionInfo(
        session_id=str(number),
        metadata=metadata,
        status=status_from_code(status or 0),
        created_at=datetime.fromtimestamp(created_ms / 1000, UTC),
        updated_at=datetime.fromtimestamp(updated_ms / 1000, UTC),
        head_turn_id=format_id(head_id),
        head_depth=depth or 0,
    )


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
