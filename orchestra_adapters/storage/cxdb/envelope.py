"""What Orchestra adds to each CXDB payload: the session cursor (tag 31) and context metadata (tag 30).

CXDB keeps nothing per turn but the payload, parent and depth, and its HTTP API cannot fetch a turn by
id. So every turn Orchestra appends carries, under tag 31, its own time, parent and depth, and its
session's cursor: the latest checkpoint *before* it (id, version and content hash, so GET_BLOB fetches
it in one round trip), the session status before it, and the content hash of the turn holding the
session's metadata. Reading the head turn therefore leads straight to the checkpoint, status and
metadata. Tag 30 is CXDB's own context metadata map (PROTOCOL.md 4.5), written with integer keys on
the first turn a session appends.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from attrs import frozen

from orchestra_core.ports.session_store import SessionMetadata, SessionStatus
from orchestra_core.session.cursor import (
    CHECKPOINT_TYPE_ID,
    LIFECYCLE_TYPE_ID,
    STATUS_CODES,
    status_after_lifecycle,
    status_from_code,
)
from orchestra_core.session.identifiers import format_id
from orchestra_core.session.schema import CONTEXT_METADATA_TAG, SESSION_CURSOR_TAG

CLIENT_TAG = "orchestra"
_PIPELINE_KEY = 100  # Orchestra's own key in the metadata map; CXDB ignores keys it does not know


@frozen
class Lineage:
    """What a turn passes on to the turns appended after it."""

    checkpoint_turn_id: int = 0
    checkpoint_version: int = 0
    checkpoint_hash: bytes | None = None
    status: SessionStatus = SessionStatus.NEW
    metadata_hash: bytes | None = None


@frozen
class Envelope:
    """Tag 31 of a payload: the turn's own facts and the lineage it inherited from its parent."""

    created_at_ms: int
    parent_turn_id: int
    depth: int
    session_id: int
    inherited: Lineage

    def to_map(self) -> dict[int, Any]:
        lineage = self.inherited
        fields: dict[int, Any] = {
            1: self.created_at_ms,
            2: self.parent_turn_id,
            3: self.depth,
            4: self.session_id,
            7: STATUS_CODES[lineage.status],
        }
        if lineage.checkpoint_turn_id:
            fields.update(
                {5: lineage.checkpoint_turn_id, 6: lineage.checkpoint_hash, 9: lineage.checkpoint_version}
            )
        if lineage.metadata_hash is not None:
            fields[8] = lineage.metadata_hash
        return fields

    @classmethod
    def from_map(cls, fields: Mapping[int, Any]) -> Envelope:
        """Raises KeyError or TypeError when the map is not an envelope."""
        lineage = Lineage(
            checkpoint_turn_id=int(fields.get(5, 0)),
            checkpoint_version=int(fields.get(9, 0)),
            checkpoint_hash=fields.get(6),
            status=status_from_code(int(fields[7])),
            metadata_hash=fields.get(8),
        )
        return cls(int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4]), lineage)

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created_at_ms / 1000, UTC)


@frozen
class TurnFacts:
    """A turn as the CXDB store knows it: enough to read it and to append after it."""

    turn_id: int
    parent_turn_id: int
    depth: int
    type_id: str
    type_version: int
    content_hash: bytes
    data: Mapping[int, Any]
    envelope: Envelope | None
    metadata: Mapping[int, Any] | None

    def lineage_after(self) -> Lineage:
        """The lineage of a turn appended on top of this one."""
        inherited = self.envelope.inherited if self.envelope else Lineage()
        status = inherited.status
        if self.type_id == LIFECYCLE_TYPE_ID:
            status = status_after_lifecycle(self.data, status)
        checkpoint = (inherited.checkpoint_turn_id, inherited.checkpoint_version, inherited.checkpoint_hash)
        if self.type_id == CHECKPOINT_TYPE_ID:
            checkpoint = (self.turn_id, self.type_version, self.content_hash)
        metadata_hash = self.content_hash if self.metadata is not None else inherited.metadata_hash
        return Lineage(*checkpoint, status=status, metadata_hash=metadata_hash)

    @property
    def created_at(self) -> datetime | None:
        return self.envelope.created_at if self.envelope else None


def split_payload(
    fields: Mapping[Any, Any],
) -> tuple[dict[int, Any], Envelope | None, Mapping[int, Any] | None]:
    """A decoded payload's own data, its envelope (None for other clients' turns) and its metadata map."""
    data = dict(fields)
    raw_envelope = data.pop(SESSION_CURSOR_TAG, None)
    metadata = data.pop(CONTEXT_METADATA_TAG, None)
    envelope = None
    if isinstance(raw_envelope, Mapping):
        try:
            envelope = Envelope.from_map(raw_envelope)
        except (KeyError, TypeError, ValueError):
            envelope = None
    return data, envelope, metadata if isinstance(metadata, Mapping) else None


def metadata_map(metadata: SessionMetadata, created_at: datetime) -> dict[int, Any]:
    """CXDB's context metadata map with integer keys: 1 client tag, 2 title, 3 labels, 10 provenance."""
    provenance: dict[int, Any] = {40: CLIENT_TAG, 80: int(created_at.timestamp() * 1000)}
    if metadata.parent_session_id and metadata.parent_session_id.isdigit():
        provenance[1] = int(metadata.parent_session_id)
    if metadata.spawn_reason:
        provenance[2] = metadata.spawn_reason
    return {
        1: CLIENT_TAG,
        2: metadata.title,
        3: list(metadata.labels),
        10: provenance,
        _PIPELINE_KEY: metadata.pipeline,
    }


def read_metadata(fields: Mapping[Any, Any]) -> tuple[SessionMetadata, datetime | None]:
    """The SessionMetadata and creation time in a metadata map (integer or digit-string keys)."""
    get = _getter(fields)
    provenance = get(10) if isinstance(get(10), Mapping) else {}
    from_provenance = _getter(provenance)
    parent = from_provenance(1)
    captured = from_provenance(80)
    labels = get(3) if isinstance(get(3), list) else []
    metadata = SessionMetadata(
        pipeline=str(get(_PIPELINE_KEY) or ""),
        title=str(get(2) or ""),
        labels=tuple(str(label) for label in labels),
        parent_session_id=format_id(parent) if isinstance(parent, int) else None,
        spawn_reason=str(from_provenance(2) or ""),
    )
    created = datetime.fromtimestamp(captured / 1000, UTC) if isinstance(captured, int) else None
    return metadata, created


def _getter(fields: Mapping[Any, Any]) -> Any:
    return lambda key: fields.get(key, fields.get(str(key)))
