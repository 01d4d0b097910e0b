"""Parallel fan-out (4.8) and fan-in (4.9)."""

from __future__ import annotations

import threading
from typing import Any

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.handlers.parallel import ParallelHandler
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.events import (
    ParallelBranchCompleted,
    ParallelBranchStarted,
    ParallelCompleted,
    ParallelStarted,
    StageCompleted,
)
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph

FAN = graph(
    """
    digraph p {
        graph [goal="compare approaches"]
        start [shape=Mdiamond]; done [shape=Msquare]
        fan [shape=component]
        a1; a2; b1; c1
        merge [shape=tripleoctagon]
        after
        start -> fan
        fan -> a1
        fan -> b1
        fan -> c1
        a1 -> a2 -> merge
        b1 -> merge
        c1 -> merge
        merge -> after -> done
    }
    """
)


def updates(**values: Any) -> Outcome:
    return Outcome(StageStatus.SUCCESS, context_updates=values)


def test_fan_out_runs_every_branch_then_continues_at_the_fan_in() -> None:
    backend = ScriptedCodergenBackend({"a2": updates(score=0.5, design="A"), "b1": updates(score=0.9, design="B"), "c1": "fail"})
    harness = Harness(backend=backend)
    result = harness.run(FAN)
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("start", "a1", "a2", "b1", "c1", "fan", "merge", "after", "done")
    assert result.node_outcomes["fan"].status is StageStatus.PARTIAL_SUCCESS  # wait_all with a failure
    records = {r["id"]: r for r in result.context["parallel.results"]}
    assert [r["id"] for r in result.context["parallel.results"]] == ["a1", "b1", "c1"]
    assert records["a1"]["completed_nodes"] == ["a1", "a2"]
    assert records["a1"]["status"] == "success" and records["c1"]["status"] == "fail"
    assert records["b1"]["score"] == 0.9
    assert records["c1"]["failure_reason"] == "scripted fail for c1"
    assert result.context["parallel.fan_in.best_id"] == "b1"
    assert result.context["design"] == "B"  # the winner's context changes are merged
    assert "score" in result.context


def test_each_branch_status_and_the_failure_count_are_in_the_context_by_branch_id() -> None:
    backend = ScriptedCodergenBackend({"a2": "fail", "c1": Outcome(StageStatus.PARTIAL_SUCCESS)})
    result = Harness(backend=backend).run(FAN)
    assert result.status is RunStatus.SUCCESS
    statuses = {key: value for key, value in result.context.items() if key.startswith("parallel.branch.")}
    assert statuses == {
        "parallel.branch.a1.status": "fail",
        "parallel.branch.b1.status": "success",
        "parallel.branch.c1.status": "partial_success",
    }
    assert (result.context["parallel.fail_count"], result.context["parallel.failure_count"]) == (1, 1)
    assert result.context["parallel.success_count"] == 2


def test_branches_run_on_isolated_context_clones() -> None:
    backend = ScriptedCodergenBackend({"a1": updates(secret="a-only")})
    result = Harness(backend=backend).run(FAN)
    records = {r["id"]: r for r in result.context["parallel.results"]}
    assert records["a1"]["context_updates"]["secret"] == "a-only"
    assert "secret" not in records["b1"]["context_updates"]


def test_parallel_events_carry_branch_ids() -> None:
    harness = Harness()
    harness.run(FAN)
    started = harness.log.of(ParallelStarted)[0]
    assert (started.node_id, started.branch_count, started.branch_ids, started.join_node) == ("fan", 3, ("a1", "b1", "c1"), "merge")
    assert sorted(e.branch_id for e in harness.log.of(ParallelBranchStarted)) == ["a1", "b1", "c1"]
    assert all(e.branch is None for e in harness.log.of(ParallelBranchCompleted))
    stage_branches = {e.node_id: e.branch for e in harness.log.of(StageCompleted) if e.branch}
    assert stage_branches == {"a1": "fan:a1", "a2": "fan:a1", "b1": "fan:b1", "c1": "fan:c1"}
    completed = harness.log.of(ParallelCompleted)[0]
    assert (completed.success_count, completed.failure_count) == (3, 0)


