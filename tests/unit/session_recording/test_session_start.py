"""Where resume and replay start: the latest checkpoint, the checkpoint at or before a turn, the recorded
pipeline, a fork made only when the run begins, and parallel branch sessions pointed back at their run."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.store_errors import SessionNotFoundError, TurnNotFoundError
from orchestra_core.ports.session_store import SessionMetadata, SessionStore
from orchestra_core.runs.start import (
    REPLAY,
    RESUME,
    NothingToResumeError,
    begin,
    start_replay,
    start_resume,
)
from orchestra_core.session.api import append_record
from orchestra_core.session.checkpoints import PipelineSource, RepoHead
from tests.support.engine import graph
from tests.support.sessions import RecordedRun, story, turns

FAN = """digraph fan {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt=a]; fan [shape=component]; l [prompt=l]; r [prompt=r]; merge [shape=tripleoctagon]
    start -> a -> fan
    fan -> l
    fan -> r
    l -> merge
    r -> merge
    merge -> done
}
"""


@pytest.fixture
def recorded(store: SessionStore) -> RecordedRun:
    blob = store.put_blob(FAN.encode())
    run = RecordedRun(store, pipeline="fan", source=PipelineSource("pipelines/fan.dot", blob))
    assert run.run(graph(FAN)).succeeded
    return run


def _turn(store: SessionStore, session: str, line: str) -> str:
    return turns(store, session)[story(store, session).index(line)].turn_id


def test_resume_starts_at_the_latest_checkpoint_with_the_recorded_pipeline(
    store: SessionStore, recorded: RecordedRun
) -> None:
    start = start_resume(store, recorded.session_id, None)
    assert (start.kind, start.session_id) == (RESUME, recorded.session_id)
    assert start.checkpoint is not None and start.checkpoint.current_node == "done"
    assert start.pipeline_text == FAN and start.source.path == "pipelines/fan.dot"


def test_resume_with_another_pipeline_file_reads_that_file(
    store: SessionStore, recorded: RecordedRun, tmp_path: Path
) -> None:
    other = tmp_path / "other.dot"
    other.write_text(FAN.replace("fan {", "other {"), encoding="utf-8")
    start = start_resume(store, recorded.session_id, other)
    assert start.pipeline_text.startswith("digraph other") and start.source.path == str(other)
    assert start.source.blob is not None and store.get_blob(start.source.blob).decode() == start.pipeline_text


def test_a_session_without_a_checkpoint_starts_again_from_its_recorded_start(store: SessionStore) -> None:
    session = store.create_session(SessionMetadata(pipeline="fan")).session_id
    blob = store.put_blob(FAN.encode())
    for record in (
        r.PipelineLifecycle(r.LifecycleEvent.STARTED, "fan", dot_path="fan.dot", dot_blob=blob,
                            initial_context={"ticket": "PROJ-12"}),
        w.SessionBranchCreated(repo="api", branch="orchestra/fan/1", base_sha="a" * 40),
        w.SessionBranchCreated(repo="web", branch="orchestra/fan/1-2", base_sha="b" * 40),
    ):  # fmt: skip
        append_record(store, session, record)
    start = start_resume(store, session, None)
    assert (start.kind, start.session_id, start.checkpoint, start.from_start) == (RESUME, session, None, True)
    assert (start.pipeline_text, start.source, dict(start.initial_context)) == (
        FAN, PipelineSource("fan.dot", blob), {"ticket": "PROJ-12"}
    )
    assert start.repo_heads == {
        "api": RepoHead("orchestra/fan/1", "a" * 40, "a" * 40), "web": RepoHead("orchestra/fan/1-2", "b" * 40, "b" * 40),
    }  # fmt: skip


def test_a_session_that_recorded_no_start_needs_its_pipeline_to_start_again(store: SessionStore, tmp_path: Path) -> None:
    empty = store.create_session(SessionMetadata(pipeline="p")).session_id
    with pytest.raises(NothingToResumeError, match=f"`orchestra resume {empty} --pipeline FILE`"):
        start_resume(store, empty, None)
    (tmp_path / "fan.dot").write_text(FAN, encoding="utf-8")
    start = start_resume(store, empty, tmp_path / "fan.dot")
    assert start.from_start and start.pipeline_text == FAN and start.source.path == str(tmp_path / "fan.dot")
    with pytest.raises(SessionNotFoundError):
        start_resume(store, "4242", None)


def test_a_replay_of_a_session_without_a_checkpoint_says_there_is_nothing_to_fork(store: SessionStore) -> None:
    session = store.create_session(SessionMetadata(pipeline="fan")).session_id
    blob = store.put_blob(FAN.encode())
    started = append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "fan", dot_blob=blob))
    with pytest.raises(NothingToResumeError) as caught:
        start_replay(store, session, started.turn_id, None)
    assert str(caught.value) == (
        f"session {session} has no checkpoint to fork a replay from; `orchestra resume {session}` starts it again "
        "from the beginning (it stopped before its first checkpoint)"
    )


def test_replay_plans_without_forking_and_begin_forks_at_the_turn_asked_for(
    store: SessionStore, recorded: RecordedRun
) -> None:
    main = recorded.session_id
    at = _turn(store, main, "node fan started")
    checkpoint = _turn(store, main, "checkpoint a")
    sessions = len(store.list_sessions(limit=100))
    planned = start_replay(store, main, at, None)
    assert len(store.list_sessions(limit=100)) == sessions  # nothing exists until the run begins
    assert (planned.kind, planned.session_id, planned.origin, planned.fork_at) == (
        REPLAY,
        "",
        (main, checkpoint),
        at,
    )
    assert planned.checkpoint is not None and planned.checkpoint.current_node == "a"
    assert planned.pipeline_text == FAN

    begun = begin(store, planned)
    fork = store.get_session(begun.session_id)
    assert (fork.metadata.parent_session_id, fork.metadata.spawn_reason) == (main, "replay")
    assert fork.head_turn_id == at and begun.fork_at is None
    assert begin(store, begun) == begun


def test_replay_before_the_first_checkpoint_or_from_a_foreign_turn_is_refused(
    store: SessionStore, recorded: RecordedRun
) -> None:
    main = recorded.session_id
    with pytest.raises(NothingToResumeError, match="no checkpoint at or before turn"):
        start_replay(store, main, turns(store, main)[0].turn_id, None)
    other = RecordedRun(store)
    other.run(graph(FAN))
    with pytest.raises(TurnNotFoundError):
        start_replay(store, main, turns(store, other.session_id)[-1].turn_id, None)


def test_branch_sessions_point_resume_and_replay_back_at_their_run(
    store: SessionStore, recorded: RecordedRun
) -> None:
    main = recorded.session_id
    branch = recorded.recorder.branch_sessions()["fan:l"]
    with pytest.raises(
        NothingToResumeError,
        match=rf"session {branch} \(branch fan:l\) is a parallel branch of "
        rf"session {main}; resume session {main}$",
    ):
        start_resume(store, branch, None)
    checkpoint = _turn(store, main, "checkpoint a")
    with pytest.raises(NothingToResumeError, match=rf"orchestra replay {main} --checkpoint {checkpoint}$"):
        start_replay(store, branch, store.head(branch).turn_id, None)
