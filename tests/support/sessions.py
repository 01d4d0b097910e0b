"""Helpers for session-recording tests: a recorded engine run over any store, and readable session stories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph
from orchestra_core.handlers import build_registry
from orchestra_core.model import records as r
from orchestra_core.model.checkpoint import RunResult
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionMetadata, SessionStore, StoredTurn
from orchestra_core.session import api
from orchestra_core.session.checkpoints import PipelineSource, from_record
from orchestra_core.session.codec import decode_record
from orchestra_core.session.recorder import FLUSH_AFTER_S, RepoHeads, SessionRecorder
from tests.support.engine import Harness


class RecordedRun:
    """A Harness engine whose observer and checkpoint sink is a SessionRecorder writing into `store`."""

    def __init__(
        self,
        store: SessionStore,
        *,
        pipeline: str = "p",
        source: PipelineSource | None = None,
        repo_heads: RepoHeads | None = None,
        flush_after_s: float = FLUSH_AFTER_S,
        **harness: Any,
    ) -> None:
        self.store = store
        self.session_id = store.create_session(SessionMetadata(pipeline=pipeline)).session_id
        self.recorder = SessionRecorder(
            store, self.session_id, pipeline_name=pipeline, source=source, repo_heads=repo_heads,
            flush_after_s=flush_after_s,
        )
        sinks = harness.pop("sinks", None) or [self.recorder]
        registry = build_registry(
            backend=harness.pop("backend", None),
            interviewer=harness.pop("interviewer", None),
            command_runner=harness.pop("command_runner", None),
            pipeline_loader=harness.pop("pipeline_loader", None),
            on_turn_factory=self._on_turn,
        )
        self.harness = Harness(registry=registry, sinks=sinks, observers=[self.recorder], **harness)

    def _on_turn(self, _node: Node, stage: StageRun) -> Callable[[AgentTurn], None]:
        return lambda turn: self.recorder.record_agent_turn(turn, stage.branch)

    def run(self, graph: Graph, **kwargs: Any) -> RunResult:
        return self.harness.run(graph, session_id=self.session_id, **kwargs)


def turns(store: SessionStore, session_id: str) -> list[StoredTurn]:
    """A session's whole history, oldest first."""
    history = list(api.history(store, session_id))
    history.reverse()
    return history


def records(store: SessionStore, session_id: str) -> list[object]:
    """The decoded records of a session's history, oldest first."""
    return [decode_record(turn) for turn in turns(store, session_id)]


def story(store: SessionStore, session_id: str) -> list[str]:
    """One short line per turn: `lifecycle started`, `node a completed`, `checkpoint a`, `fan_in fan`, ..."""
    return [describe(record) for record in records(store, session_id)]


def describe(record: object) -> str:
    """A record as one short line (see `story`)."""
    if isinstance(record, r.PipelineLifecycle):
        return f"lifecycle {record.event.value}"
    if isinstance(record, r.NodeExecution):
        return f"node {record.node_id} {record.event.value}"
    if isinstance(record, r.CheckpointRecord):
        return f"checkpoint {record.current_node or '-'}"
    if isinstance(record, r.ParallelExecution):
        branch = f" {record.branch_id}" if record.branch_id else ""
        return f"{record.event.value} {record.node_id}{branch}"
    if isinstance(record, r.HumanInteraction):
        return f"human {record.node_id}"
    if isinstance(record, AgentTurn):
        return f"agent {record.node_id} {record.turn_number}"
    return type(record).__name__


def stored_checkpoints(store: SessionStore, session_id: str) -> list[Any]:
    """Every Checkpoint turn of the session read back as the engine checkpoint a resume from it would use."""
    found = []
    for turn in turns(store, session_id):
        if isinstance(decode_record(turn), r.CheckpointRecord):
            at = api.latest_checkpoint(store, session_id, at_turn_id=turn.turn_id)
            assert at is not None and at.turn.turn_id == turn.turn_id
            found.append(from_record(at.checkpoint, at.turn.created_at))
    return found
