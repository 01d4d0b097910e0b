"""What `orchestra status` shows: sessions as rows, one session as a node timeline and its turns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from attrs import define, frozen

from orchestra_core.ports.session_store import Id, SessionInfo, SessionStatus, SessionStore, StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from orchestra_core.session.records import AgentTurnRecord, Checkpoint, NodeEvent, NodeExecution

_FINISHED = (SessionStatus.SUCCESS, SessionStatus.FAIL, SessionStatus.INTERRUPTED)


@frozen
class NodeSummary:
    """One node of the timeline: its latest status, how many attempts it took and their total time."""

    node_id: str
    status: str
    attempts: int
    duration_s: float


@frozen
class TurnSummary:
    """One turn as listed; agent fields are None for other types (a Checkpoint's node is the one it follows)."""

    turn_id: str
    type_id: str
    node_id: str | None = None
    turn_number: int | None = None
    git_sha: str | None = None
    commit_message: str | None = None
    files_written: tuple[str, ...] = ()
    model: str | None = None
    provider: str | None = None
    created_at: datetime | None = None


@frozen
class SessionSummary:
    """A session with its node timeline and turns, oldest first."""

    info: SessionInfo
    nodes: tuple[NodeSummary, ...]
    turns: tuple[TurnSummary, ...]

    def to_json(self) -> dict[str, Any]:
        """The `orchestra status SESSION --json` document (DESIGN.md, plus started_at/ended_at)."""
        row = session_row(self.info)
        return {
            **row,
            "nodes": [
                {"id": n.node_id, "status": n.status, "attempts": n.attempts, "duration_s": n.duration_s}
                for n in self.nodes
            ],
            "turns": [
                {
                    "turn_id": t.turn_id,
                    "type": t.type_id,
                    "node_id": t.node_id,
                    "turn_number": t.turn_number,
                    "git_sha": t.git_sha,
                    "commit_message": t.commit_message,
                    "files_written": list(t.files_written),
                    "model": t.model,
                    "provider": t.provider,
                }
                for t in self.turns
            ],
        }


def session_row(info: SessionInfo) -> dict[str, Any]:
    """One entry of `orchestra status --json`: id, pipeline, status, started_at, ended_at (ISO 8601, UTC)."""
    ended = info.updated_at if info.status in _FINISHED else None
    return {
        "session_id": info.session_id,
        "pipeline": info.metadata.pipeline,
        "status": info.status.value,
        "started_at": info.created_at.isoformat() if info.created_at else None,
        "ended_at": ended.isoformat() if ended else None,
    }


def session_summary(store: SessionStore, session_id: Id) -> SessionSummary:
    """Read a session's whole history and summarize it.

    Raises:
        SessionNotFoundError: No such session.
        TurnDataError: A dev.orchestra turn cannot be decoded.
    """
    info = store.get_session(session_id)
    turns = list(history(store, session_id))
    turns.reverse()
    timeline = _Timeline()
    summaries = []
    for turn in turns:
        record = decode_record(turn)
        if isinstance(record, NodeExecution):
            timeline.add(record)
        summaries.append(_summarize(turn, record))
    return SessionSummary(info, timeline.nodes(), tuple(summaries))


def _summarize(turn: StoredTurn, record: object) -> TurnSummary:
    if isinstance(record, AgentTurnRecord):
        return TurnSummary(
            turn.turn_id,
            turn.type_id,
            node_id=record.node_id,
            turn_number=record.turn_number,
            git_sha=record.git_sha,
            commit_message=record.commit_message,
            files_written=record.files_written,
            model=record.model,
            provider=record.provider,
            created_at=turn.created_at,
        )
    node_id = record.current_node if isinstance(record, Checkpoint) else getattr(record, "node_id", None)
    return TurnSummary(turn.turn_id, turn.type_id, node_id=node_id, created_at=turn.created_at)


@define
class _NodeState:
    status: str = "running"
    attempts: int = 0
    duration_s: float = 0.0


class _Timeline:
    """Folds NodeExecution events into per-node state, in first-seen order."""

    def __init__(self) -> None:
        self._nodes: dict[str, _NodeState] = {}

    def add(self, event: NodeExecution) -> None:
        state = self._nodes.setdefault(event.node_id, _NodeState())
        state.attempts = max(state.attempts, event.attempt)
        state.duration_s += event.duration_s or 0.0
        state.status = _status_of(event)

    def nodes(self) -> tuple[NodeSummary, ...]:
        return tuple(
            NodeSummary(node_id, state.status, state.attempts, round(state.duration_s, 6))
            for node_id, state in self._nodes.items()
        )


def _status_of(event: NodeExecution) -> str:
    if event.outcome is not None:
        return event.outcome.status.value
    fallback = {
        NodeEvent.STARTED: "running",
        NodeEvent.COMPLETED: "success",
        NodeEvent.FAILED: "fail",
        NodeEvent.RETRYING: "retry",
        NodeEvent.SKIPPED: "skipped",
    }
    return fallback[event.event]
