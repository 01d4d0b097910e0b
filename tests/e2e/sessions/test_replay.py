"""`orchestra replay SESSION --checkpoint TURN_ID`: a forked session sharing history up to that turn, the
original untouched, the fork run to the end; bad turns and sessions are bad input and leave nothing behind."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionStatus, SessionStore
from tests.e2e.sessions.projects import STEP_NODES, Project
from tests.support.sessions import records, story, turns


def _snapshot(store: SessionStore, session: str) -> list[tuple[Any, ...]]:
    return [(t.turn_id, t.parent_turn_id, t.type_id, dict(t.data)) for t in turns(store, session)]


def _turn_of(store: SessionStore, session: str, line: str) -> str:
    """The id of the turn `story` describes as `line`."""
    return turns(store, session)[story(store, session).index(line)].turn_id


@pytest.fixture
def recorded(project: Project) -> str:
    session = project.run_json("run", "steps.dot")["session_id"]
    (project.root / "ran.txt").unlink()
    return session


def test_replay_forks_at_a_checkpoint_and_runs_the_fork_to_the_end(project: Project, recorded: str) -> None:
    with project.open_store() as store:
        before = _snapshot(store, recorded)
        at = _turn_of(store, recorded, "checkpoint plan")
    result = project.cli("replay", recorded, "--checkpoint", at)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    fork = lines[0].removeprefix("session ")
    assert lines[1] == f"replay  of session {recorded} from turn {at}"
    assert project.ran() == ["gate", "three"]

    with project.open_store() as store:
        assert _snapshot(store, recorded) == before  # the original is untouched
        assert store.get_session(recorded).status is SessionStatus.SUCCESS
        info = store.get_session(fork)
        assert (info.metadata.parent_session_id, info.metadata.spawn_reason) == (recorded, "replay")
        assert info.status is SessionStatus.SUCCESS
        shared = [t.turn_id for t in turns(store, recorded)]
        shared = shared[: shared.index(at) + 1]
        assert [t.turn_id for t in turns(store, fork)][: len(shared)] == shared
        assert story(store, fork)[len(shared) :] == [
            "lifecycle resumed",
            *(
                line
                for node in ("gate", "three", "done")
                for line in (f"node {node} started", f"node {node} completed", f"checkpoint {node}")
            ),
            "lifecycle completed",
        ]
        assert project.final_state(store, fork)["completed_nodes"] == STEP_NODES
    manifest = project.root / ".orchestra" / "runs" / fork / "manifest.json"
    assert manifest.is_file()  # the fork's run directory is a complete mirror, resumable with --logs-root


def test_replay_from_a_turn_between_checkpoints_uses_the_checkpoint_before_it(
    project: Project, recorded: str
) -> None:
    with project.open_store() as store:
        at = _turn_of(store, recorded, "node gate started")
        checkpoint = _turn_of(store, recorded, "checkpoint plan")
    document = project.cli("replay", recorded, "--checkpoint", at, "--json", "--quiet")
    assert document.returncode == 0, document.stderr
    assert project.ran() == ["gate", "three"]
    fork = str(int(recorded) + 1)
    with project.open_store() as store:
        fork_turns = [t.turn_id for t in turns(store, fork)]
        assert checkpoint in fork_turns and at in fork_turns  # the history is shared up to the turn asked for
        resumed = next(
            x
            for x in records(store, fork)
            if isinstance(x, r.PipelineLifecycle) and x.event is r.LifecycleEvent.RESUMED
        )
        assert resumed.logs_root == str(project.root / ".orchestra" / "runs" / fork)


def test_unknown_turns_and_sessions_are_bad_input(project: Project, recorded: str) -> None:
    with project.open_store() as store:
        own_turn = turns(store, recorded)[3].turn_id
    cases = [
        (recorded, "999", f"turn '999' is not in the history of session {recorded}"),
        (recorded, "nope", f"turn 'nope' is not in the history of session {recorded}"),
        ("42", own_turn, "no session '42'"),
    ]
    for session, turn, message in cases:
        result = project.cli("replay", session, "--checkpoint", turn)
        assert result.returncode == 2
        assert result.stderr.startswith("orchestra: error: ") and message in result.stderr
        assert result.stderr.count("\n") == 1
    with project.open_store() as store:
        assert [info.session_id for info in store.list_sessions()] == [recorded]


def test_a_replay_that_cannot_start_leaves_no_session_behind(project: Project, recorded: str) -> None:
    (project.root / "broken.dot").write_text("digraph broken { a [prompt=x] }", encoding="utf-8")
    with project.open_store() as store:
        at = _turn_of(store, recorded, "checkpoint plan")
        first_turn = turns(store, recorded)[0].turn_id
    invalid = project.cli("replay", recorded, "--checkpoint", at, "--pipeline", "broken.dot")
    assert invalid.returncode == 1 and "broken.dot: error [start_node]" in invalid.stderr
    too_early = project.cli("replay", recorded, "--checkpoint", first_turn)
    assert too_early.returncode == 2 and "no checkpoint at or before turn" in too_early.stderr
    with project.open_store() as store:
        assert [info.session_id for info in store.list_sessions()] == [recorded]


def test_replay_takes_logs_root_as_run_does(project: Project, recorded: str) -> None:
    with project.open_store() as store:
        at = _turn_of(store, recorded, "checkpoint plan")
    logs = project.root / "replay-logs"
    document = project.run_json("replay", recorded, "--checkpoint", at, "--logs-root", str(logs))
    assert document["status"] == "success" and document["logs_root"] == str(logs)
    assert (logs / "manifest.json").is_file() and (logs / "checkpoint.json").is_file()
