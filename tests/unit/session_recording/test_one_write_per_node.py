"""One store write per node: its turns with its checkpoint in one append_batch; turns that wait too long (the
start of a slow node) are written by the background flusher, and what waits is written before anything
written at once."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from orchestra_core.model import events as ev
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.session_store import SessionMetadata, StoredTurn, TurnAppend
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.engine import linear
from tests.support.sessions import RecordedRun, story


class _BatchLog(InMemorySessionStore):
    """Remembers the type ids of every batch appended."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.landed = threading.Event()

    def append_batch(self, turns: Sequence[TurnAppend]) -> list[StoredTurn]:
        self.batches.append([turn.type_id.removeprefix("dev.orchestra.") for turn in turns])
        stored = super().append_batch(turns)
        self.landed.set()
        return stored


def test_each_node_is_written_once_with_its_checkpoint() -> None:
    store = _BatchLog()
    run = RecordedRun(store, flush_after_s=3600)  # the flusher never cuts in
    assert run.run(linear("a", "b", "c")).succeeded
    node_batches = [batch for batch in store.batches if "NodeExecution" in batch]
    assert node_batches == [["NodeExecution", "NodeExecution", "Checkpoint"]] * 5  # start, a, b, c, done
    assert story(store, run.session_id)[-1].startswith("lifecycle completed")


def _ended(session_id: str) -> ev.StageCompleted:
    return ev.StageCompleted(
        session_id=session_id, timestamp=datetime.now(UTC), branch=None, node_id="slow", handler_type="codergen",
        index=1, outcome=Outcome.success(), attempts=1, duration_s=9.0,
    )


def test_turns_waiting_too_long_for_their_checkpoint_are_written_by_the_flusher() -> None:
    store = _BatchLog()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    recorder = SessionRecorder(store, session, pipeline_name="p", flush_after_s=0.01)
    recorder.on_event(_ended(session))
    assert store.landed.wait(30), "the flusher never wrote the waiting turn"
    assert story(store, session) == ["node slow completed"]
    recorder.close()


def test_waiting_turns_are_written_on_flush_and_before_anything_written_at_once() -> None:
    store = _BatchLog()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    recorder = SessionRecorder(store, session, pipeline_name="p", flush_after_s=3600)
    recorder.on_event(_ended(session))
    assert store.batches == []  # it waits for the checkpoint
    recorder.flush()
    assert store.batches == [["NodeExecution"]]
    recorder.on_event(_ended(session))
    recorder.close()
    assert story(store, session) == ["node slow completed", "node slow completed"]
