"""CxdbSessionStore: sessions in a CXDB server; writes over its binary protocol, reads over HTTP GET."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from attrs import evolve

from orchestra_adapters.storage.cxdb import protocol
from orchestra_adapters.storage.cxdb.connection import ConnectionDropped, CxdbConnection
from orchestra_adapters.storage.cxdb.envelope import (
    CLIENT_TAG,
    Envelope,
    Lineage,
    TurnFacts,
    metadata_map,
)
from orchestra_adapters.storage.cxdb.http import CxdbHttp
from orchestra_adapters.storage.cxdb.ranges import facts_after
from orchestra_adapters.storage.cxdb.reader import CxdbReader
from orchestra_adapters.storage.cxdb.turns import (
    facts_from_payload,
    stored_turn,
)
from orchestra_adapters.storage.payload import content_hash, encode_payload
from orchestra_core.model.store_errors import (
    SessionNotFoundError,
    StoreError,
    TurnNotFoundError,
)
from orchestra_core.ports.clock import Clock, SystemClock
from orchestra_core.ports.session_store import (
    Id,
    SessionHead,
    SessionInfo,
    SessionMetadata,
    StoredTurn,
    TurnAppend,
    TurnData,
    TurnPage,
    TurnRange,
)
from orchestra_core.session.bundle import parse_bundle_id
from orchestra_core.session.codec import normalize_turn_data
from orchestra_core.session.cursor import CHECKPOINT_TYPE_ID
from orchestra_core.session.identifiers import format_id, normalize_blob_hash, parse_id
from orchestra_core.session.schema import CONTEXT_METADATA_TAG, SESSION_CURSOR_TAG

COMPRESS_FROM = 4096  # payloads from this size are sent zstd-compressed
_LANDED_WINDOW = 16


class CxdbSessionStore:
    """A SessionStore on a CXDB server (PROTOCOL.md); thread-safe, one binary connection and one HTTP session.

    An append is never retried blindly: when the connection drops mid-append, the store reconnects and
    looks at the context's newest turns for the payload's hash; only when it did not land is it sent once
    more. Unreachable servers fail fast (`connect_timeout_s`) with the address in the message.
    """

    def __init__(
        self,
        addr: str,
        url: str,
        *,
        clock: Clock | None = None,
        connect_timeout_s: float = 2.0,
        io_timeout_s: float = 30.0,
    ) -> None:
        self.location = f"cxdb {addr} ({url})"
        self._connection = CxdbConnection(
            addr, connect_timeout_s=connect_timeout_s, io_timeout_s=io_timeout_s
        )
        self._http = CxdbHttp(url, connect_timeout_s=connect_timeout_s, io_timeout_s=io_timeout_s)
        self._clock = clock or SystemClock()
        self._lock = threading.RLock()
        self._reader = CxdbReader(self._connection, self._http, self.location)
        self._pending: dict[int, tuple[SessionMetadata, datetime]] = {}
        self._closed = False

    def __enter__(self) -> CxdbSessionStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def create_session(self, metadata: SessionMetadata) -> SessionInfo:
        with self._guard():
            head = protocol.decode_head(self._reader.call(protocol.ctx_create(0), retry=False))
            return self._remember_new(head, metadata)

    def fork_session(self, base_turn_id: Id, metadata: SessionMetadata) -> SessionInfo:
        base = parse_id(base_turn_id)
        with self._guard():
            if base is None:
                raise TurnNotFoundError(f"no turn {str(base_turn_id)!r} in {self.location}")
            missing = lambda: TurnNotFoundError(f"no turn {base} in {self.location}")  # noqa: E731
            answer = self._reader.call(protocol.ctx_fork(base), missing=missing)
            return self._remember_new(protocol.decode_head(answer), metadata)

    def get_session(self, session_id: Id) -> SessionInfo:
        with self._guard():
            head = self._head(session_id)
            return self._info(head.context_id, head.head_turn_id)

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        with self._guard():
            if limit <= 0:
                return []
            infos = []
            for item in self._http.contexts(max(limit * 2, 20)):
                if item.get("client_tag") != CLIENT_TAG:  # contexts of other clients
                    continue
                infos.append(self._info(int(item["context_id"]), int(item["head_turn_id"])))
            infos.sort(key=_activity, reverse=True)
            return infos[:limit]

    def head(self, session_id: Id) -> SessionHead:
        with self._guard():
            head = self._head(session_id)
            return SessionHead(str(head.context_id), format_id(head.head_turn_id), head.head_depth)

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
        with self._guard():
            head = self._head(session_id)
            context = head.context_id
            head_facts = self._reader.facts_at_head(context, head.head_turn_id)
            parent = head_facts
            if parent_turn_id is not None:
                parent = self._reader.facts_in_history(context, head.head_turn_id, parent_turn_id)
            payload, envelope = self._payload(context, plain, parent, head_facts)
            request = protocol.append_turn(
                context, envelope.parent_turn_id, type_id, type_version, payload, compress_from=COMPRESS_FROM
            )
            appended = self._append_once(context, request, content_hash(payload), envelope.parent_turn_id)
            self._pending.pop(context, None)
            facts = facts_from_payload(
                appended.turn_id,
                envelope.parent_turn_id,
                appended.depth,
                type_id,
                type_version,
                appended.content_hash,
                payload,
            )
            return stored_turn(self._reader.remember(facts))

    def append_batch(self, turns: Sequence[TurnAppend]) -> list[StoredTurn]:
        # No transactions here: one by one, stopping at the first failure, as the port allows.
        return [
            self.append(t.session_id, t.type_id, t.type_version, t.data, parent_turn_id=t.parent_turn_id)
            for t in turns
        ]

    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        with self._guard():
            head = self._head(session_id)
            return stored_turn(self._reader.facts_in_history(head.context_id, head.head_turn_id, turn_id))

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> TurnPage:
        with self._guard():
            context = self._context_number(session_id)
            before = None
            if before_turn_id is not None:
                before = parse_id(before_turn_id)
                if before is None:
                    raise TurnNotFoundError(f"no turn {str(before_turn_id)!r} in {self.location}")
            page = [self._reader.remember(f) for f in self._reader.page(context, max(limit, 0), before)]
            more = bool(page) and page[0].parent_turn_id != 0
            return TurnPage(tuple(stored_turn(f) for f in page), str(page[0].turn_id) if more else None)

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        """Forward ranges read backwards from the head (CXDB has no forward read): see `cxdb/ranges.py`."""
        with self._guard():
            context = self._head(session_id).context_id
            floor = -1
            if after_turn_id is not None:
                parsed = parse_id(after_turn_id)
                if parsed is None:
                    raise TurnNotFoundError(f"no turn {str(after_turn_id)!r} in {self.location}")
                floor = parsed
            if limit <= 0:
                if floor >= 0 and not self._reader.exists(context, floor):
                    raise TurnNotFoundError(f"no turn {floor} in {self.location}")
                return TurnRange((), False)
            found, more = facts_after(self._reader, context, floor, limit)
            return TurnRange(tuple(stored_turn(self._reader.remember(facts)) for facts in found), more)

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        with self._guard():
            head = self._head(session_id)
            start = (
                self._reader.facts_at_head(head.context_id, head.head_turn_id)
                if at_turn_id is None
                else self._reader.facts_in_history(head.context_id, head.head_turn_id, at_turn_id)
            )
            if start is None:
                return None
            if start.type_id == CHECKPOINT_TYPE_ID:
                return stored_turn(start)
            lineage = start.envelope.inherited if start.envelope else Lineage()
            if not lineage.checkpoint_turn_id or lineage.checkpoint_hash is None:
                return None
            return stored_turn(self._reader.checkpoint(lineage))

    def put_blob(self, data: bytes) -> str:
        content = bytes(data)
        with self._guard():
            blob_hash, _was_new = protocol.decode_put_blob(
                self._reader.call(protocol.put_blob(content), retry=True)
            )
            return blob_hash.hex()

    def get_blob(self, blob_hash: str) -> bytes:
        key = normalize_blob_hash(blob_hash)
        with self._guard():
            return self._reader.blob(bytes.fromhex(key))

    def publish_bundle(self, bundle: bytes) -> bool:
        bundle_id = parse_bundle_id(bundle)
        with self._guard():
            return self._http.put_bundle(bundle_id, bytes(bundle))

    def get_bundle(self, bundle_id: str) -> bytes | None:
        with self._guard():
            return self._http.get_bundle(bundle_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._connection.close()
            self._http.close()

    def _guard(self) -> threading.RLock:
        if self._closed:
            raise StoreError(f"session store {self.location} is closed")
        return self._lock

    def _head(self, session_id: Id) -> protocol.Head:
        context = self._context_number(session_id)
        answer = self._reader.call(protocol.get_head(context), missing=lambda: self._no_session(session_id))
        return protocol.decode_head(answer)

    def _append_once(
        self, context: int, request: protocol.Request, digest: bytes, parent: int
    ) -> protocol.Appended:
        """APPEND_TURN, never blindly retried: after a drop, look for the turn before sending it again."""
        for attempt in range(2):
            try:
                return protocol.decode_appended(self._connection.request(request))
            except ConnectionDropped as dropped:
                landed = self._landed(context, digest, parent)
                if landed is not None:
                    return landed
                if attempt == 1:
                    raise StoreError(
                        f"{self.location}: the append to session {context} failed: {dropped}"
                    ) from None
        raise AssertionError("unreachable")

    def _landed(self, context: int, digest: bytes, parent: int) -> protocol.Appended | None:
        answer = self._reader.call(protocol.get_last(context, _LANDED_WINDOW, include_payload=False))
        for record in reversed(protocol.decode_turns(answer, include_payload=False)):
            if record.content_hash == digest and record.parent_turn_id == parent:
                return protocol.Appended(context, record.turn_id, record.depth, record.content_hash)
        return None

    def _payload(
        self, context: int, data: dict[int, Any], parent: TurnFacts | None, head: TurnFacts | None
    ) -> tuple[bytes, Envelope]:
        lineage = parent.lineage_after() if parent else Lineage()
        pending = self._pending.get(context)
        metadata = metadata_map(*pending) if pending else None
        session_meta = (
            None if metadata is not None else (head.lineage_after().metadata_hash if head else None)
        )
        lineage = evolve(lineage, metadata_hash=session_meta)
        envelope = Envelope(
            created_at_ms=int(self._clock.now().timestamp() * 1000),
            parent_turn_id=parent.turn_id if parent else 0,
            depth=parent.depth + 1 if parent else 0,
            session_id=context,
            inherited=lineage,
        )
        fields = dict(data)
        if metadata is not None:
            fields[CONTEXT_METADATA_TAG] = metadata
        fields[SESSION_CURSOR_TAG] = envelope.to_map()
        return encode_payload(fields), envelope

    def _info(self, context: int, head_turn_id: int) -> SessionInfo:
        facts = self._reader.facts_at_head(context, head_turn_id)
        metadata, created = self._pending.get(context) or self._reader.session_metadata(facts)
        updated = facts.created_at if facts and facts.created_at else created
        return SessionInfo(
            session_id=str(context),
            metadata=metadata,
            status=facts.lineage_after().status if facts else Lineage().status,
            created_at=created,
            updated_at=updated,
            head_turn_id=format_id(head_turn_id),
            head_depth=facts.depth if facts else 0,
        )

    def _remember_new(self, head: protocol.Head, metadata: SessionMetadata) -> SessionInfo:
        self._pending[head.context_id] = (metadata, self._clock.now())
        return self._info(head.context_id, head.head_turn_id)

    def _context_number(self, session_id: Id) -> int:
        number = parse_id(session_id)
        if number is None:
            raise self._no_session(session_id)
        return number

    def _no_session(self, session_id: Id) -> SessionNotFoundError:
        return SessionNotFoundError(f"no session {str(session_id)!r} in {self.location}")


def _activity(info: SessionInfo) -> tuple[float, int]:
    updated = info.updated_at.timestamp() if info.updated_at else 0.0
    return updated, int(info.head_turn_id or 0)