class Rendezvous:
    """Every branch waits until `parties` branches are inside at once (proves they run concurrently)."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=5)
        self.peak = 0
        self.inside = 0
        self.lock = threading.Lock()

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        with self.lock:
            self.inside += 1
            self.peak = max(self.peak, self.inside)
        try:
            self.barrier.wait()
        finally:
            with self.lock:
                self.inside -= 1
        return Outcome.success()


def wide(max_parallel: int | None, count: int = 4, policy: str = "wait_all") -> Graph:
    limit = f", max_parallel={max_parallel}" if max_parallel else ""
    branches = "\n".join(f"fan -> w{i}\n w{i} [type=\"meet\"]\n w{i} -> merge" for i in range(count))
    return graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component, join_policy="{policy}"{limit}]
            merge [shape=tripleoctagon]
            start -> fan
            {branches}
            merge -> done
        }}
        """
    )


def test_branches_run_concurrently_up_to_max_parallel() -> None:
    meet = Rendezvous(4)
    assert Harness(handlers={"meet": meet}).run(wide(None)).status is RunStatus.SUCCESS
    assert meet.peak == 4
    pairs = Rendezvous(2)
    assert Harness(handlers={"meet": pairs}).run(wide(2)).status is RunStatus.SUCCESS
    assert pairs.peak == 2


class FirstWins:
    """w0 succeeds at once; the others fail, but only once the fan-out has given up on them (first_success sets
    its cancel event when w0's branch is in): waiting for w0 alone raced the fan-out, so a loaded machine saw
    them fail before they were cancelled."""

    def __init__(self) -> None:
        self.fan_cancel: threading.Event | None = None

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        if node.id == "w0":
            return Outcome.success()
        assert self.fan_cancel is not None
        self.fan_cancel.wait(5)
        return Outcome.fail("too slow")


class FanOutSeenBy:
    """The parallel handler, handing the fan-out's cancel event to `meet` first."""

    def __init__(self, meet: FirstWins) -> None:
        self.meet = meet
        self.inner = ParallelHandler()

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        self.meet.fan_cancel = stage.cancel
        return self.inner.execute(node, context, graph, stage)


def test_first_success_joins_on_one_success_and_cancels_waiting_branches() -> None:
    meet = FirstWins()
    result = Harness(handlers={"meet": meet, "parallel": FanOutSeenBy(meet)}).run(
        wide(1, count=3, policy="first_success")
    )
    assert result.status is RunStatus.SUCCESS
    assert result.node_outcomes["fan"].status is StageStatus.SUCCESS
    statuses = [r["status"] for r in result.context["parallel.results"]]
    assert statuses == ["success", "skipped", "skipped"]


def test_first_success_fails_when_no_branch_succeeds() -> None:
    backend = ScriptedCodergenBackend({f"w{i}": "fail" for i in range(3)})
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component, join_policy="first_success"]
            merge [shape=tripleoctagon]; cleanup
            start -> fan
            fan -> w0
            fan -> w1
            w0 -> merge
            w1 -> merge
            fan -> cleanup [condition="outcome=fail"]
            merge -> done
            cleanup -> done
        }
        """
    )
    result = Harness(backend=backend).run(pipeline)
    assert result.node_outcomes["fan"].status is StageStatus.FAIL
    assert "cleanup" in result.completed_nodes and "merge" not in result.completed_nodes


def test_unknown_join_policy_fails_clearly() -> None:
    result = Harness(handlers={"meet": FirstWins()}).run(wide(None, count=1, policy="most"))
    assert "join_policy='most' is not a join policy Orchestra knows" in result.node_outcomes["fan"].failure_reason


def test_a_node_two_branches_reach_gets_a_stage_directory_per_branch() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b; shared; merge [shape=tripleoctagon]
            start -> fan
            fan -> a
            fan -> b
            a -> shared
            b -> shared
            shared -> merge -> done
        }
        """
    )
    harness = Harness()
    result = harness.run(pipeline)
    assert result.status is RunStatus.SUCCESS
    directory = harness.directory()
    assert directory.read_stage_file("shared@a", "status.json") and directory.read_stage_file("shared@b", "status.json")
    assert directory.read_stage_file("shared", "status.json") is None


