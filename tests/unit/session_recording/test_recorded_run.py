"""A run recorded into a session: lifecycle, node and checkpoint turns in order, retries, failures, human
gates, agent turns, the workspace and the pipeline source, and every checkpoint read back exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra_core.interview import QueueInterviewer
from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.graph import Node
from orchestra_core.model.interview import Answer, Option
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.ports.session_store import SessionStatus, SessionStore
from orchestra_core.session.checkpoints import PipelineSource, RepoHead
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import comparable, graph, linear
from tests.support.sessions import RecordedRun, records, stored_checkpoints, story

RETRIED = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt=x, max_retries=3]
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
GATE = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    review [shape=hexagon, label="Ship it?"]
    ship [prompt=s]; fix [prompt=f]
    start -> review
    review -> ship [label="[A] Approve"]
    review -> fix [label="[R] Revise"]
    ship -> done
    fix -> done
}
"""


def _node_story(*node_ids: str) -> list[str]:
    lines = []
    for node in node_ids:
        lines += [f"node {node} started", f"node {node} completed", f"checkpoint {node}"]
    return lines


def test_a_run_is_told_turn_by_turn_in_order(store: SessionStore) -> None:
    run = RecordedRun(store)
    result = run.run(linear("a", "b"))
    assert result.succeeded
    assert story(store, run.session_id) == [
        "lifecycle started",
        "checkpoint -",
        *_node_story("start", "a", "b", "done"),
        "lifecycle completed",
    ]
    info = store.get_session(run.session_id)
    assert info.status is SessionStatus.SUCCESS and info.metadata.pipeline == "p"
    started, *_, completed = records(store, run.session_id)
    assert (
        isinstance(started, r.PipelineLifecycle)
        and started.goal == "test"
        and started.logs_root == "/runs/test"
    )
    assert isinstance(completed, r.PipelineLifecycle) and completed.status is StageStatus.SUCCESS


def test_every_checkpoint_reads_back_as_the_engines(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"a": ["retry", "success"]}))
    result = run.run(graph(RETRIED), initial_context={"ticket": "T-1", "n": 3, "flags": [True, None, 1.5]})
    assert result.succeeded
    engine_checkpoints = run.harness.checkpoints()
    read_back = stored_checkpoints(store, run.session_id)
    assert [comparable(c) for c in read_back] == [comparable(c) for c in engine_checkpoints]
    assert [c.logs for c in read_back] == [c.logs for c in engine_checkpoints]
    assert read_back[-1].node_retries == {"a": 1}


def test_retries_are_recorded_attempt_by_attempt(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"a": ["retry", "fail", "success"]}))
    assert run.run(graph(RETRIED)).succeeded
    nodes = [x for x in records(store, run.session_id) if isinstance(x, r.NodeExecution) and x.node_id == "a"]
    assert [(x.event, x.attempt) for x in nodes] == [
        (r.NodeEvent.STARTED, 1),
        (r.NodeEvent.FAILED, 1),
        (r.NodeEvent.RETRYING, 2),
        (r.NodeEvent.FAILED, 2),
        (r.NodeEvent.RETRYING, 3),
        (r.NodeEvent.COMPLETED, 3),
    ]
    assert nodes[1].outcome is not None and nodes[1].outcome.status is StageStatus.RETRY
    assert nodes[-1].outcome is not None and nodes[-1].outcome.status is StageStatus.SUCCESS


def test_a_failed_run_ends_failed_with_its_reason(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"a": ["fail"]}))
    result = run.run(graph(FAILING))
    assert not result.succeeded
    assert story(store, run.session_id)[-4:] == [
        "node a started",
        "node a failed",
        "checkpoint a",
        "lifecycle failed",
    ]
    *_, checkpoint, failed = records(store, run.session_id)
    assert isinstance(failed, r.PipelineLifecycle) and failed.status is StageStatus.FAIL
    assert failed.error == result.failure_reason and "scripted fail for a" in failed.error
    assert (
        isinstance(checkpoint, r.CheckpointRecord)
        and checkpoint.run_status == "fail"
        and checkpoint.next_node is None
    )
    assert store.get_session(run.session_id).status is SessionStatus.FAIL


def test_human_gates_are_recorded_with_question_options_and_answer(store: SessionStore) -> None:
    interviewer = QueueInterviewer([Answer.choose(Option("R", "[R] Revise")), Answer.timeout()])
    run = RecordedRun(store, interviewer=interviewer)
    assert "fix" in run.run(graph(GATE)).completed_nodes
    gates = [x for x in records(store, run.session_id) if isinstance(x, r.HumanInteraction)]
    assert gates == [
        r.HumanInteraction(
            "review",
            r.InteractionMode.GATE,
            "Ship it?",
            ("[A] Approve", "[R] Revise"),
            answer="[R] Revise",
            selected_option="[R] Revise",
        )
    ]
    assert (
        story(store, run.session_id).index("human review")
        == story(store, run.session_id).index("node review completed") - 1
    )

    timed_out = RecordedRun(store, interviewer=interviewer)
    timed_out.run(graph(GATE))
    gate = next(x for x in records(store, timed_out.session_id) if isinstance(x, r.HumanInteraction))
    assert gate.answer == "timeout" and gate.selected_option is None


