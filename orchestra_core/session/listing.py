"""What `orchestra status` lists: recent sessions with their status, times and how many nodes they ran."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from orchestra_core.model import records as r
from orchestra_core.model.money import CostTally
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionInfo, SessionStatus, SessionStore, SessionTotalsReader
from orchestra_core.session.liveness import branch_completion, live_info, root_info
from orchestra_core.session.spending import session_spending
from orchestra_core.session.summary import session_row
from orchestra_core.session.trace import PARALLEL_SPAWN, branch_label
from orchestra_core.session.turn_view import decode_fields

_CHECKPOINT_SKIPPED = (
    "completed_nodes", "context_snapshot", "node_outcomes", "logs", "retry_counters", "workspace_snapshot",
    "pipeline_path", "pipeline_blob", "failure_reason", "next_node", "context_removed",
)


@frozen
class SessionRow:
    """One listed session.

    Attributes:
        info: The session as the store lists it.
        status: Its status (`interrupted` for a run recorded as running whose runner is gone); a branch
            session shows its branch's outcome once it completed, else the status of the run it belongs to.
        nodes_run: Node executions on the main line as of its latest checkpoint (None for branch
            sessions, whose checkpoints are their parent's).
        branch: The branch path of a branch session, None otherwise.
        cost: What the session has cost, its branches and replayed history included (None: not read, for branch
            sessions and stores without running totals).
    """

    info: SessionInfo
    status: str
    nodes_run: int | None
    branch: str | None = None
    cost: CostTally | None = None

    @property
    def duration_s(self) -> float | None:
        """From creation to the last turn, for finished sessions."""
        info = self.info
        if self.status in (SessionStatus.NEW, SessionStatus.RUNNING) or not info.created_at or not info.updated_at:
            return None
        return round((info.updated_at - info.created_at).total_seconds(), 3)

    def to_json(self) -> dict[str, Any]:
        """DESIGN.md's entry (`session_id`, `pipeline`, `status`, `started_at`, `ended_at`) and the rest."""
        row = session_row(self.info)
        metadata = self.info.metadata
        ended = self.info.updated_at if self.duration_s is not None else None
        return {
            **row,
            "status": self.status,
            "ended_at": ended.isoformat() if ended else None,
            "title": metadata.title,
            "duration_s": self.duration_s,
            "nodes_run": self.nodes_run,
            "parent_session_id": metadata.parent_session_id,
            "spawn_reason": metadata.spawn_reason or None,
            "branch": self.branch,
            "cost_usd": self.cost.json_value() if self.cost is not None else None,
            "cost_complete": self.cost.complete if self.cost is not None else None,
        }


def list_session_rows(
    store: SessionStore, *, limit: int = 20, include_branches: bool = False, locks: SessionLocks | None = None
) -> list[SessionRow]:
    """The most recently active sessions, newest first.

    Args:
        store: The session store.
        limit: Most rows to return.
        include_branches: Also list the sessions of parallel branches and child runs (hidden by default).
        locks: The runners' session locks: a `running` session whose lock is free is listed `interrupted`
            (None: statuses as recorded).

    Raises:
        StoreError: The store cannot be read.
    """
    if limit <= 0:
        return []
    infos = _visible_sessions(store, limit, include_branches)
    by_id = {info.session_id: info for info in infos}
    return [_row(store, info, by_id, locks) for info in infos]


def _visible_sessions(store: SessionStore, limit: int, include_branches: bool) -> list[SessionInfo]:
    fetch = limit if include_branches else limit * 4
    while True:
        listed = store.list_sessions(limit=fetch)
        visible = [i for i in listed if include_branches or i.metadata.spawn_reason != PARALLEL_SPAWN]
        if len(visible) >= limit or len(listed) < fetch:
            return visible[:limit]
        fetch *= 4


def _row(
    store: SessionStore, info: SessionInfo, by_id: dict[str, SessionInfo], locks: SessionLocks | None
) -> SessionRow:
    if info.metadata.spawn_reason == PARALLEL_SPAWN:
        return SessionRow(info, _branch_status(store, info, by_id, locks), None, branch_label(info))
    info = live_info(store, info, locks)
    cost = session_spending(store, info.session_id).cost if isinstance(store, SessionTotalsReader) else None
    return SessionRow(info, info.status.value, _nodes_run(store, info), cost=cost)


def _nodes_run(store: SessionStore, info: SessionInfo) -> int:
    turn = store.latest_checkpoint(info.session_id)
    if turn is None:
        return 0
    record = decode_fields(turn, _CHECKPOINT_SKIPPED)
    return record.node_visits if isinstance(record, r.CheckpointRecord) else 0


def _branch_status(
    store: SessionStore, info: SessionInfo, by_id: dict[str, SessionInfo], locks: SessionLocks | None
) -> str:
    """A branch's outcome once it completed; until then the status of the run it belongs to."""
    done = branch_completion(store, info)
    if done is not None and done.status is not None:
        return done.status.value
    return live_info(store, root_info(store, info, by_id), locks).status.value
