"""Turns read back from CXDB (binary GET_LAST or HTTP raw view) as TurnFacts, and a small LRU cache."""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from orchestra_adapters.storage.cxdb.envelope import TurnFacts, split_payload
from orchestra_adapters.storage.cxdb.protocol import TurnRecord
from orchestra_adapters.storage.payload import decode_payload, tag_keys
from orchestra_core.model.store_errors import StoreError
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.identifiers import format_id


def facts_from_payload(
    turn_id: int,
    parent_turn_id: int,
    depth: int,
    type_id: str,
    type_version: int,
    digest: bytes,
    payload: bytes,
) -> TurnFacts:
    """Split a turn's msgpack payload into its data, Orchestra envelope and metadata.

    Payloads that are not msgpack maps (other clients may store anything) read as empty data.
    """
    try:
        fields = tag_keys(decode_payload(payload))
    except ValueError:
        fields = {}
    data, envelope, metadata = split_payload(fields)
    return TurnFacts(turn_id, parent_turn_id, depth, type_id, type_version, digest, data, envelope, metadata)


def facts_from_record(record: TurnRecord) -> TurnFacts:
    """A GET_LAST turn fetched with its payload."""
    assert record.payload is not None
    return facts_from_payload(
        record.turn_id,
        record.parent_turn_id,
        record.depth,
        record.type_id,
        record.type_version,
        record.content_hash,
        record.payload,
    )


def facts_from_http(item: Mapping[str, Any], where: str) -> TurnFacts:
    """One turn of `/v1/contexts/{id}/turns?view=raw&bytes_render=base64` (ids as strings or numbers).

    Raises:
        StoreError: The item lacks the raw-view fields.
    """
    try:
        declared = item["declared_type"]
        return facts_from_payload(
            int(item["turn_id"]),
            int(item["parent_turn_id"]),
            int(item["depth"]),
            str(declared["type_id"]),
            int(declared["type_version"]),
            bytes.fromhex(item["content_hash_b3"]),
            base64.b64decode(item["bytes_b64"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise StoreError(f"{where}: unexpected turn in the raw view ({error})") from None


def stored_turn(facts: TurnFacts) -> StoredTurn:
    """The port's view of a turn."""
    return StoredTurn(
        turn_id=str(facts.turn_id),
        parent_turn_id=format_id(facts.parent_turn_id),
        depth=facts.depth,
        type_id=facts.type_id,
        type_version=facts.type_version,
        data=dict(facts.data),
        created_at=facts.created_at,
    )


class FactsCache:
    """The most recently seen turns by id (turns are immutable, so entries never go stale)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: OrderedDict[int, TurnFacts] = OrderedDict()

    def get(self, turn_id: int) -> TurnFacts | None:
        facts = self._entries.get(turn_id)
        if facts is not None:
            self._entries.move_to_end(turn_id)
        return facts

    def put(self, facts: TurnFacts) -> TurnFacts:
        self._entries[facts.turn_id] = facts
        self._entries.move_to_end(facts.turn_id)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return facts