class _TurnTakingBackend:
    """A codergen backend whose agent takes two turns per stage, each committing one file."""

    def run(
        self, node: Node, prompt: str, context: Any, on_turn: Callable[[AgentTurn], None] | None = None
    ) -> str:
        assert on_turn is not None
        for number in (1, 2):
            on_turn(
                AgentTurn(
                    node.id,
                    number,
                    "model-x",
                    "scripted",
                    messages=({"role": "assistant", "content": f"turn {number}"},),
                    tool_calls=(ToolCall("project:write_file", {"path": f"{node.id}.py"}, "c1", "ok"),),
                    files_written=(f"project:{node.id}.py",),
                    token_usage=TokenUsage(100, 10 * number),
                    duration_s=0.5,
                    commits=(
                        TurnCommit(
                            "project", f"{node.id}{number}".ljust(40, "0"), f"{node.id} {number}", "b"
                        ),
                    ),
                )
            )
        return "done"


def test_agent_turns_land_between_their_nodes_start_and_end_with_totals(store: SessionStore) -> None:
    run = RecordedRun(store, backend=_TurnTakingBackend())
    assert run.run(linear("a")).succeeded
    assert story(store, run.session_id)[5:9] == [
        "node a started",
        "agent a 1",
        "agent a 2",
        "node a completed",
    ]
    turns = [x for x in records(store, run.session_id) if isinstance(x, AgentTurn)]
    assert [(t.turn_number, t.git_sha, t.commit_message) for t in turns] == [
        (1, "a1".ljust(40, "0"), "a 1"),
        (2, "a2".ljust(40, "0"), "a 2"),
    ]
    assert turns[0].tool_calls[0].args == {"path": "a.py"}
    completed = next(
        x
        for x in records(store, run.session_id)
        if isinstance(x, r.NodeExecution) and x.node_id == "a" and x.event is r.NodeEvent.COMPLETED
    )
    assert completed.agent_turn_count == 2 and completed.total_token_usage == TokenUsage(200, 30)
    start = next(
        x
        for x in records(store, run.session_id)
        if isinstance(x, r.NodeExecution) and x.node_id == "start" and x.event is r.NodeEvent.COMPLETED
    )
    assert start.agent_turn_count is None and start.total_token_usage is None


def test_checkpoints_carry_the_workspace_heads_and_the_pipeline_source(store: SessionStore) -> None:
    text = "digraph p { start -> a -> b -> done }"
    blob = store.put_blob(text.encode())
    heads = iter(f"{n:040x}" for n in range(1, 100))
    shas: list[str] = []

    def snapshot() -> dict[str, str]:
        shas.append(next(heads))
        return {"project": shas[-1]}

    def repo_heads() -> dict[str, RepoHead]:
        return {
            "project": RepoHead("orchestra/p/1", "stale", "b" * 40),
            "docs": RepoHead("orchestra/p/1", "d" * 40),
        }

    run = RecordedRun(store, source=PipelineSource("pipelines/p.dot", blob), repo_heads=repo_heads)
    run.harness.engine.workspace_snapshot = snapshot
    run.run(linear("a", "b"))
    stored = [x for x in records(store, run.session_id) if isinstance(x, r.CheckpointRecord)]
    assert len(stored) == len(shas) == 5
    for record, sha in zip(stored, shas, strict=True):
        assert record.pipeline_path == "pipelines/p.dot" and record.pipeline_blob == blob
        assert record.workspace_snapshot is not None
        assert record.workspace_snapshot.repo_snapshots == (
            r.RepoSnapshot("docs", "d" * 40, "orchestra/p/1", None),
            r.RepoSnapshot("project", sha, "orchestra/p/1", "b" * 40),
        )
    assert [c.workspace_snapshot for c in stored_checkpoints(store, run.session_id)] == [
        {"project": sha, "docs": "d" * 40} for sha in shas
    ]
    started = records(store, run.session_id)[0]
    assert isinstance(started, r.PipelineLifecycle)
    assert (started.dot_path, started.dot_blob) == ("pipelines/p.dot", blob)
    assert store.get_blob(blob) == text.encode()


def test_workspace_events_are_recorded_on_the_main_line(store: SessionStore, tmp_path: Any) -> None:
    run = RecordedRun(store)
    branch = w.SessionBranchCreated(
        session_id=run.session_id,
        repo="project",
        branch="orchestra/p/1",
        base_ref="main",
        base_sha="a" * 40,
        worktree_path=str(tmp_path / "wt"),
        isolation="worktree",
        requested_branch="orchestra/p/1",
    )
    in_place = w.SessionBranchCreated(
        session_id=run.session_id,
        repo="docs",
        branch="orchestra/p/1",
        base_ref="main",
        base_sha="b" * 40,
        worktree_path=str(tmp_path),
        isolation="in_place",
        requested_branch="orchestra/p/1",
    )
    commit = w.AgentCommitCreated(
        session_id=run.session_id,
        repo="project",
        branch="orchestra/p/1",
        sha="c" * 40,
        node_id="a",
        turn_number=1,
        files=("a.py",),
        message="Add a",
    )
    restored = w.WorkspaceRestored(
        session_id=run.session_id, repo="project", branch="orchestra/p/1", sha="c" * 40, reason="resume"
    )
    worktree = w.WorktreeCreated(
        session_id=run.session_id, repo="project", path=str(tmp_path / "wt"), branch="orchestra/p/1", base_sha="a" * 40
    )
    for event in (branch, worktree, in_place, commit, restored):
        run.recorder.on_workspace_event(event)
    assert records(store, run.session_id) == [
        w.SessionBranchCreated(repo="project", branch="orchestra/p/1", base_sha="a" * 40, base_ref="main"),
        w.WorktreeCreated(repo="project", path=str(tmp_path / "wt"), branch="orchestra/p/1", base_sha="a" * 40),
        w.SessionBranchCreated(repo="docs", branch="orchestra/p/1", base_sha="b" * 40, base_ref="main"),
        w.AgentCommitCreated(
            repo="project", sha="c" * 40, branch="orchestra/p/1", node_id="a", turn_number=1, message="Add a",
            files=("a.py",),
        ),
    ]
