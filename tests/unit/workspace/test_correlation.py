"""Commit -> agent turn: trailers parsed, the session and its parallel branch sessions searched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.model import records as r
from orchestra_core.model.store_errors import SessionNotFoundError
from orchestra_core.model.turn import AgentTurn, TurnCommit
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record, fork_session
from orchestra_core.testing.session_store import InMemorySessionStore
from orchestra_core.workspace.correlation import OrchestraTrailers, find_commit_turn

SHA_A, SHA_B, SHA_C = "a" * 40, "b" * 40, "c" * 40


def agent_turn(node: str, number: int, *commits: TurnCommit) -> AgentTurn:
    return AgentTurn(
        node_id=node,
        turn_number=number,
        model="m",
        provider="p",
        messages=({"role": "assistant", "content": f"{node} {number}"},),
        commits=commits,
    )


def trailers(session: str, node: str = "code", turn: int = 0) -> OrchestraTrailers:
    parsed = OrchestraTrailers.parse(
        {"Orchestra-Session": session, "Orchestra-Node": node, "Orchestra-Turn": str(turn)}
    )
    assert parsed is not None
    return parsed


@pytest.fixture
def store() -> InMemorySessionStore:
    return InMemorySessionStore()


def test_trailers_parse_case_insensitively_and_need_a_session() -> None:
    parsed = OrchestraTrailers.parse(
        {
            "orchestra-session": " 7 ",
            "ORCHESTRA-NODE": "implement",
            "Orchestra-Turn": "3",
            "Orchestra-Pipeline": "pr",
            "Orchestra-Model": "claude",
            "Orchestra-Provider": "anthropic",
            "Signed-off-by": "someone",
        }
    )
    assert parsed == OrchestraTrailers("7", "implement", 3, "pr", "claude", "anthropic")
    assert OrchestraTrailers.parse({"Orchestra-Node": "x", "Signed-off-by": "y"}) is None
    assert OrchestraTrailers.parse({"Orchestra-Session": "1", "Orchestra-Turn": "two"}).turn_number is None  # type: ignore[union-attr]


@given(st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=6))
def test_trailers_parse_never_fails(values: dict[str, str]) -> None:
    parsed = OrchestraTrailers.parse(values)
    assert parsed is None or parsed.session_id


def test_finds_the_turn_that_recorded_the_sha(store: InMemorySessionStore) -> None:
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, session, agent_turn("code", 0, TurnCommit("project", SHA_A, "Add a\n\nbody")))
    wanted = append_record(store, session, agent_turn("code", 1, TurnCommit("project", SHA_B, "Add b")))
    append_record(store, session, agent_turn("code", 2))
    found = find_commit_turn(store, trailers(session, turn=1), SHA_B, "Add b")
    assert found is not None and found.exact
    assert (found.session_id, found.turn.turn_id, found.record.turn_number) == (session, wanted.turn_id, 1)


def test_a_multi_repo_turn_is_found_by_its_second_commit(store: InMemorySessionStore) -> None:
    session = store.create_session(SessionMetadata()).session_id
    record = agent_turn("code", 0, TurnCommit("backend", SHA_A, "x"), TurnCommit("frontend", SHA_B, "y"))
    append_record(store, session, record)
    found = find_commit_turn(store, trailers(session), SHA_B)
    assert found is not None and found.record == record


def test_turns_of_parallel_branches_are_found_in_their_forked_sessions(store: InMemorySessionStore) -> None:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    fan_out = append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=1))
    branch = fork_session(
        store, main, fan_out.turn_id, spawn_reason="parallel", title="branch fan:a"
    ).session_id
    wanted = append_record(store, branch, agent_turn("a", 0, TurnCommit("project", SHA_C, "In a branch")))
    append_record(
        store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_IN, branch_session_ids=(branch,))
    )
    found = find_commit_turn(store, trailers(main, node="a"), SHA_C)
    assert found is not None and (found.session_id, found.turn.turn_id) == (branch, wanted.turn_id)


def test_branches_of_a_run_that_died_before_fan_in_are_found_by_listing(store: InMemorySessionStore) -> None:
    main = store.create_session(SessionMetadata()).session_id
    start = append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT))
    branch = fork_session(store, main, start.turn_id, spawn_reason="parallel").session_id
    nested = fork_session(
        store, branch, append_record(store, branch, agent_turn("a", 0)).turn_id, spawn_reason="parallel"
    ).session_id
    append_record(store, nested, agent_turn("deep", 4, TurnCommit("project", SHA_A, "deep")))
    replay = fork_session(store, main, start.turn_id, spawn_reason="replay").session_id
    append_record(store, replay, agent_turn("other", 0, TurnCommit("project", SHA_B, "replayed")))
    assert find_commit_turn(store, trailers(main), SHA_A).session_id == nested  # type: ignore[union-attr]
    assert find_commit_turn(store, trailers(main), SHA_B) is None  # a replay has its own session id


def test_a_rebased_commit_is_found_by_node_turn_and_subject(store: InMemorySessionStore) -> None:
    session = store.create_session(SessionMetadata()).session_id
    append_record(store, session, agent_turn("code", 1, TurnCommit("project", SHA_A, "Older\n\nbody")))
    newest = append_record(
        store, session, agent_turn("code", 1, TurnCommit("project", SHA_B, "Add b\n\nbody"))
    )
    found = find_commit_turn(store, trailers(session, turn=1), SHA_C, "Add b")
    assert found is not None and not found.exact and found.turn.turn_id == newest.turn_id
    assert find_commit_turn(store, trailers(session, turn=1), SHA_C, "Something else") is None
    assert find_commit_turn(store, trailers(session, turn=2), SHA_C, "Add b") is None
    assert find_commit_turn(store, trailers(session, turn=1), SHA_C) is None


def test_an_unknown_session_raises(store: InMemorySessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        find_commit_turn(store, trailers("99"), SHA_A)
