"""`status` without a session: recent sessions first, branch sessions hidden unless asked, nodes run, durations,
and the status of a branch session (its outcome, else the run's)."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model.outcome import StageStatus
from orchestra_core.ports.session_store import SessionMetadata, SessionStore
from orchestra_core.session import api
from orchestra_core.session.listing import list_session_rows
from tests.support.engine import graph, linear
from tests.support.sessions import RecordedRun

FAN = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; l [prompt=l]; r [prompt=r]; merge [shape=tripleoctagon]
    start -> fan -> l -> merge
    fan -> r -> merge
    merge -> done
}
"""
DESIGN_ROW_KEYS = {"session_id", "pipeline", "status", "started_at", "ended_at"}


def test_sessions_are_listed_newest_first_with_branch_sessions_hidden(store: SessionStore) -> None:
    plain = RecordedRun(store, pipeline="plain")
    plain.run(linear("a", "b"))
    fan = RecordedRun(store, pipeline="fan")
    fan.run(graph(FAN))
    rows = list_session_rows(store)
    assert [row.info.session_id for row in rows] == [fan.session_id, plain.session_id]
    assert [row.nodes_run for row in rows] == [4, 4]  # start, fan, merge, done / start, a, b, done
    document = rows[1].to_json()
    assert document.keys() >= DESIGN_ROW_KEYS
    assert (document["pipeline"], document["status"], document["branch"]) == ("plain", "success", None)
    assert document["ended_at"] is not None and document["duration_s"] is not None

    everything = list_session_rows(store, include_branches=True)
    branches = [row for row in everything if row.branch is not None]
    assert sorted(row.branch for row in branches) == ["fan:l", "fan:r"]
    assert all(row.status == "success" and row.nodes_run is None for row in branches)
    assert {row.info.metadata.parent_session_id for row in branches} == {fan.session_id}


def test_the_limit_counts_the_sessions_shown(store: SessionStore) -> None:
    runs = [RecordedRun(store, pipeline=f"fan{n}") for n in range(3)]
    for run in runs:
        run.run(graph(FAN))
    rows = list_session_rows(store, limit=2)
    assert [row.info.session_id for row in rows] == [runs[2].session_id, runs[1].session_id]
    assert len(list_session_rows(store, limit=4, include_branches=True)) == 4
    assert list_session_rows(store, limit=0) == []


def test_a_branch_shows_its_outcome_else_the_status_of_its_run(store: SessionStore) -> None:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    fan_out = api.append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=2))
    done, cut = (
        api.fork_session(store, main, fan_out.turn_id, spawn_reason="parallel", title=f"branch fan:{b}").session_id
        for b in ("done", "cut")
    )
    api.append_record(
        store, done, r.ParallelExecution("fan", r.ParallelEvent.BRANCH_COMPLETED, branch_id="done", status=StageStatus.FAIL)
    )
    api.append_record(store, cut, r.NodeExecution("x", r.NodeEvent.STARTED, "tool"))

    def statuses() -> dict[str, str]:
        return {row.info.session_id: row.status for row in list_session_rows(store, include_branches=True)}

    assert statuses() == {main: "running", done: "fail", cut: "running"}
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.FAILED, "p", error="boom"))
    assert statuses() == {main: "fail", done: "fail", cut: "fail"}
    running = next(row for row in list_session_rows(store, include_branches=True) if row.info.session_id == cut)
    assert running.duration_s is not None  # over with its run


def test_a_replay_is_listed_with_its_origin(store: SessionStore) -> None:
    run = RecordedRun(store)
    run.run(linear("a"))
    head = store.head(run.session_id).turn_id
    assert head is not None
    replay = api.fork_session(store, run.session_id, head).session_id
    api.append_record(store, replay, r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"))
    (row, _original) = list_session_rows(store)
    assert row.info.session_id == replay
    assert (row.to_json()["parent_session_id"], row.to_json()["spawn_reason"]) == (run.session_id, "replay")
