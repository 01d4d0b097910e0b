"""InMemorySessionStore: the SessionStore port in memory, with the same semantics as SQLite and CXDB."""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from attrs import define, evolve, frozen

from orchestra_core.model.store_errors import (
    BlobNotFoundError,
    BundleConflictError,
    SessionNotFoundError,
    StoreError,
    TurnNotFoundError,
)
from orchestra_core.ports.clock import Clock
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
from orchestra_core.session.content_hash import blake3_hex
from orchestra_core.session.cursor import SessionCursor
from orchestra_core.session.identifiers import format_id, normalize_blob_hash, parse_id


@frozen
class _Turn:
    stored: StoredTurn
    cursor: SessionCursor


@define
class _Session:
    metadata: SessionMetadata
    created_at: datetime
    updated_at: datetime
    head: int | None
    base: int | None = None


class InMemorySessionStore:
    """Sessions, turns, blobs and bundles in dicts; thread-safe; ids are counters like CXDB's."""

    location = "memory"

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._sessions: dict[int, _Session] = {}
        self._turns: dict[int, _Turn] = {}
        self._blobs: dict[str, bytes] = {}
        self._bundles: dict[str, bytes] = {}
        self._closed = False

    def create_session(self, metadata: SessionMetadata) -> SessionInfo:
        return self._new_session(metadata, None)

    def fork_session(self, base_turn_id: Id, metadata: SessionMetadata) -> SessionInfo:
        with self._lock:
            return self._new_session(metadata, self._turn(base_turn_id).stored.turn_id)

    def get_session(self, session_id: Id) -> SessionInfo:
        with self._lock:
            number = self._session_number(session_id)
            return self._info(number, self._sessions[number])

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        with self._lock:
            self._check_open()
            ordered = sorted(
                self._sessions.items(),
                key=lambda item: (item[1].updated_at, item[1].head or 0, item[0]),
                reverse=True,
            )
            return [self._info(number, session) for number, session in ordered[: max(limit, 0)]]

    def head(self, session_id: Id) -> SessionHead:
        with self._lock:
            number = self._session_number(session_id)
            head = self._sessions[number].head
            depth = self._turns[head].stored.depth if head else 0
            return SessionHead(str(number), format_id(head), depth)

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
        with self._lock:
            number = self._session_number(session_id)
            session = self._sessions[number]
            parent = self._turn(parent_turn_id) if parent_turn_id is not None else None
            if parent is None and session.head is not None:
                parent = self._turns[session.head]
            turn_number = len(self._turns) + 1
            now = self._now()
            stored = StoredTurn(
                turn_id=str(turn_number),
                parent_turn_id=parent.stored.turn_id if parent else None,
                depth=parent.stored.depth + 1 if parent else 0,
                type_id=type_id,
                type_version=type_version,
                data=plain,
                created_at=now,
            )
            cursor = (parent.cursor if parent else SessionCursor()).after(stored.turn_id, type_id, plain)
            self._turns[turn_number] = _Turn(stored, cursor)
            session.head = turn_number
            session.updated_at = now
            return _copy(stored)

    def append_batch(self, turns: Sequence[TurnAppend]) -> list[StoredTurn]:
        # No transactions here: one by one, stopping at the first failure, as the port allows.
        return [
            self.append(t.session_id, t.type_id, t.type_version, t.data, parent_turn_id=t.parent_turn_id)
            for t in turns
        ]

    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        with self._lock:
            return _copy(self._turn_in_history(self._session_number(session_id), turn_id).stored)

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> TurnPage:
        with self._lock:
            number = self._session_number(session_id)
            if before_turn_id is None:
                current = self._sessions[number].head
            else:
                current = parse_id(self._turn(before_turn_id).stored.parent_turn_id)
            newest_first: list[StoredTurn] = []
            while current is not None and len(newest_first) < limit:
                stored = self._turns[current].stored
                newest_first.append(_copy(stored))
                current = parse_id(stored.parent_turn_id)
            page = tuple(reversed(newest_first))
            more = bool(page) and page[0].parent_turn_id is not None
            return TurnPage(page, page[0].turn_id if more else None)

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        with self._lock:
            number = self._session_number(session_id)
            if at_turn_id is None:
                head = self._sessions[number].head
                start = self._turns[head] if head else None
            else:
                start = self._turn_in_history(number, at_turn_id)
            checkpoint = parse_id(start.cursor.checkpoint_turn_id) if start else None
            return _copy(self._turns[checkpoint].stored) if checkpoint else None

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        with self._lock:
            current = self._sessions[self._session_number(session_id)].head
            floor = -1 if after_turn_id is None else int(self._turn(after_turn_id).stored.turn_id)
            newest_first: list[StoredTurn] = []
            while current is not None and current > floor:
                stored = self._turns[current].stored
                newest_first.append(stored)
                current = parse_id(stored.parent_turn_id)
            oldest_first = newest_first[::-1]
            page = tuple(_copy(stored) for stored in oldest_first[: max(limit, 0)])
            return TurnRange(page, limit > 0 and len(oldest_first) > len(page))

    def session_totals(self, session_id: Id, *, own: bool = False) -> SessionTotals:
        with self._lock:
            session = self._sessions[self._session_number(session_id)]
            totals = self._turns[session.head].cursor.totals if session.head else SessionCursor().totals
            if own and session.base is not None:
                totals = totals.since(self._turns[session.base].cursor.totals)
            return totals

    def child_sessions(self, session_id: Id) -> list[SessionInfo]:
        with self._lock:
            parent = str(self._session_number(session_id))
            return [
                self._info(number, session)
                for number, session in sorted(self._sessions.items())
                if session.metadata.parent_session_id == parent
            ]

    def fork_point(self, session_id: Id) -> str | None:
        with self._lock:
            return format_id(self._sessions[self._session_number(session_id)].base)

    def put_blob(self, data: bytes) -> str:
        content = bytes(data)
        blob_hash = blake3_hex(content)
        with self._lock:
            self._check_open()
            self._blobs.setdefault(blob_hash, content)
        return blob_hash

    def get_blob(self, blob_hash: str) -> bytes:
        key = normalize_blob_hash(blob_hash)
        with self._lock:
            self._check_open()
            if key not in self._blobs:
                raise BlobNotFoundError(f"no blob {key} in the in-memory store")
            return self._blobs[key]

    def publish_bundle(self, bundle: bytes) -> bool:
        bundle_id = parse_bundle_id(bundle)
        with self._lock:
            self._check_open()
            existing = self._bundles.get(bundle_id)
            if existing is not None and existing != bytes(bundle):
                raise BundleConflictError(f"bundle {bundle_id} already exists with different content")
            self._bundles[bundle_id] = bytes(bundle)
            return existing is None

    def get_bundle(self, bundle_id: str) -> bytes | None:
        with self._lock:
            self._check_open()
            return self._bundles.get(bundle_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def _new_session(self, metadata: SessionMetadata, head: str | None) -> SessionInfo:
        with self._lock:
            self._check_open()
            now = self._now()
            number = len(self._sessions) + 1
            session = _Session(metadata, now, now, parse_id(head), parse_id(head))
            self._sessions[number] = session
            return self._info(number, session)

    def _info(self, number: int, session: _Session) -> SessionInfo:
        head = self._turns[session.head] if session.head else None
        return SessionInfo(
            session_id=str(number),
            metadata=session.metadata,
            status=head.cursor.status if head else SessionCursor().status,
            created_at=session.created_at,
            updated_at=session.updated_at,
            head_turn_id=head.stored.turn_id if head else None,
            head_depth=head.stored.depth if head else 0,
        )

    def _session_number(self, session_id: Id) -> int:
        self._check_open()
        number = parse_id(session_id)
        if number is None or number not in self._sessions:
            raise SessionNotFoundError(f"no session {session_id!r} in the in-memory store")
        return number

    def _turn(self, turn_id: Id | None) -> _Turn:
        self._check_open()
        number = parse_id(turn_id)
        if number is None or number not in self._turns:
            raise TurnNotFoundError(f"no turn {turn_id!r} in the in-memory store")
        return self._turns[number]

    def _turn_in_history(self, session_number: int, turn_id: Id) -> _Turn:
        wanted = self._turn(turn_id)
        current = self._sessions[session_number].head
        while current is not None and current >= int(wanted.stored.turn_id):
            if current == int(wanted.stored.turn_id):
                return wanted
            current = parse_id(self._turns[current].stored.parent_turn_id)
        raise TurnNotFoundError(f"turn {turn_id!r} is not in the history of session {session_number}")

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the in-memory session store is closed")

    def _now(self) -> datetime:
        return self._clock.now() if self._clock else datetime.now(UTC)


def _copy(stored: StoredTurn) -> StoredTurn:
    return evolve(stored, data=copy.deepcopy(dict(stored.data)))
