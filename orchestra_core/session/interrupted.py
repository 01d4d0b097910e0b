"""Nodes a stopped run left running: started after the session's latest checkpoint and never ended."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.session.api import history
from orchestra_core.session.catalog import CHECKPOINT, NODE_EXECUTION
from orchestra_core.session.codec import decode_record

_OPEN = (r.NodeEvent.STARTED, r.NodeEvent.RETRYING)


def open_nodes(store: SessionStore, session_id: str) -> list[r.NodeExecution]:
    """The main line's node executions still open at the session's head: each node's latest record since the
    latest checkpoint, when that record says it started (or is retrying) and nothing after it ended it.

    Only the turns since the latest checkpoint are read (a resume continues from that checkpoint, so a node
    open before it was already accounted for by it).
    """
    since: list[r.NodeExecution] = []
    for turn in history(store, session_id):
        if turn.type_id == CHECKPOINT.type_id:
            break
        if turn.type_id == NODE_EXECUTION.type_id:
            record = decode_record(turn)
            assert isinstance(record, r.NodeExecution)
            since.append(record)
    latest: dict[str, r.NodeExecution] = {}
    for record in reversed(since):  # oldest first: the last word on each node wins
        latest[record.node_id] = record
    return [record for record in latest.values() if record.event in _OPEN]


def interruption_of(record: r.NodeExecution) -> r.NodeExecution:
    """The record that closes an open node execution: it was interrupted in the attempt it was in."""
    return r.NodeExecution(record.node_id, r.NodeEvent.INTERRUPTED, record.handler_type, attempt=record.attempt)
