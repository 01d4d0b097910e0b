"""Nodes a stopped run left running: found since the latest checkpoint, closed by the resume's recorder."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record
from orchestra_core.session.interrupted import open_nodes
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.sessions import story


def _session(*recorded: object) -> tuple[InMemorySessionStore, str]:
    store = InMemorySessionStore()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    for record in recorded:
        append_record(store, session, record)
    return store, session


def _node(node: str, event: r.NodeEvent, attempt: int = 1) -> r.NodeExecution:
    return r.NodeExecution(node, event, "tool", attempt=attempt)


def test_a_node_started_after_the_latest_checkpoint_and_never_ended_is_open() -> None:
    store, session = _session(
        _node("a", r.NodeEvent.STARTED),  # before the checkpoint: the checkpoint accounts for it
        r.CheckpointRecord(current_node="start"),
        _node("b", r.NodeEvent.STARTED),
        _node("b", r.NodeEvent.COMPLETED),
        r.CheckpointRecord(current_node="b"),
        _node("c", r.NodeEvent.STARTED),
        _node("c", r.NodeEvent.RETRYING, attempt=2),
    )
    assert [(x.node_id, x.event, x.attempt) for x in open_nodes(store, session)] == [
        ("c", r.NodeEvent.RETRYING, 2)
    ]


def test_a_node_that_ended_or_was_already_marked_interrupted_is_not_open() -> None:
    for end in (r.NodeEvent.COMPLETED, r.NodeEvent.FAILED, r.NodeEvent.SKIPPED, r.NodeEvent.INTERRUPTED):
        store, session = _session(r.CheckpointRecord(current_node="a"), _node("b", r.NodeEvent.STARTED), _node("b", end))
        assert open_nodes(store, session) == []


def test_the_recorder_closes_each_open_node_once() -> None:
    store, session = _session(
        r.CheckpointRecord(current_node="a"),
        _node("b", r.NodeEvent.STARTED),
        r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"),  # a resume that died before b ended, again
        _node("b", r.NodeEvent.INTERRUPTED),
        r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"),
        _node("b", r.NodeEvent.STARTED, attempt=1),
    )
    recorder = SessionRecorder(store, session, pipeline_name="p")
    assert recorder.record_interrupted_nodes() == ["b"]
    assert recorder.record_interrupted_nodes() == []
    assert story(store, session)[-2:] == ["node b started", "node b interrupted"]
