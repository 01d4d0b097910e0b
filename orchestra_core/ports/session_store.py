"""SessionStore port: sessions as contexts of immutable typed turns, O(1) forks, blobs by BLAKE3 hash."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.immutable import str_tuple

Id = str | int
"""Session and turn ids are decimal strings at the port (CXDB's are u64); numbers are accepted too."""

TurnData = Mapping[int, Any]
"""A turn's payload: integer field tags (the type bundle's) to plain values.

Plain values are None, bool, int (-2**63 .. 2**64-1), float, str, bytes, lists (or tuples) of plain
values and maps with str or int keys. Tags 30 and 31 are reserved for the stores (context metadata and
the session cursor) and may not be used by turn types.
"""


class SessionStatus(StrEnum):
    """Where a session stands, as of its head turn (see `orchestra_core.session.cursor`)."""

    NEW = "new"  # no PipelineLifecycle turn yet
    RUNNING = "running"  # started or resumed, not finished (or the process died: nothing says otherwise)
    SUCCESS = "success"
    FAIL = "fail"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"  # `orchestra cancel` stopped it for good
    BUDGET_EXCEEDED = "budget_exceeded"  # a budget was reached; resumable (with a higher budget)


@frozen
class SessionMetadata:
    """What a session is about; given at creation, listed with the session.

    Attributes:
        pipeline: The pipeline's name (the DOT graph id).
        title: A one-line human description.
        labels: Free-form labels (CXDB can filter on them with CQL `label = "x"`).
        parent_session_id: For a fork, the session it was forked from.
        spawn_reason: Why the session was made from another ("replay", "parallel", ...).
    """

    pipeline: str = ""
    title: str = ""
    labels: tuple[str, ...] = field(default=(), converter=str_tuple)
    parent_session_id: str | None = None
    spawn_reason: str = ""


@frozen
class SessionHead:
    """A session's head pointer: its newest turn (None while empty) and that turn's depth (root = 0)."""

    session_id: str
    turn_id: str | None
    depth: int


@frozen
class SessionInfo:
    """A session as listed: metadata, status and times.

    `created_at` is when the session was made; `updated_at` when its head last moved. Both are UTC.
    `head_depth` follows CXDB: the first turn has depth 0, so an empty session and a one-turn session
    both have depth 0; use `head_turn_id` (None when empty) or `turn_count`.
    """

    session_id: str
    metadata: SessionMetadata
    status: SessionStatus
    created_at: datetime | None
    updated_at: datetime | None
    head_turn_id: str | None
    head_depth: int

    @property
    def turn_count(self) -> int:
        """Turns in the session's history (shared fork history included)."""
        return 0 if self.head_turn_id is None else self.head_depth + 1


@frozen
class StoredTurn:
    """One immutable turn as stored.

    Attributes:
        turn_id: The turn's id (global across sessions).
        parent_turn_id: The previous turn in its chain, None for a root turn.
        depth: Distance from the root (the root has 0).
        type_id: The declared type, e.g. `dev.orchestra.AgentTurn`.
        type_version: The declared type's version.
        data: The payload by field tag (reserved tags 30 and 31 removed).
        created_at: When it was appended (UTC), None for turns written by other CXDB clients.
    """

    turn_id: str
    parent_turn_id: str | None
    depth: int
    type_id: str
    type_version: int
    data: TurnData
    created_at: datetime | None


@frozen
class SessionTotals:
    """Running counts over a session's history, kept per turn by stores that claim `SessionTotalsReader`.

    Like the cursor, a turn's totals are its parent's plus what the turn adds, so they are right for forks
    and explicit-parent appends. `orchestra status` reads them from the head instead of decoding every turn.

    Attributes:
        agent_turns: `dev.orchestra.AgentTurn` turns.
        prompt_tokens: Prompt tokens of those agent turns.
        completion_tokens: Completion tokens of those agent turns.
        node_runs: `dev.orchestra.NodeExecution` turns that start a node (event `started`).
        checkpoints: `dev.orchestra.Checkpoint` turns.
        pushes: `dev.orchestra.RemotePushed` turns.
        rollbacks: `dev.orchestra.SessionRolledBack` turns.
        cleanups: `dev.orchestra.SessionCleanedUp` turns.
        parallel: `dev.orchestra.ParallelExecution` turns (fan-outs, fan-ins and their branches).
        session_branches: `dev.orchestra.SessionBranchCreated` turns (one per workspace repo of a run).
        cost_nanos: The known cost of those agent turns, in nanodollars (`orchestra_core.model.money`).
        unpriced_turns: Agent turns whose cost is unknown (a model without a price; a turn that used no tokens
            cost nothing and is not one of them).
        lifecycle_turn_id: The latest `dev.orchestra.PipelineLifecycle` turn (None: none yet).
    """

    agent_turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    node_runs: int = 0
    checkpoints: int = 0
    pushes: int = 0
    rollbacks: int = 0
    cleanups: int = 0
    parallel: int = 0
    session_branches: int = 0
    cost_nanos: int = 0
    unpriced_turns: int = 0
    lifecycle_turn_id: str | None = None

    @classmethod
    def of(cls, counts: Sequence[int], lifecycle_turn_id: str | None = None) -> SessionTotals:
        """Totals from `counts()`'s tuple and the lifecycle pointer."""
        agents, prompt, completion, nodes, checkpoints, pushes, rollbacks, cleanups, parallel, branches, *cost = counts
        cost_nanos, unpriced = [*cost, 0, 0][:2]
        return cls(
            agents, prompt, completion, nodes, checkpoints, pushes, rollbacks, cleanups, parallel, branches,
            cost_nanos, unpriced, lifecycle_turn_id,
        )  # fmt: skip

    def since(self, base: SessionTotals) -> SessionTotals:
        """What the turns after the turn whose totals are `base` added (a fork's own turns)."""
        newer = self.lifecycle_turn_id != base.lifecycle_turn_id
        return SessionTotals.of(
            [mine - theirs for mine, theirs in zip(self.counts(), base.counts(), strict=True)],
            self.lifecycle_turn_id if newer else None,
        )

    def counts(self) -> tuple[int, ...]:
        """The counters in field order (without the lifecycle pointer)."""
        return (
            self.agent_turns, self.prompt_tokens, self.completion_tokens, self.node_runs, self.checkpoints,
            self.pushes, self.rollbacks, self.cleanups, self.parallel, self.session_branches, self.cost_nanos,
            self.unpriced_turns,
        )  # fmt: skip


@frozen
class TurnAppend:
    """One turn of an `append_batch`: appended to `session_id` at its head (or after `parent_turn_id`)."""

    session_id: Id
    type_id: str
    type_version: int
    data: TurnData
    parent_turn_id: Id | None = None


@frozen
class TurnPage:
    """A page of turns, oldest first, and the cursor for the next (older) page (None when none is left)."""

    turns: tuple[StoredTurn, ...]
    next_before_turn_id: str | None


@frozen
class TurnRange:
    """Turns of a session's history after a given turn, oldest first, and whether more follow them."""

    turns: tuple[StoredTurn, ...]
    has_more: bool


@runtime_checkable
class SessionStore(Protocol):
    """Stores sessions as CXDB-style contexts: head pointers into a DAG of immutable typed turns.

    Every store keeps, per turn, a tiny cursor inherited from the turn's parent: the latest
    `dev.orchestra.Checkpoint` at or before it and the session status from the latest
    `dev.orchestra.PipelineLifecycle` turn (`orchestra_core.session.cursor`). So the latest checkpoint
    and the status of a session are found from its head without a scan, for forks and explicit-parent
    appends too. All methods raise `StoreError` subclasses (never a driver exception).

    Attributes:
        location: Where the store lives, for messages (a file path, or a CXDB address).
    """

    location: str

    def create_session(self, metadata: SessionMetadata) -> SessionInfo:
        """Create an empty session."""
        ...

    def fork_session(self, base_turn_id: Id, metadata: SessionMetadata) -> SessionInfo:
        """Create a session whose head is an existing turn, in O(1): the history is shared, not copied.

        Raises:
            TurnNotFoundError: No such turn.
        """
        ...

    def get_session(self, session_id: Id) -> SessionInfo:
        """The session's metadata, status, times and head.

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        """Sessions, most recently updated first, at most `limit` of them."""
        ...

    def head(self, session_id: Id) -> SessionHead:
        """The session's head pointer (cheap; poll it to follow a running session).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    def append(
        self,
        session_id: Id,
        type_id: str,
        type_version: int,
        data: TurnData,
        *,
        parent_turn_id: Id | None = None,
    ) -> StoredTurn:
        """Append a typed turn and move the session's head to it (one durable write).

        Args:
            session_id: The session.
            type_id: The turn's type, e.g. `dev.orchestra.Checkpoint`.
            type_version: The type's version.
            data: The payload by field tag.
            parent_turn_id: Hang the turn off this turn instead of the current head.

        Raises:
            SessionNotFoundError: No such session.
            TurnNotFoundError: The parent turn does not exist.
            TurnDataError: `data` holds something that is not a plain value, or uses a reserved tag.
        """
        ...

    def append_batch(self, turns: Sequence[TurnAppend]) -> list[StoredTurn]:
        """Append several turns in order, each as `append` would, in one durable write where the store has
        transactions (all or none are stored); a store without them appends one by one and stops at the first
        failure (the turns before it stay). A turn without `parent_turn_id` follows the one before it in the
        batch for the same session.

        Raises:
            The errors of `append`.
        """
        ...

    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        """One turn of the session's history.

        Raises:
            SessionNotFoundError: No such session.
            TurnNotFoundError: No such turn in the session's history.
        """
        ...

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> TurnPage:
        """A page of the session's history walking back from the head (newest page first).

        Args:
            session_id: The session.
            limit: Most turns in the page.
            before_turn_id: Start from this turn's parent (pass the previous page's
                `next_before_turn_id`); None starts at the head.

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    def latest_checkpoint(self, session_id: Id, *, at_turn_id: Id | None = None) -> StoredTurn | None:
        """The newest `dev.orchestra.Checkpoint` turn at or before `at_turn_id` (default: the head).

        Found through the per-turn cursor in O(1) reads, never by scanning the history.

        Raises:
            SessionNotFoundError: No such session.
            TurnNotFoundError: `at_turn_id` is not in the session's history.
        """
        ...

    def put_blob(self, data: bytes) -> str:
        """Store bytes by content; return their BLAKE3-256 hash (64 lower-case hex digits)."""
        ...

    def get_blob(self, blob_hash: str) -> bytes:
        """The bytes stored under a BLAKE3 hash.

        Raises:
            BlobNotFoundError: Nothing stored under that hash.
        """
        ...

    def publish_bundle(self, bundle: bytes) -> bool:
        """Publish a type bundle (CXDB registry JSON, published byte for byte).

        Returns:
            True when it was stored, False when an identical bundle was already there.

        Raises:
            BundleConflictError: The bundle id exists with other content, or the bundle is malformed.
        """
        ...

    def get_bundle(self, bundle_id: str) -> bytes | None:
        """The stored bytes of a bundle, or None when it was never published."""
        ...

    def close(self) -> None:
        """Release connections and files; the store cannot be used afterwards."""
        ...


@runtime_checkable
class SessionTotalsReader(Protocol):
    """An optional capability of a SessionStore: running totals per turn, and a session's forks by parent.

    A store that claims it keeps `SessionTotals` per turn (`orchestra_core.session.totals`), so that a view of a
    long session (`orchestra status SESSION`) reads its counts from the head and only the turns it shows.
    """

    def session_totals(self, session_id: Id, *, own: bool = False) -> SessionTotals:
        """The totals at the session's head; with `own`, only what its own turns added (after a fork).

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    def child_sessions(self, session_id: Id) -> list[SessionInfo]:
        """The sessions whose metadata names this one as `parent_session_id`, oldest first.

        Raises:
            SessionNotFoundError: No such session.
        """
        ...

    def fork_point(self, session_id: Id) -> str | None:
        """The turn a forked session was forked at (its first own turn's parent); None for a new session.

        Raises:
            SessionNotFoundError: No such session.
        """
        ...


@runtime_checkable
class TurnRangeReader(Protocol):
    """An optional capability of a SessionStore: read a session's history forwards from any turn, in pages.

    Turn ids grow along every chain (a turn is appended after its parent), so the turns that follow a turn in a
    session's history are those with greater ids. A store that claims it reads about `limit` turns per call,
    however long the history and wherever the page starts; `orchestra status SESSION --after TURN` pages with it.
    """

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        """The first `limit` turns of the session's history with ids greater than `after_turn_id`, oldest first.

        Args:
            session_id: The session.
            after_turn_id: Start after this turn (of this session or any other: a branch's turns are paged with
                the main line's ids); None starts at the history's root.
            limit: Most turns in the range (below 1: an empty range, `has_more` False).

        Raises:
            SessionNotFoundError: No such session.
            TurnNotFoundError: `after_turn_id` names no turn of the store.
        """
        ...
