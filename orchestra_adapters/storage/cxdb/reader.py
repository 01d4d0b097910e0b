"""Reading from CXDB: requests that survive dropped connections, turns, checkpoints, blobs and metadata."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from attrs import evolve

from orchestra_adapters.storage.cxdb import protocol
from orchestra_adapters.storage.cxdb.connection import ConnectionDropped, CxdbConnection
from orchestra_adapters.storage.cxdb.envelope import Lineage, TurnFacts, read_metadata, split_payload
from orchestra_adapters.storage.cxdb.http import ENVELOPE, CxdbHttp, HttpStatusError
from orchestra_adapters.storage.cxdb.turns import (
    FactsCache,
    facts_from_http,
    facts_from_payload,
    facts_from_record,
)
from orchestra_adapters.storage.payload import decode_payload, tag_keys
from orchestra_core.model.store_errors import (
    BlobNotFoundError,
    SessionNotFoundError,
    StoreError,
    TurnNotFoundError,
)
from orchestra_core.ports.session_store import Id, SessionMetadata
from orchestra_core.session.cursor import CHECKPOINT_TYPE_ID
from orchestra_core.session.identifiers import parse_id

SCAN_PAGE = 256


class CxdbReader:
    """Reads what the CXDB store needs, caching turns and metadata (both immutable) by id and hash."""

    def __init__(self, connection: CxdbConnection, http: CxdbHttp, location: str) -> None:
        self.connection = connection
        self.http = http
        self.location = location
        self._facts = FactsCache()
        self._metadata: dict[bytes, tuple[SessionMetadata, datetime | None]] = {}

    def remember(self, facts: TurnFacts) -> TurnFacts:
        """Cache a turn the store appended or read."""
        return self._facts.put(facts)

    def call(
        self,
        request: protocol.Request,
        *,
        retry: bool = True,
        missing: Callable[[], StoreError] | None = None,
    ) -> bytes:
        """Send a request; after a drop, reconnect and (for retry-safe requests) try once more.

        A second drop means the server rejected the request: `missing()` says what that means.
        """
        attempts = 2 if retry or missing else 1
        for attempt in range(attempts):
            try:
                return self.connection.request(request)
            except ConnectionDropped as dropped:
                if attempt == attempts - 1:
                    if missing is not None:
                        raise missing() from None
                    raise StoreError(f"{self.location}: {dropped}") from None
        raise AssertionError("unreachable")

    def facts_at_head(self, context: int, head_turn_id: int) -> TurnFacts | None:
        """The head turn (None for an empty context): the cache, or GET_LAST(1) with its payload."""
        if not head_turn_id:
            return None
        cached = self._facts.get(head_turn_id)
        if cached is not None:
            return cached
        answer = self.call(protocol.get_last(context, 1, include_payload=True))
        records = protocol.decode_turns(answer, include_payload=True)
        if not records:
            raise StoreError(f"{self.location}: session {context} has head {head_turn_id} but no turns")
        return self.remember(facts_from_record(records[-1]))

    def facts_in_history(self, context: int, head_turn_id: int, turn_id: Id) -> TurnFacts:
        """A turn of the context's history: the cache, or pages walked back from the head (ids only decrease)."""
        target = parse_id(turn_id)
        missing = TurnNotFoundError(
            f"turn {str(turn_id)!r} is not in the history of session {context} ({self.location})"
        )
        if target is None or not head_turn_id or target > head_turn_id:
            raise missing
        if target == head_turn_id:
            return self.facts_at_head(context, head_turn_id)  # type: ignore[return-value]
        before: int | None = None
        while True:
            page = [self.remember(f) for f in self.page(context, SCAN_PAGE, before)]
            for facts in page:
                if facts.turn_id == target:
                    return facts
            if not page or page[0].turn_id < target or page[0].parent_turn_id == 0:
                raise missing
            before = page[0].turn_id

    def page(self, context: int, limit: int, before: int | None) -> list[TurnFacts]:
        """One page of `/turns` in the raw view, oldest first, starting at `before`'s parent (or the head)."""
        where = f"{self.location}: session {context}"
        return [facts_from_http(item, where) for item in self._turns(context, limit, before, "raw")]

    def links(self, context: int, limit: int, before: int) -> list[tuple[int, int]]:
        """One page of `/turns` as (turn id, parent id) alone, oldest first, starting at `before`'s parent."""
        try:
            return [(int(item["turn_id"]), int(item["parent_turn_id"])) for item in self._turns(context, limit, before, ENVELOPE)]
        except (KeyError, TypeError, ValueError) as error:
            raise StoreError(f"{self.location}: session {context}: unexpected turn in the envelope view ({error})") from None

    def exists(self, context: int, turn_id: int) -> bool:
        """Whether the server holds turn `turn_id` (of any context): the cache, or a page read from it."""
        if self._facts.get(turn_id) is not None:
            return True
        try:
            self._turns(context, 1, turn_id, ENVELOPE)
        except TurnNotFoundError:
            return False
        return True

    def _turns(self, context: int, limit: int, before: int | None, view: str) -> list[dict[str, Any]]:
        try:
            document = self.http.turns(context, limit=limit, before_turn_id=before, view=view)
        except HttpStatusError as error:
            if error.status == 404 and error.message == "context":
                raise SessionNotFoundError(f"no session {context!r} in {self.location}") from None
            if error.status == 404:
                raise TurnNotFoundError(f"no turn {before} in {self.location}") from None
            raise
        return list(document.get("turns", []))

    def checkpoint(self, lineage: Lineage) -> TurnFacts:
        """The checkpoint a lineage points at, from one GET_BLOB of its payload (its envelope has the rest)."""
        cached = self._facts.get(lineage.checkpoint_turn_id)
        if cached is not None:
            return cached
        assert lineage.checkpoint_hash is not None
        payload = self.blob(lineage.checkpoint_hash)
        facts = facts_from_payload(
            lineage.checkpoint_turn_id,
            0,
            0,
            CHECKPOINT_TYPE_ID,
            lineage.checkpoint_version,
            lineage.checkpoint_hash,
            payload,
        )
        if facts.envelope is None:
            raise StoreError(
                f"{self.location}: checkpoint {lineage.checkpoint_turn_id} has no Orchestra envelope"
            )
        return self.remember(
            evolve(facts, parent_turn_id=facts.envelope.parent_turn_id, depth=facts.envelope.depth)
        )

    def blob(self, blob_hash: bytes) -> bytes:
        """GET_BLOB; a missing blob drops the connection twice and reads as BlobNotFoundError."""
        missing = lambda: BlobNotFoundError(f"no blob {blob_hash.hex()} in {self.location}")  # noqa: E731
        return protocol.decode_blob(self.call(protocol.get_blob(blob_hash), missing=missing))

    def session_metadata(self, facts: TurnFacts | None) -> tuple[SessionMetadata, datetime | None]:
        """The metadata (and creation time) of the session whose head is `facts`, via its metadata hash."""
        if facts is None:
            return SessionMetadata(), None
        if facts.metadata is not None:
            return read_metadata(facts.metadata)
        metadata_hash = facts.lineage_after().metadata_hash
        if metadata_hash is None:
            return SessionMetadata(), None
        if metadata_hash not in self._metadata:
            _data, _envelope, fields = split_payload(tag_keys(decode_payload(self.blob(metadata_hash))))
            self._metadata[metadata_hash] = read_metadata(fields or {})
        return self._metadata[metadata_hash]
