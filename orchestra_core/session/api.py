"""Session-level operations over the SessionStore port: typed appends, resume points, forks, history."""

from __future__ import annotations

from collections.abc import Iterator

from attrs import evolve, frozen

from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.store_errors import TurnDataError
from orchestra_core.ports.session_store import Id, SessionInfo, SessionStore, StoredTurn
from orchestra_core.session.bundle import bundle_bytes
from orchestra_core.session.checkpoints import expand_checkpoint
from orchestra_core.session.codec import decode_record, encode_record
from orchestra_core.session.identifiers import format_id, parse_id

HISTORY_PAGE = 512


@frozen
class CheckpointAt:
    """A CheckpointRecord record and the turn that holds it (fork or resume from `turn.turn_id`)."""

    turn: StoredTurn
    checkpoint: CheckpointRecord


def publish_types(store: SessionStore) -> bool:
    """Publish Orchestra's type bundle; True when the store did not have it yet (idempotent)."""
    return store.publish_bundle(bundle_bytes())


def append_record(
    store: SessionStore, session_id: Id, record: object, *, parent_turn_id: Id | None = None
) -> StoredTurn:
    """Append a turn record (PipelineLifecycle, NodeExecution, AgentTurn, CheckpointRecord, ...).

    Raises:
        TypeError: Not a turn record.
        StoreError: The store refused it (unknown session, bad data, unreachable store, ...).
    """
    encoded = encode_record(record)
    return store.append(
        session_id, encoded.type_id, encoded.type_version, encoded.data, parent_turn_id=parent_turn_id
    )


def latest_checkpoint(
    store: SessionStore, session_id: Id, *, at_turn_id: Id | None = None
) -> CheckpointAt | None:
    """The newest CheckpointRecord at or before `at_turn_id` (default: the head), found by index, not by scan,
    and expanded to the full state when it was stored as a delta (at most a few dozen turns read).

    For `resume SESSION` leave `at_turn_id` out; for `resume SESSION --turn T` pass T to get the
    checkpoint enclosing that agent turn.

    Raises:
        SessionNotFoundError: No such session.
        TurnNotFoundError: `at_turn_id` is not in the session's history.
        TurnDataError: The checkpoint turn cannot be read as a Checkpoint.
    """
    turn = store.latest_checkpoint(session_id, at_turn_id=at_turn_id)
    if turn is None:
        return None

    def checkpoint_in(stored: StoredTurn) -> CheckpointRecord:
        record = decode_record(stored)
        if not isinstance(record, CheckpointRecord):
            raise TurnDataError(f"turn {stored.turn_id} of session {session_id} is not a Checkpoint")
        return record

    record = checkpoint_in(turn)
    if not record.is_delta:
        return CheckpointAt(turn, record)
    # The bases are older checkpoints of the same history: one walk back from the turn finds them all
    # (a store like CXDB has no cheap read of a single old turn).
    older = history(store, session_id, start_before=turn.turn_id)

    def base_of(turn_id: str) -> CheckpointRecord:
        for stored in older:
            if stored.turn_id == turn_id:
                return checkpoint_in(stored)
        raise TurnDataError(f"checkpoint turn {turn_id} of session {session_id} is missing from its history")

    return CheckpointAt(turn, expand_checkpoint(record, base_of))


def fork_session(
    store: SessionStore,
    session_id: Id,
    at_turn_id: Id,
    *,
    spawn_reason: str = "replay",
    title: str | None = None,
) -> SessionInfo:
    """Fork a session at one of its turns (O(1)): the new session shares the history up to that turn.

    The fork keeps the pipeline and labels, records where it came from, and leaves the original alone.

    Raises:
        SessionNotFoundError: No such session.
        TurnNotFoundError: The turn is not in the session's history.
    """
    source = store.get_session(session_id)
    turn = store.get_turn(session_id, at_turn_id)
    metadata = evolve(
        source.metadata,
        title=title if title is not None else source.metadata.title,
        parent_session_id=source.session_id,
        spawn_reason=spawn_reason,
    )
    return store.fork_session(turn.turn_id, metadata)


def history(
    store: SessionStore, session_id: Id, *, page_size: int = HISTORY_PAGE, start_before: Id | None = None
) -> Iterator[StoredTurn]:
    """Every turn of the session's history, newest first, read page by page (only those older than
    `start_before` when given)."""
    before: str | None = format_id(parse_id(start_before)) if start_before is not None else None
    while True:
        page = store.turns(session_id, limit=page_size, before_turn_id=before)
        yield from reversed(page.turns)
        if page.next_before_turn_id is None:
            return
        before = page.next_before_turn_id


def turns_after(
    store: SessionStore, session_id: Id, after_turn_id: Id | None, *, page_size: int = 64
) -> list[StoredTurn]:
    """The turns appended after `after_turn_id` (all of them when None), oldest first; for following a run.

    Walks back from the head only as far as `after_turn_id`, so polling a live session is cheap.
    """
    stop = format_id(parse_id(after_turn_id))
    if store.head(session_id).turn_id in (stop, None):
        return []
    newer: list[StoredTurn] = []
    for turn in history(store, session_id, page_size=page_size):
        if turn.turn_id == stop:
            break
        newer.append(turn)
    newer.reverse()
    return newer
