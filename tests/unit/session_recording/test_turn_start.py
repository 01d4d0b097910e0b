"""Where `resume --turn` / `replay --turn` start, read from a recorded session: the enclosing checkpoint, each
repo's commit at the turn (several repos, read-only turns), the resume point, and ids that are refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from orchestra_core.model import records as r
from orchestra_core.model.agent_resume import RESUME_AGENT_STATE, RESUME_NODE, RESUME_TURN_NUMBER
from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.model.turn import AgentTurn, TurnCommit
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.runs.start import REPLAY, RESUME
from orchestra_core.runs.turn_start import TurnChoiceError, start_replay_at_turn, start_resume_at_turn
from orchestra_core.session.api import append_record
from orchestra_core.session.checkpoints import PipelineSource, RepoHead, to_record
from orchestra_core.testing.session_store import InMemorySessionStore

HEADS = {"api": RepoHead("orchestra/p/1", "api0", "api0"), "web": RepoHead("orchestra/p/1", "web0", "web0")}


def turn(number: int, *commits: tuple[str, str], node: str = "work") -> AgentTurn:
    return AgentTurn(
        node, number, "m", "p", agent_state_ref=f"langgraph:t:c{number}",
        commits=tuple(TurnCommit(repo, sha, "msg", "orchestra/p/1") for repo, sha in commits),
    )


@pytest.fixture
def session() -> tuple[InMemorySessionStore, dict[str, str]]:
    """start -> work (turns 0..3: api, web, read-only, api) as one session; returns the store and turn ids."""
    store = InMemorySessionStore()
    sid = store.create_session(SessionMetadata(pipeline="p")).session_id
    blob = store.put_blob(b"digraph p { start [shape=Mdiamond]; work; exit [shape=Msquare]; start -> work -> exit }")
    source = PipelineSource("p.dot", blob)
    now = datetime.now(UTC)
    ids = {}
    ids["checkpoint"] = append_record(
        store, sid, to_record(Checkpoint("start", ("start",), {}, {}, {"k": "v"}, now, next_node="work"),
                              repos=HEADS, source=source),
    ).turn_id
    append_record(store, sid, r.NodeExecution("work", r.NodeEvent.STARTED, "codergen"))
    for number, commits in enumerate([[("api", "api1")], [("web", "web1")], [], [("api", "api2")]]):
        ids[f"t{number}"] = append_record(store, sid, turn(number, *commits)).turn_id
    ids["node"] = append_record(store, sid, r.NodeExecution("work", r.NodeEvent.STARTED, "codergen")).turn_id
    return store, ids


def test_each_repo_is_at_its_latest_commit_at_the_turn(session: tuple[InMemorySessionStore, dict[str, str]]) -> None:
    store, ids = session
    shas = lambda t: {n: h.sha for n, h in start_resume_at_turn(store, "1", ids[t], None).repo_heads.items()}  # noqa: E731
    assert shas("t0") == {"api": "api1", "web": "web0"}  # web untouched since the checkpoint
    assert shas("t1") == {"api": "api1", "web": "web1"}
    assert shas("t2") == {"api": "api1", "web": "web1"}  # read-only: the latest earlier commits
    assert shas("t3") == {"api": "api2", "web": "web1"}


def test_the_start_is_the_enclosing_checkpoint_with_the_resume_point(
    session: tuple[InMemorySessionStore, dict[str, str]],
) -> None:
    store, ids = session
    start = start_resume_at_turn(store, "1", ids["t2"], None)
    assert start.kind == RESUME and start.session_id == "1" and start.checkpoint is not None
    assert start.checkpoint.next_node == "work" and start.checkpoint.context["k"] == "v"
    assert {key: start.checkpoint.context[key] for key in (RESUME_NODE, RESUME_AGENT_STATE, RESUME_TURN_NUMBER)} == {
        RESUME_NODE: "work", RESUME_AGENT_STATE: "langgraph:t:c2", RESUME_TURN_NUMBER: 2,
    }
    replay = start_replay_at_turn(store, "1", ids["t2"], None)
    assert replay.kind == REPLAY and replay.fork_at == ids["t2"] and replay.origin == ("1", ids["t2"])
    assert replay.repo_heads["web"].sha == "web1"


def test_ids_that_are_not_agent_turns_of_the_session_are_refused(
    session: tuple[InMemorySessionStore, dict[str, str]],
) -> None:
    store, ids = session
    other = store.create_session(SessionMetadata(pipeline="p")).session_id
    foreign = append_record(store, other, turn(0)).turn_id
    for bad in ("999", "x", foreign, ids["checkpoint"], ids["node"]):
        for start in (start_resume_at_turn, start_replay_at_turn):
            with pytest.raises(TurnChoiceError, match="turn"):
                start(store, "1", bad, None)
