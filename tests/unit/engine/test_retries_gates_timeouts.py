"""Retries (11.5), goal gates (11.4), per-node timeouts, loop restarts."""

from __future__ import annotations

import threading
import time

import pytest

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.events import (
    EdgeSelected,
    GoalGateUnsatisfied,
    PipelineRestarted,
    StageCompleted,
    StageFailed,
    StageRetrying,
)
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph


def retry_graph(attrs: str) -> Graph:
    return graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            a [{attrs}]
            start -> a -> done
        }}
        """
    )


@pytest.mark.parametrize("status", ["fail", "retry"])
def test_fail_and_retry_are_retried_while_attempts_remain(status: str) -> None:
    backend = ScriptedCodergenBackend({"a": [status, status, "success"]})
    harness = Harness(backend=backend)
    result = harness.run(retry_graph('max_retries=2, retry_jitter=false'))
    assert result.status is RunStatus.SUCCESS
    assert backend.visits("a") == 3
    assert harness.clock.sleeps == [0.2, 0.4]  # standard backoff, through the clock
    retrying = harness.log.of(StageRetrying)
    assert [(e.attempt, e.delay_s) for e in retrying] == [(2, 0.2), (3, 0.4)]
    assert [e.will_retry for e in harness.log.of(StageFailed)] == [True, True]
    completed = next(e for e in harness.log.of(StageCompleted) if e.node_id == "a")
    assert completed.attempts == 3
    assert result.context["internal.retry_count.a"] == 2
    assert harness.checkpoints()[-1].node_retries == {"a": 2}


def test_retry_count_respects_the_limit_and_the_final_outcome_routes() -> None:
    backend = ScriptedCodergenBackend({"a": "fail"})
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a [max_retries=2]; recover
            start -> a -> done
            a -> recover [condition="outcome=fail"]
            recover -> done
        }
        """
    )
    result = Harness(backend=backend).run(pipeline)
    assert backend.visits("a") == 3
    assert result.completed_nodes == ("start", "a", "recover", "done")
    assert result.node_outcomes["a"].status is StageStatus.FAIL


def test_exhausted_retry_fails_or_is_accepted_as_partial() -> None:
    failed = Harness(backend=ScriptedCodergenBackend({"a": "retry"})).run(retry_graph("max_retries=1"))
    assert failed.status is RunStatus.FAIL
    assert failed.node_outcomes["a"].failure_reason.startswith("max retries exceeded (2 of 2 attempts)")
    partial = Harness(backend=ScriptedCodergenBackend({"a": "retry"})).run(retry_graph("max_retries=1, allow_partial=true"))
    assert partial.status is RunStatus.SUCCESS
    assert partial.node_outcomes["a"].status is StageStatus.PARTIAL_SUCCESS


def test_graph_default_retries_and_presets() -> None:
    backend = ScriptedCodergenBackend({"a": ["fail", "success"]})
    pipeline = graph(
        """
        digraph p {
            graph [default_max_retries=1]
            start [shape=Mdiamond]; done [shape=Msquare]
            a [retry_policy=patient, max_retries=1, retry_jitter=false]
            start -> a -> done
        }
        """
    )
    harness = Harness(backend=backend)
    assert harness.run(pipeline).status is RunStatus.SUCCESS
    assert harness.clock.sleeps == [2.0]


def test_jitter_is_applied_to_delays() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"a": ["fail"] * 3 + ["success"]}))
    harness.run(retry_graph("max_retries=3"))
    expected = [0.2, 0.4, 0.8]
    assert len(harness.clock.sleeps) == 3
    assert all(0.5 * e <= s < 1.5 * e for s, e in zip(harness.clock.sleeps, expected, strict=True))
    assert harness.clock.sleeps != expected


def test_terminal_errors_are_not_retried_transient_ones_are() -> None:
    terminal = ScriptedCodergenBackend({"a": OrchestraError("bad prompt")})
    result = Harness(backend=terminal).run(retry_graph("max_retries=3"))
    assert terminal.visits("a") == 1 and result.node_outcomes["a"].failure_reason == "bad prompt"
    transient = ScriptedCodergenBackend({"a": [ConnectionError("reset"), "success"]})
    assert Harness(backend=transient).run(retry_graph("max_retries=3")).status is RunStatus.SUCCESS


GATED = """
digraph p {{
    graph [{graph_attrs}]
    start [shape=Mdiamond]; done [shape=Msquare]
    plan; implement [goal_gate=true, {gate_attrs}]; review
    start -> plan -> implement -> review -> done
    implement -> review [condition="outcome=fail"]
}}
"""


