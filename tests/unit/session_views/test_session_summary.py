"""`status SESSION` from recorded runs: node timeline (attempts, time, tokens, agent turns), failures, parallel
branches (finished, nested, still running), replays, resumed runs, repos and the JSON shape DESIGN.md pins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.ports.session_store import SessionMetadata, SessionStatus, SessionStore
from orchestra_core.session import api
from orchestra_core.session.summary import session_summary
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import graph, linear
from tests.support.sessions import RecordedRun, records, turns

DESIGN_SESSION_KEYS = {"session_id", "pipeline", "status", "nodes", "turns"}
DESIGN_NODE_KEYS = {"id", "status", "attempts", "duration_s"}
DESIGN_TURN_KEYS = {
    "turn_id", "type", "node_id", "turn_number", "git_sha", "commit_message", "files_written", "model", "provider",
}
RETRIED = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt=x, max_retries=3, retry_initial_delay="50ms"]
    start -> a -> done
}
"""
FAILING = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt=x]
    start -> a
    a -> done [condition="outcome=success"]
}
"""
FAN = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; l [prompt=l]; r [prompt=r]; merge [shape=tripleoctagon]
    start -> fan
    fan -> l
    fan -> r
    l -> merge
    r -> merge
    merge -> done
}
"""
NESTED = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    outer [shape=component]; a [prompt=a]; inner [shape=component]; x [prompt=x]; y [prompt=y]
    join_in [shape=tripleoctagon]; join_out [shape=tripleoctagon]
    start -> outer
    outer -> a
    outer -> inner
    inner -> x
    inner -> y
    x -> join_in
    y -> join_in
    join_in -> join_out
    a -> join_out
    join_out -> done
}
"""
SHA = "0123456789abcdef0123456789abcdef01234567"


class TurningBackend:
    """A backend whose nodes take the scripted agent turns (reported through `on_turn`), then succeed."""

    def __init__(self, turns_by_node: dict[str, Sequence[AgentTurn]]) -> None:
        self._turns = turns_by_node

    def run(self, node: Node, prompt: str, context: Any, on_turn: Any = None) -> str:
        for turn in self._turns.get(node.id, ()):
            on_turn(turn)
        return f"done {node.id}"


def agent_turn(node: str, number: int, tokens: tuple[int, int], *, commit: str | None = None) -> AgentTurn:
    return AgentTurn(
        node_id=node,
        turn_number=number,
        model="m-1",
        provider="scripted",
        messages=({"role": "user", "content": "a long transcript " * 200},),
        tool_calls=(ToolCall("project:write-file", {"path": "a.py", "content": "x"}),),
        files_written=("project:a.py",),
        token_usage=TokenUsage(*tokens),
        duration_s=0.25,
        commits=(TurnCommit("project", commit, "Add a.py\n\nBody.", "orchestra/p/1"),) if commit else (),
    )


def test_each_node_run_has_its_attempts_time_tokens_and_agent_turns(store: SessionStore) -> None:
    backend = TurningBackend({"a": [agent_turn("a", 0, (100, 10), commit=SHA), agent_turn("a", 1, (50, 5))]})
    run = RecordedRun(store, backend=backend)
    assert run.run(linear("a", "b")).succeeded
    summary = session_summary(store, run.session_id)
    assert [(n.node_id, n.status, n.attempts) for n in summary.nodes] == [
        ("start", "success", 1), ("a", "success", 1), ("b", "success", 1), ("done", "success", 1),
    ]
    a = summary.nodes[1]
    assert (a.agent_turns, a.tokens, a.handler_type, a.branch) == (2, TokenUsage(150, 15), "codergen", None)
    assert a.duration_s is not None and a.ended_at is not None
    assert summary.tokens == TokenUsage(150, 15)
    first, second = summary.agent_turns
    assert isinstance(first.record, AgentTurn) and first.record.messages == ()  # transcript not read
    assert first.to_json() | {"created_at": None} == {
        "turn_id": first.turn_id, "type": "dev.orchestra.AgentTurn", "node_id": "a", "turn_number": 0,
        "git_sha": SHA, "commit_message": "Add a.py\n\nBody.", "files_written": ["project:a.py"], "model": "m-1",
        "provider": "scripted", "session_id": run.session_id, "branch": None, "created_at": None,
        "requested_model": None, "fallback_reason": None, "tools": ["project:write-file"],
        "tokens": {
            "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110, "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
        "cost_usd": None,  # m-1 has no price: unknown, never zero
        "duration_s": 0.25,
        "commits": [{"repo": "project", "sha": SHA, "message": "Add a.py\n\nBody.", "branch": "orchestra/p/1"}],
    }
    assert second.to_json()["git_sha"] is None


def test_the_json_document_has_design_md_keys_and_every_turn(store: SessionStore) -> None:
    run = RecordedRun(store, backend=TurningBackend({"a": [agent_turn("a", 0, (1, 1))]}))
    run.run(linear("a"))
    document = session_summary(store, run.session_id).to_json()
    assert document.keys() >= DESIGN_SESSION_KEYS
    assert all(node.keys() >= DESIGN_NODE_KEYS for node in document["nodes"])
    assert all(turn.keys() >= DESIGN_TURN_KEYS for turn in document["turns"])
    assert [t["turn_id"] for t in document["turns"]] == [t.turn_id for t in turns(store, run.session_id)]
    checkpoints = [t for t in document["turns"] if t["type"] == "dev.orchestra.Checkpoint"]
    assert [t["node_id"] for t in checkpoints] == [None, "start", "a", "done"]
    assert [c["turn_id"] for c in document["checkpoints"]] == [t["turn_id"] for t in checkpoints]
    assert document["status"] == "success" and document["ended_at"] is not None and document["error"] is None


def test_retries_are_attempts_of_one_run_timed_from_its_start(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"a": ["retry", "fail", "success"]}))
    assert run.run(graph(RETRIED)).succeeded
    summary = session_summary(store, run.session_id)
    (a,) = [n for n in summary.nodes if n.node_id == "a"]
    assert (a.status, a.attempts, a.retries) == ("success", 3, 2)
    finished = [x for x in records(store, run.session_id) if isinstance(x, r.NodeExecution) and x.node_id == "a"]
    assert a.duration_s == finished[-1].duration_s
    measured = [x.duration_s for x in finished if x.duration_s is not None]
    assert len(measured) == 3 and measured == sorted(measured)  # each attempt's record times from the start
    assert a.duration_s is not None and a.duration_s > 0  # the backoff sleeps are part of it


def test_a_failed_session_says_why(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"a": ["fail"]}))
    assert not run.run(graph(FAILING)).succeeded
    summary = session_summary(store, run.session_id)
    assert summary.info.status is SessionStatus.FAIL
    assert summary.error is not None and "scripted fail for a" in summary.error
    (a,) = [n for n in summary.nodes if n.node_id == "a"]
    assert (a.status, a.failure_reason) == ("fail", "scripted fail for a")
    assert summary.to_json()["error"] == summary.error


def test_parallel_branches_are_part_of_the_summary_without_their_shared_history(store: SessionStore) -> None:
    backend = TurningBackend({"l": [agent_turn("l", 0, (7, 3))]})
    run = RecordedRun(store, backend=backend)
    assert run.run(graph(FAN)).succeeded
    summary = session_summary(store, run.session_id)
    branches = {b.branch: b.session_id for b in summary.branches}
    assert set(branches) == {"fan:l", "fan:r"} and run.session_id not in branches.values()
    by_node = {n.node_id: n for n in summary.nodes}
    assert (by_node["l"].branch, by_node["l"].session_id, by_node["l"].agent_turns) == ("fan:l", branches["fan:l"], 1)
    assert (by_node["r"].branch, by_node["fan"].branch) == ("fan:r", None)
    ids = [t.turn_id for t in summary.turns]
    everything = {t.turn_id for sid in [run.session_id, *branches.values()] for t in turns(store, sid)}
    assert len(ids) == len(set(ids)) and set(ids) == everything
    own = {t.turn_id for t in summary.turns if t.session_id == branches["fan:l"]}
    assert own == {t.turn_id for t in turns(store, branches["fan:l"])} - {t.turn_id for t in turns(store, run.session_id)}
    assert summary.tokens == TokenUsage(7, 3)
    assert ids == sorted(ids, key=int)


def test_nested_branches_are_found_through_their_parent_branch(store: SessionStore) -> None:
    run = RecordedRun(store)
    assert run.run(graph(NESTED)).succeeded
    summary = session_summary(store, run.session_id)
    labels = {n.node_id: n.branch for n in summary.nodes}
    assert labels["a"] == "outer:a" and labels["x"] == "outer:inner/inner:x" and labels["y"] == "outer:inner/inner:y"
    assert all(n.status == "success" for n in summary.nodes)


def _main_with_open_fan_out(store: SessionStore) -> tuple[str, str]:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    api.append_record(store, main, r.NodeExecution("fan", r.NodeEvent.STARTED, "parallel"))
    fan_out = api.append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=1))
    branch = api.fork_session(store, main, fan_out.turn_id, spawn_reason="parallel", title="branch fan:a")
    return main, branch.session_id


def test_branches_of_a_fan_out_still_running_are_found_in_the_session_list(store: SessionStore) -> None:
    main, branch = _main_with_open_fan_out(store)
    api.append_record(store, branch, r.ParallelExecution("fan", r.ParallelEvent.BRANCH_STARTED, branch_id="a"))
    api.append_record(store, branch, r.NodeExecution("a", r.NodeEvent.STARTED, "codergen"))
    other, _ = _main_with_open_fan_out(store)  # another run's branch is not this one's
    summary = session_summary(store, main)
    assert [b.session_id for b in summary.branches] == [branch]
    assert [(n.node_id, n.status, n.branch, n.duration_s) for n in summary.nodes] == [
        ("fan", "running", None, None), ("a", "running", "fan:a", None),
    ]
    assert other not in {t.session_id for t in summary.turns}


def test_a_trace_returns_what_is_new_and_follows_branches_forked_later(store: SessionStore) -> None:
    from orchestra_core.session.trace import SessionTrace

    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    trace = SessionTrace(store, main)
    assert [v.type_id for v in trace.read()] == ["dev.orchestra.PipelineLifecycle"]
    assert trace.read() == [] and not trace.ended
    api.append_record(store, main, r.NodeExecution("fan", r.NodeEvent.STARTED, "parallel"))
    fan_out = api.append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=1))
    assert len(trace.read()) == 2
    branch = api.fork_session(store, main, fan_out.turn_id, spawn_reason="parallel", title="branch fan:a").session_id
    api.append_record(store, branch, r.NodeExecution("a", r.NodeEvent.STARTED, "codergen"))
    assert [(v.session_id, v.branch, v.node_id) for v in trace.read()] == [(branch, "fan:a", "a")]
    api.append_record(store, branch, r.NodeExecution("a", r.NodeEvent.COMPLETED, "codergen", outcome=Outcome.success()))
    assert [v.node_id for v in trace.read()] == ["a"]
    api.append_record(store, main, r.ParallelExecution("fan", r.ParallelEvent.FAN_IN, branch_session_ids=(branch,)))
    api.append_record(store, main, r.PipelineLifecycle(r.LifecycleEvent.COMPLETED, "p"))
    assert len(trace.read()) == 2 and trace.ended and trace.last_event is r.LifecycleEvent.COMPLETED
    assert [line.session_id for line in trace.lines] == [main, branch]


def test_a_replay_shows_where_it_was_forked_and_shares_the_history_before(store: SessionStore) -> None:
    run = RecordedRun(store)
    run.run(linear("a", "b"))
    checkpoint = _checkpoint_after(store, run.session_id, "a")
    replay = api.fork_session(store, run.session_id, checkpoint.turn_id).session_id
    api.append_record(store, replay, r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"))
    summary = session_summary(store, replay)
    assert summary.fork_turn_id == checkpoint.turn_id
    assert summary.info.metadata.parent_session_id == run.session_id
    assert [t.turn_id for t in summary.turns] == [t.turn_id for t in turns(store, replay)]
    assert summary.to_json()["forked_at_turn"] == checkpoint.turn_id
    assert session_summary(store, run.session_id).fork_turn_id is None


def _checkpoint_after(store: SessionStore, session: str, node: str) -> Any:
    from orchestra_core.session.codec import decode_record

    return next(
        t for t in turns(store, session)
        if isinstance(record := decode_record(t), r.CheckpointRecord) and record.current_node == node
    )


def test_a_node_left_running_by_a_dead_process_is_interrupted_once_the_run_resumed(store: SessionStore) -> None:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    for record in (
        r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"),
        r.NodeExecution("a", r.NodeEvent.STARTED, "tool"),
        r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"),
        r.NodeExecution("a", r.NodeEvent.STARTED, "tool"),
        r.NodeExecution("a", r.NodeEvent.COMPLETED, "tool", outcome=Outcome.success(), duration_s=1.5),
        r.NodeExecution("b", r.NodeEvent.STARTED, "tool"),
        r.PipelineLifecycle(r.LifecycleEvent.INTERRUPTED, "p", error="interrupted"),
    ):
        api.append_record(store, main, record)
    summary = session_summary(store, main)
    assert [(n.node_id, n.status, n.duration_s) for n in summary.nodes] == [
        ("a", "interrupted", None), ("a", "success", 1.5), ("b", "interrupted", None),
    ]
    assert summary.info.status is SessionStatus.INTERRUPTED
    assert summary.error == (  # what resume does with it, as every command says it (no checkpoint, no pipeline here)
        f"interrupted; `orchestra resume {main} --pipeline FILE` starts it again from the beginning (it stopped "
        "before its first checkpoint, and before it recorded its pipeline)"
    )


def test_repos_follow_the_session_branch_its_commits_and_checkpoints(store: SessionStore) -> None:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    base, first, second = "a" * 40, "b" * 40, "c" * 40
    snapshot = r.WorkspaceSnapshot((r.RepoSnapshot("api", second, "orchestra/p/1", base),), node_id="x")
    for record in (
        w.SessionBranchCreated(repo="api", branch="orchestra/p/1", base_sha=base, base_ref="HEAD"),
        w.SessionBranchCreated(repo="web", branch="orchestra/p/1", base_sha=base, base_ref="main"),
        w.AgentCommitCreated(
            repo="api", sha=first, branch="orchestra/p/1", node_id="x", turn_number=0, message="Change api",
            files=("a.py",),
        ),
        w.RemotePushed(repo="api", branch="orchestra/p/1", sha=first, remote_url="file:///srv/api.git"),
        r.CheckpointRecord("x", workspace_snapshot=snapshot),
    ):
        api.append_record(store, main, record)
    document = session_summary(store, main).to_json()
    assert document["repos"] == {
        "api": {"branch": "orchestra/p/1", "base_sha": base, "head_sha": second, "pushed_sha": first},
        "web": {"branch": "orchestra/p/1", "base_sha": base, "head_sha": base, "pushed_sha": None},
    }
    commit = next(t for t in document["turns"] if t["type"] == "dev.orchestra.AgentCommitCreated")
    assert (commit["git_sha"], commit["files_written"], commit["node_id"]) == (first, ["api:a.py"], "x")


def test_a_summary_for_the_text_view_reads_only_the_last_agent_turns_in_full(store: SessionStore) -> None:
    backend = TurningBackend({
        "l": [agent_turn("l", n, (7, 3), commit=SHA) for n in range(2)],
        "r": [agent_turn("r", n, (5, 1)) for n in range(3)],
    })
    run = RecordedRun(store, backend=backend)
    assert run.run(graph(FAN)).succeeded
    full = session_summary(store, run.session_id)
    brief = session_summary(store, run.session_id, full_agent_turns=2)

    assert (brief.nodes, brief.tokens, brief.repos, brief.checkpoints) == (
        full.nodes, full.tokens, full.repos, full.checkpoints
    )
    assert [t.turn_id for t in brief.turns] == [t.turn_id for t in full.turns]
    assert brief.agent_turns[-2:] == full.agent_turns[-2:]  # tool calls, files and commits, from branch sessions
    assert {t.branch for t in brief.agent_turns[-2:]} <= {"fan:l", "fan:r"}
    left_out = brief.agent_turns[:-2]
    assert len(left_out) == 3
    assert all(isinstance(t.record, AgentTurn) and t.record.tool_calls == () for t in left_out)
    assert [t.record.token_usage for t in left_out] == [t.record.token_usage for t in full.agent_turns[:-2]]  # type: ignore[union-attr]
    assert session_summary(store, run.session_id, full_agent_turns=0).agent_turns[-1].record.tool_calls == ()  # type: ignore[union-attr]