def test_nested_fan_outs() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            outer [shape=component]; left; right
            inner [shape=component]; x; y; inner_merge [shape=tripleoctagon]
            merge [shape=tripleoctagon]
            start -> outer
            outer -> left
            outer -> right
            left -> inner
            inner -> x
            inner -> y
            x -> inner_merge
            y -> inner_merge
            inner_merge -> merge
            right -> merge
            merge -> done
        }
        """
    )
    harness = Harness()
    result = harness.run(pipeline)
    assert result.status is RunStatus.SUCCESS
    left = {r["id"]: r for r in result.context["parallel.results"]}["left"]
    assert left["completed_nodes"] == ["left", "x", "y", "inner", "inner_merge"]
    branches = {e.node_id: e.branch for e in harness.log.of(StageCompleted) if e.branch}
    assert branches["x"] == "outer:left/inner:x" and branches["inner"] == "outer:left"


def test_fan_in_without_results_or_with_only_failures_fails() -> None:
    lonely = graph('digraph p { start [shape=Mdiamond]; m [shape=tripleoctagon]; start -> m }')
    assert Harness().run(lonely).node_outcomes["m"].failure_reason == "No parallel results to evaluate"
    backend = ScriptedCodergenBackend({"a1": "fail", "b1": "fail", "c1": "fail"})
    result = Harness(backend=backend).run(FAN)
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["merge"].failure_reason.startswith("all 3 branches failed")


def test_fan_in_heuristic_ranks_status_then_score_then_id() -> None:
    backend = ScriptedCodergenBackend(
        {"a2": Outcome(StageStatus.PARTIAL_SUCCESS, context_updates={"score": 5}), "b1": updates(score=1), "c1": updates(score=1)}
    )
    assert Harness(backend=backend).run(FAN).context["parallel.fan_in.best_id"] == "b1"


def ranked(pipeline: Graph, answer: Any) -> dict[str, Any]:
    merge = pipeline.nodes["merge"].with_attrs(prompt="Pick the best approach for $goal")
    backend = ScriptedCodergenBackend({"merge": answer})
    harness = Harness(backend=backend)
    result = harness.run(pipeline.replace_nodes([merge]))
    ranking_prompt = next(c.prompt for c in backend.calls if c.node_id == "merge")
    return {"context": result.context, "prompt": ranking_prompt, "notes": result.node_outcomes["merge"].notes}


def test_fan_in_asks_the_llm_when_it_has_a_prompt() -> None:
    found = ranked(FAN, "text:c1 is best because it is simplest; a1 is too long")
    assert found["context"]["parallel.fan_in.best_id"] == "c1"
    assert "Pick the best approach for compare approaches" in found["prompt"]
    assert "### a1" in found["prompt"] and "### c1" in found["prompt"]
    assert "LLM ranking" in found["notes"]


def test_fan_in_falls_back_to_the_heuristic_when_the_llm_names_no_candidate() -> None:
    found = ranked(FAN, "text:they are all fine")
    assert found["context"]["parallel.fan_in.best_id"] == "a1"
    assert "heuristic" in found["notes"]
    outcome_answer = ranked(FAN, Outcome(StageStatus.SUCCESS, preferred_label="b1"))
    assert outcome_answer["context"]["parallel.fan_in.best_id"] == "b1"


def test_parallel_node_without_branches_fails() -> None:
    pipeline = graph('digraph p { start [shape=Mdiamond]; fan [shape=component]; start -> fan }')
    assert "no unconditional outgoing edges" in Harness().run(pipeline).node_outcomes["fan"].failure_reason


class Gate:
    """Blocks a branch stage until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.cancelled: list[str] = []

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        for _ in range(500):
            if self.release.is_set():
                return Outcome.success()
            if stage.cancel.wait(0.01):
                self.cancelled.append(stage.cancel.reason)
                return Outcome.fail(stage.cancel.reason)
        return Outcome.success()


def test_a_timed_out_fan_out_cancels_the_nodes_its_branches_run_and_stops_them() -> None:
    gate = Gate()
    backend = ScriptedCodergenBackend()
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component, timeout="50ms"]
            a [type="gate"]; a2; merge [shape=tripleoctagon]
            start -> fan -> a -> a2 -> merge -> done
        }
        """
    )
    result = Harness(backend=backend, handlers={"gate": gate}).run(pipeline)
    assert result.node_outcomes["fan"].failure_reason == "timed out after 50ms; the attempt was cancelled"
    assert gate.cancelled == ["node fan timed out after 50ms"]  # the branch's running node was cancelled
    assert not [t for t in threading.enumerate() if t.name == "orchestra-stage-fan"]  # over before the run ended
    assert backend.visits("a2") == 0