def test_goal_gate_blocks_exit_and_reroutes_to_the_retry_target() -> None:
    backend = ScriptedCodergenBackend({"implement": ["fail", "success"]})
    harness = Harness(backend=backend)
    result = harness.run(graph(GATED.format(graph_attrs="", gate_attrs='retry_target="plan"')))
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("start", "plan", "implement", "review", "plan", "implement", "review", "done")
    unsatisfied = harness.log.of(GoalGateUnsatisfied)
    assert [(e.node_id, e.status, e.retry_target) for e in unsatisfied] == [("implement", "fail", "plan")]
    assert unsatisfied[0].reason  # the gate's failure reason, for progress output
    assert any(e.reason == "goal_gate" and e.target == "plan" for e in harness.log.of(EdgeSelected))


def test_goal_gate_uses_the_graph_retry_target() -> None:
    backend = ScriptedCodergenBackend({"implement": ["fail", "success"]})
    result = Harness(backend=backend).run(graph(GATED.format(graph_attrs='retry_target="plan"', gate_attrs="")))
    assert result.status is RunStatus.SUCCESS and result.completed_nodes.count("plan") == 2


def test_goal_gate_without_retry_target_fails_the_pipeline() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"implement": "fail"}))
    result = harness.run(graph(GATED.format(graph_attrs="", gate_attrs="")))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith("goal gate implement is unsatisfied (fail: ")
    assert result.failure_reason.endswith(") and has no retry target")
    assert "done" not in result.completed_nodes
    assert harness.checkpoints()[-1].status is RunStatus.FAIL


def test_goal_gates_allow_exit_when_satisfied() -> None:
    backend = ScriptedCodergenBackend({"implement": StageStatus.PARTIAL_SUCCESS})
    result = Harness(backend=backend).run(graph(GATED.format(graph_attrs="", gate_attrs="")))
    assert result.status is RunStatus.SUCCESS and result.completed_nodes[-1] == "done"


class Blocks:
    """Blocks until released or cancelled: a handler that overruns its timeout and stops when cancelled."""

    enforces_timeout = False

    def __init__(self) -> None:
        self.release = threading.Event()
        self.cancelled = 0

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        deadline = time.monotonic() + 5
        while not self.release.is_set() and time.monotonic() < deadline:
            if stage.cancel.wait(0.01):
                self.cancelled += 1
                return Outcome.fail("cancelled")
        return Outcome.success()


def test_a_node_over_its_timeout_fails_with_a_clear_reason() -> None:
    blocker = Blocks()
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            slow [type="blocker", timeout="50ms"]
            start -> slow -> done
        }
        """
    )
    try:
        result = Harness(handlers={"blocker": blocker}).run(pipeline)
    finally:
        blocker.release.set()
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["slow"].failure_reason == "timed out after 50ms; the attempt was cancelled"
    assert blocker.cancelled == 1


def test_timeouts_are_retried_like_failures() -> None:
    blocker = Blocks()
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            slow [type="blocker", timeout="30ms", max_retries=1]
            start -> slow -> done
        }
        """
    )
    harness = Harness(handlers={"blocker": blocker})
    try:
        harness.run(pipeline)
    finally:
        blocker.release.set()
    assert len(harness.log.of(StageRetrying)) == 1
    assert blocker.cancelled == 2  # each attempt was cancelled (and had ended) before the next one started


def test_handlers_within_their_timeout_return_normally() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a [timeout="5s"]
            start -> a -> done
        }
        """
    )
    assert Harness().run(pipeline).status is RunStatus.SUCCESS


RESTARTING = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        a; check
        start -> a -> check
        check -> a [condition="outcome=fail", loop_restart=true]
        check -> done [condition="outcome=success"]
    }
    """
)


def test_loop_restart_starts_over_with_a_fresh_context_and_logs() -> None:
    backend = ScriptedCodergenBackend(
        {"a": Outcome(StageStatus.SUCCESS, context_updates={"scratch": "x"}), "check": ["fail", "success"]}
    )
    harness = Harness(backend=backend)
    result = harness.run(RESTARTING, initial_context={"ticket": "T-1"})
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("a", "check", "done")
    assert result.context["ticket"] == "T-1" and result.context["internal.loop_restart_count"] == 1
    restarted = harness.log.of(PipelineRestarted)
    assert [(e.node_id, e.from_node, e.restart_count) for e in restarted] == [("a", "check", 1)]
    directory = harness.directory()
    assert ("check", "status.json") in directory.rounds[0] and directory.round == 1
    assert directory.stage_dir("a").endswith("restart-1/a") and ("a", "status.json") in directory.files
    fresh = next(c for c in harness.checkpoints() if c.loop_restarts == 1)
    assert directory.round_checkpoints[1][0] == fresh
    assert (fresh.current_node, fresh.next_node, fresh.completed_nodes) == ("", "a", ())
    assert "scratch" not in fresh.context


def test_loop_restarts_count_towards_max_node_visits() -> None:
    backend = ScriptedCodergenBackend({"check": "fail"})
    result = Harness(backend=backend, max_node_visits=9).run(RESTARTING)
    assert result.status is RunStatus.FAIL and "after 9 node visits" in result.failure_reason
