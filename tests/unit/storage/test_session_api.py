"""The session-level API over the port: status rows, summaries, following a run, cursor rules, ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.records import (
    CheckpointRecord,
    LifecycleEvent,
    NodeEvent,
    NodeExecution,
    PipelineLifecycle,
)
from orchestra_core.model.store_errors import BlobNotFoundError, TurnNotFoundError
from orchestra_core.ports.session_store import SessionMetadata, SessionStatus, SessionTotals
from orchestra_core.session import api
from orchestra_core.session.catalog import LIFECYCLE_EVENT
from orchestra_core.session.cursor import SessionCursor, status_after_lifecycle
from orchestra_core.session.identifiers import normalize_blob_hash, parse_id
from orchestra_core.session.summary import session_row, session_summary
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.contracts.session_store.samples import CORE_AGENT_TURN


@pytest.fixture
def store() -> InMemorySessionStore:
    return InMemorySessionStore(ManualClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC)))


def _run(store: InMemorySessionStore) -> str:
    session = store.create_session(SessionMetadata(pipeline="pr-review")).session_id
    records = [
        PipelineLifecycle(LifecycleEvent.STARTED, "pr-review"),
        NodeExecution("plan", NodeEvent.STARTED, handler_type="codergen"),
        CORE_AGENT_TURN,
        NodeExecution(  # the engine's durations run from the node's start, over all its attempts
            "plan", NodeEvent.FAILED, attempt=1, outcome=Outcome(StageStatus.RETRY), duration_s=1.5
        ),
        NodeExecution("plan", NodeEvent.RETRYING, attempt=2),
        NodeExecution("plan", NodeEvent.COMPLETED, attempt=2, outcome=Outcome.success(), duration_s=2.0),
        CheckpointRecord("plan", ("plan",)),
        NodeExecution("review", NodeEvent.STARTED),
    ]
    for record in records:
        api.append_record(store, session, record)
    return session


def test_summary_has_a_node_timeline_and_the_turns(store: InMemorySessionStore) -> None:
    summary = session_summary(store, _run(store)).to_json()
    assert summary["pipeline"] == "pr-review" and summary["status"] == "running"
    assert [{k: n[k] for k in ("id", "status", "attempts", "duration_s")} for n in summary["nodes"]] == [
        {"id": "plan", "status": "success", "attempts": 2, "duration_s": 2.0},
        {"id": "review", "status": "running", "attempts": 1, "duration_s": None},
    ]
    agent = next(t for t in summary["turns"] if t["type"] == "dev.orchestra.AgentTurn")
    assert (agent["node_id"], agent["turn_number"], agent["git_sha"]) == ("security_reviewer", 2, "e4f5a6b7")
    assert agent["files_written"] == ["backend:app/x.rb", "frontend:src/y.ts"]
    checkpoint = next(t for t in summary["turns"] if t["type"] == "dev.orchestra.Checkpoint")
    assert checkpoint["node_id"] == "plan"
    assert [t["turn_id"] for t in summary["turns"]] == [str(n) for n in range(1, 9)]


def test_status_rows_end_only_when_the_run_ended(store: InMemorySessionStore) -> None:
    session = _run(store)
    assert session_row(store.get_session(session))["ended_at"] is None
    store._clock.advance(60)  # type: ignore[attr-defined]
    api.append_record(store, session, PipelineLifecycle(LifecycleEvent.FAILED, "pr-review", error="boom"))
    row = session_row(store.get_session(session))
    assert (row["status"], row["started_at"], row["ended_at"]) == (
        "fail",
        "2026-03-01T12:00:00+00:00",
        "2026-03-01T12:01:00+00:00",
    )


def test_turns_after_follows_a_running_session(store: InMemorySessionStore) -> None:
    session = _run(store)
    head = store.head(session).turn_id
    assert api.turns_after(store, session, head) == []
    added = [store.append(session, "t.E", 1, {1: n}).turn_id for n in range(5)]
    assert [t.turn_id for t in api.turns_after(store, session, head, page_size=2)] == added
    assert len(api.turns_after(store, session, None)) == 13


def test_fork_session_refuses_a_turn_of_another_session(store: InMemorySessionStore) -> None:
    one, other = _run(store), _run(store)
    with pytest.raises(TurnNotFoundError):
        api.fork_session(store, one, store.head(other).turn_id)  # type: ignore[arg-type]


def test_latest_checkpoint_at_an_agent_turn_gives_the_enclosing_checkpoint(
    store: InMemorySessionStore,
) -> None:
    session = _run(store)
    first = api.latest_checkpoint(store, session)
    assert first is not None and first.checkpoint.current_node == "plan"
    agent = api.append_record(store, session, CORE_AGENT_TURN)
    api.append_record(store, session, CheckpointRecord("review", ("plan", "review")))
    enclosing = api.latest_checkpoint(store, session, at_turn_id=agent.turn_id)
    assert enclosing is not None and enclosing.turn.turn_id == first.turn.turn_id


@pytest.mark.parametrize(
    ("event", "before", "after"),
    [
        (LifecycleEvent.STARTED, SessionStatus.NEW, SessionStatus.RUNNING),
        (LifecycleEvent.RESUMED, SessionStatus.FAIL, SessionStatus.RUNNING),
        (LifecycleEvent.COMPLETED, SessionStatus.RUNNING, SessionStatus.SUCCESS),
        (LifecycleEvent.FAILED, SessionStatus.RUNNING, SessionStatus.FAIL),
        (LifecycleEvent.INTERRUPTED, SessionStatus.RUNNING, SessionStatus.INTERRUPTED),
    ],
)
def test_lifecycle_events_move_the_status(
    event: LifecycleEvent, before: SessionStatus, after: SessionStatus
) -> None:
    assert status_after_lifecycle({1: LIFECYCLE_EVENT.number(event)}, before) is after


def test_the_cursor_ignores_unknown_events_and_other_types() -> None:
    cursor = SessionCursor("4", SessionStatus.RUNNING)
    after_unknown_event = cursor.after("9", "dev.orchestra.PipelineLifecycle", {1: 77})
    assert (after_unknown_event.checkpoint_turn_id, after_unknown_event.status) == ("4", SessionStatus.RUNNING)
    assert after_unknown_event.totals == SessionTotals(lifecycle_turn_id="9")
    assert cursor.after("9", "t.E", {1: 0}) is cursor
    assert cursor.after("9", "dev.orchestra.Checkpoint", {}) == SessionCursor(
        "9", SessionStatus.RUNNING, SessionTotals(checkpoints=1)
    )


@pytest.mark.parametrize(
    ("text", "number"), [("42", 42), (42, 42), (" 7 ", 7), ("0", None), ("-3", None), ("x", None)]
)
def test_ids_parse_from_strings_and_numbers(text: object, number: int | None) -> None:
    assert parse_id(text) == number  # type: ignore[arg-type]


def test_blob_hashes_are_checked() -> None:
    assert normalize_blob_hash(" " + "AB" * 32) == "ab" * 32
    with pytest.raises(BlobNotFoundError):
        normalize_blob_hash("ab" * 31)
