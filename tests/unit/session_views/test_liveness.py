"""A session recorded as running whose runner's lock is free shows `interrupted` (listing, summary, its branch
sessions); while the lock is held, or without locks to ask, it shows `running`; a finished run shows how it ended."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model.outcome import StageStatus
from orchestra_core.ports.session_store import SessionMetadata, SessionStatus, SessionStore
from orchestra_core.session import api
from orchestra_core.session.listing import list_session_rows
from orchestra_core.session.liveness import live_info
from orchestra_core.session.summary import session_summary
from orchestra_core.testing.session_locks import InMemorySessionLocks


def _started_fan_out(store: SessionStore) -> tuple[str, str, str]:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    api.append_record(store, main, r.NodeExecution("first", r.NodeEvent.STARTED, "tool"))
    fan_out = api.append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=2))
    done, held = (
        api.fork_session(store, main, fan_out.turn_id, spawn_reason="parallel", title=f"branch fan:{b}").session_id
        for b in ("done", "held")
    )
    api.append_record(
        store, done,
        r.ParallelExecution("fan", r.ParallelEvent.BRANCH_COMPLETED, branch_id="done", status=StageStatus.SUCCESS),
    )
    api.append_record(store, held, r.NodeExecution("x", r.NodeEvent.STARTED, "tool"))
    return main, done, held


def test_a_running_session_whose_runner_died_is_interrupted(store: SessionStore) -> None:
    main, done, held = _started_fan_out(store)
    runner = InMemorySessionLocks("runner 1")
    runner.acquire(main)
    reader = runner.runner("status")

    def statuses() -> dict[str, str]:
        rows = list_session_rows(store, include_branches=True, locks=reader)
        return {row.info.session_id: row.status for row in rows}

    assert statuses() == {main: "running", done: "success", held: "running"}
    assert session_summary(store, main, reader).info.status is SessionStatus.RUNNING
    assert statuses() == {
        row.info.session_id: row.status for row in list_session_rows(store, include_branches=True)
    }  # no locks: as recorded

    runner.crash()
    assert statuses() == {main: "interrupted", done: "success", held: "interrupted"}
    summary = session_summary(store, main, reader)
    assert summary.info.status is SessionStatus.INTERRUPTED and summary.runner_gone
    assert summary.error is not None and f"orchestra resume {main}" in summary.error
    assert summary.to_json()["ended_at"] is not None
    assert session_summary(store, held, reader).info.status is SessionStatus.INTERRUPTED
    assert session_summary(store, done, reader).info.status is SessionStatus.SUCCESS
    row = next(row for row in list_session_rows(store, locks=reader) if row.info.session_id == main)
    assert row.duration_s is not None and row.to_json()["status"] == "interrupted"


def test_a_run_that_ended_shows_its_end_and_its_branches_never_running(store: SessionStore) -> None:
    main, done, held = _started_fan_out(store)
    reader = InMemorySessionLocks("status")
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.COMPLETED, "p"))
    assert live_info(store, store.get_session(main), reader).status is SessionStatus.SUCCESS
    rows = list_session_rows(store, include_branches=True, locks=reader)
    assert {row.info.session_id: row.status for row in rows} == {main: "success", done: "success", held: "success"}
    for session in (main, done, held):
        assert session_summary(store, session, reader).info.status is SessionStatus.SUCCESS


def test_a_session_its_locks_never_saw_stays_running(store: SessionStore) -> None:
    """Run from another machine sharing the store (or another project): its lock is out of sight."""
    main, _done, held = _started_fan_out(store)
    elsewhere = InMemorySessionLocks("another machine")
    statuses = {row.info.session_id: row.status for row in list_session_rows(store, include_branches=True, locks=elsewhere)}
    assert statuses[main] == "running" and statuses[held] == "running"
    assert session_summary(store, main, elsewhere).info.status is SessionStatus.RUNNING


def test_a_new_session_whose_runner_took_it_and_died_is_interrupted_and_one_never_taken_stays_new(
    store: SessionStore,
) -> None:
    taken = store.create_session(SessionMetadata(pipeline="p")).session_id  # its runner died before recording
    queued = store.create_session(SessionMetadata(pipeline="p")).session_id  # waits for a fleet worker
    runner = InMemorySessionLocks("runner 1")
    runner.acquire(taken)
    reader = runner.runner("status")

    def statuses() -> dict[str, str]:
        return {row.info.session_id: row.status for row in list_session_rows(store, locks=reader)}

    assert statuses() == {taken: "new", queued: "new"}  # held: its runner is setting up
    runner.crash()
    assert statuses() == {taken: "interrupted", queued: "new"}
    assert live_info(store, store.get_session(taken), reader).status is SessionStatus.INTERRUPTED
    summary = session_summary(store, taken, reader)
    assert summary.info.status is SessionStatus.INTERRUPTED and summary.runner_gone
    assert summary.error is not None and summary.error.endswith(
        f"`orchestra resume {taken} --pipeline FILE` starts it again from the beginning (it stopped before its "
        "first checkpoint, and before it recorded its pipeline)"
    )
    assert live_info(store, store.get_session(queued), reader).status is SessionStatus.NEW
