"""A merge conflict at fan-in is the join node's outcome: its edges route it, the conflicted merge lands only when
the run goes on from the join, and without a route (or without a join node) the run fails as before."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchPlan, JoinResult
from orchestra_core.engine.join_outcome import PENDING_JOIN_KEY
from orchestra_core.graph import Node
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.events import StageCompleted, StageFailed
from orchestra_core.model.outcome import StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph

REASON = "merge conflict at fan-in of {node}: app: o/p/1--{node}-b ({node}:b) into o/p/1 conflicts in a.py"


class ConflictingWorkspaces:
    """Branch workspaces whose joins of the fan-outs in `conflicting` conflict; every call is recorded."""

    def __init__(self, conflicting: Sequence[str] = ("fan",), land_error: Exception | None = None) -> None:
        self.conflicting = set(conflicting)
        self.land_error = land_error
        self.joined: list[tuple[str, str | None]] = []
        self.landed: list[tuple[str, str | None, dict[str, Any], str]] = []
        self._lock = threading.Lock()

    def fork(self, node: Node, parent: str | None, branches: Sequence[BranchPlan]) -> None:
        return None

    def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
        with self._lock:
            self.joined.append((node.id, parent))
        if node.id not in self.conflicting:
            return JoinResult(context_updates={"workspace.merge_conflicts": []})
        updates = {"workspace.merge_conflicts": [{"repo": "app", "files": ["a.py"]}], "workspace.merge_summary": "a.py"}
        return JoinResult(failed=True, context_updates=updates, reason=REASON.format(node=node.id),
                          pending_merge={"steps": [{"path": f"{node.id}:b"}]})  # fmt: skip

    def land_conflicts(
        self, node: Node, parent: str | None, pending_merge: Mapping[str, Any], *, next_node: str
    ) -> Mapping[str, Any]:
        if self.land_error is not None:
            raise self.land_error
        with self._lock:
            self.landed.append((node.id, parent, json.loads(json.dumps(pending_merge, default=dict)), next_node))
        return {"workspace.merge_summary": f"committed with markers for {next_node}"}


ROUTED = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        fan [shape=component]; a; b
        join [shape=tripleoctagon]
        fixer [prompt="resolve the conflict"]
        start -> fan
        fan -> a -> join
        fan -> b -> join
        join -> fixer [condition="outcome=fail"]
        join -> done [condition="outcome=success"]
        fixer -> done
    }
    """
)
PENDING = {"join": "join", "fan_out": "fan", "line": None, "reason": REASON.format(node="fan"),
           "merge": {"steps": [{"path": "fan:b"}]}}  # fmt: skip


def test_the_join_node_takes_the_conflict_and_its_fail_edge_reaches_the_fixer_after_the_merge_lands() -> None:
    workspaces = ConflictingWorkspaces()
    backend = ScriptedCodergenBackend()
    harness = Harness(backend=backend, branch_workspaces=workspaces)
    result = harness.run(ROUTED)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes[-4:] == ("fan", "join", "fixer", "done")
    assert result.node_outcomes["fan"].status is StageStatus.SUCCESS  # its own status, from its branches
    join = result.node_outcomes["join"]
    assert (join.status, join.failure_reason) == (StageStatus.FAIL, REASON.format(node="fan"))
    assert "parallel.fan_in.best_id" not in result.context  # the fan-in handler did not run: the merge is its work
    assert workspaces.landed == [("fan", None, {"steps": [{"path": "fan:b"}]}, "fixer")]
    assert PENDING_JOIN_KEY not in result.context
    assert result.context["workspace.merge_summary"] == "committed with markers for fixer"
    status = json.loads(harness.directory().read_stage_file("join", "status.json") or "{}")
    assert (status["outcome"], status["failure_reason"]) == ("fail", REASON.format(node="fan"))
    [failed] = [e for e in harness.log.of(StageFailed) if e.node_id == "join"]
    assert failed.outcome.failure_reason == REASON.format(node="fan")
    after_fan, after_join = (next(c for c in harness.checkpoints() if c.current_node == n) for n in ("fan", "join"))
    assert (after_fan.next_node, after_fan.context[PENDING_JOIN_KEY]) == ("join", PENDING)
    assert after_join.next_node == "fixer" and PENDING_JOIN_KEY not in after_join.context
    assert after_join.node_outcomes["join"].status is StageStatus.FAIL


def test_without_a_route_from_the_join_the_run_fails_with_the_conflict_and_nothing_lands() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b; join [shape=tripleoctagon]; after
            start -> fan
            fan -> a -> join
            fan -> b -> join
            join -> after -> done
        }
        """
    )
    workspaces = ConflictingWorkspaces()
    harness = Harness(branch_workspaces=workspaces)
    result = harness.run(pipeline)
    assert result.status is RunStatus.FAIL
    assert result.failure_reason == f"stage join failed: {REASON.format(node='fan')}"
    assert workspaces.landed == [] and "after" not in result.completed_nodes
    assert result.context[PENDING_JOIN_KEY] == PENDING
    again = harness.run(pipeline, resume_from=harness.checkpoints()[-1])  # the conflict is still there: not skipped
    assert again.failure_reason == result.failure_reason and "parallel.fan_in.best_id" not in again.context


def test_a_join_node_of_any_handler_takes_the_conflict_without_running() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b
            review [prompt="review both"]
            fixer [prompt="resolve"]
            start -> fan
            fan -> a -> review
            fan -> b -> review
            review -> fixer [condition="outcome=fail"]
            review -> done [condition="outcome=success"]
            fixer -> done
        }
        """
    )
    backend = ScriptedCodergenBackend()
    workspaces = ConflictingWorkspaces()
    result = Harness(backend=backend, branch_workspaces=workspaces).run(pipeline)
    assert result.status is RunStatus.SUCCESS
    assert backend.visits("review") == 0 and backend.visits("fixer") == 1
    assert result.node_outcomes["review"].status is StageStatus.FAIL
    assert [landed[3] for landed in workspaces.landed] == ["fixer"]


def test_without_a_join_node_to_take_it_the_parallel_node_fails_as_before() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b
            start -> fan
            fan -> a -> done
            fan -> b -> done
        }
        """
    )
    result = Harness(branch_workspaces=ConflictingWorkspaces()).run(pipeline)
    assert result.status is RunStatus.FAIL
    fan = result.node_outcomes["fan"]
    assert (fan.status, fan.failure_reason) == (StageStatus.FAIL, REASON.format(node="fan"))
    assert PENDING_JOIN_KEY not in result.context


def test_a_merge_that_cannot_land_fails_the_run_with_why() -> None:
    workspaces = ConflictingWorkspaces(land_error=RuntimeError("app: the branch moved"))
    backend = ScriptedCodergenBackend()
    result = Harness(backend=backend, branch_workspaces=workspaces).run(ROUTED)
    assert result.status is RunStatus.FAIL
    assert result.failure_reason == "could not commit the conflicted merge at fan-in of fan for fixer: app: the branch moved"
    assert backend.visits("fixer") == 0


def test_a_join_routing_back_to_its_fan_out_retries_it_without_landing() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b; join [shape=tripleoctagon]
            start -> fan
            fan -> a -> join
            fan -> b -> join
            join -> fan [condition="outcome=fail"]
            join -> done [condition="outcome=success"]
        }
        """
    )

    class ConflictOnce(ConflictingWorkspaces):
        def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
            result = super().join(node, parent, statuses)
            self.conflicting.clear()
            return result

    workspaces = ConflictOnce()
    result = Harness(branch_workspaces=workspaces).run(pipeline)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes.count("fan") == 2 and workspaces.landed == []
    assert result.node_outcomes["join"].status is StageStatus.SUCCESS
    assert result.context[PENDING_JOIN_KEY] is None  # the second run of the fan-out cleared it


def test_a_conflict_whose_join_is_never_reached_fails_the_run_at_its_end() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b; join [shape=tripleoctagon]; elsewhere
            start -> fan
            fan -> a -> join
            fan -> b -> join
            fan -> elsewhere [condition="outcome=success"]
            elsewhere -> done
            join -> done
        }
        """
    )
    result = Harness(branch_workspaces=ConflictingWorkspaces()).run(pipeline)
    assert result.status is RunStatus.FAIL
    assert result.failure_reason == f"{REASON.format(node='fan')}; the join node join, which routes it, was never reached"


NESTED = """
    digraph p {{
        start [shape=Mdiamond]; done [shape=Msquare]
        outer [shape=component]; left; right
        inner [shape=component]; x; y
        {inner_join}
        merge [shape=tripleoctagon]
        start -> outer
        outer -> left -> inner
        outer -> right -> merge
        inner -> x
        inner -> y
        {inner_edges}
        merge -> done
    }}
"""


def test_a_nested_fan_outs_conflict_is_routed_and_landed_inside_its_branch() -> None:
    pipeline = graph(
        NESTED.format(
            inner_join='inner_join [shape=tripleoctagon]; fix [prompt="resolve"]',
            inner_edges="""x -> inner_join
                y -> inner_join
                inner_join -> fix [condition="outcome=fail"]
                inner_join -> merge [condition="outcome=success"]
                fix -> merge""",
        )
    )
    workspaces = ConflictingWorkspaces(conflicting=("inner",))
    harness = Harness(branch_workspaces=workspaces)
    result = harness.run(pipeline)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert workspaces.landed == [("inner", "outer:left", {"steps": [{"path": "inner:b"}]}, "fix")]
    left = {r["id"]: r for r in result.context["parallel.results"]}["left"]
    assert left["status"] == "success"
    assert left["completed_nodes"][-3:] == ["inner", "inner_join", "fix"]
    assert result.node_outcomes["inner_join"].status is StageStatus.FAIL
    assert {e.node_id: e.branch for e in harness.log.of(StageCompleted) if e.node_id == "fix"} == {"fix": "outer:left"}
    assert PENDING_JOIN_KEY not in left["context_updates"]


def test_a_nested_conflict_whose_join_is_the_enclosing_join_fails_its_branch() -> None:
    pipeline = graph(NESTED.format(inner_join="", inner_edges="x -> merge\n y -> merge"))
    workspaces = ConflictingWorkspaces(conflicting=("inner",))
    result = Harness(branch_workspaces=workspaces).run(pipeline)
    left = {r["id"]: r for r in result.context["parallel.results"]}["left"]
    assert left["status"] == "fail"
    assert left["failure_reason"] == f"{REASON.format(node='inner')}; the join node merge, which routes it, was never reached"
    assert result.node_outcomes["outer"].status is StageStatus.PARTIAL_SUCCESS
    assert workspaces.landed == []


def test_a_run_stopped_before_the_join_resumes_to_the_join_and_lands_then() -> None:
    stop = threading.Event()

    class StopAfterFan:
        def on_event(self, event: Any) -> None:
            if isinstance(event, StageCompleted) and event.node_id == "fan" and event.branch is None:
                stop.set()

    first = Harness(branch_workspaces=ConflictingWorkspaces(), observers=[StopAfterFan()])
    stopped = first.run(ROUTED, stop=stop)
    assert stopped.status is RunStatus.FAIL and stopped.failure_reason == "stopped before node join"
    checkpoint = first.checkpoints()[-1]
    assert checkpoint.next_node == "join" and checkpoint.context[PENDING_JOIN_KEY] == PENDING

    workspaces = ConflictingWorkspaces()  # a new process: the pending merge comes from the checkpoint alone
    backend = ScriptedCodergenBackend()
    resumed = Harness(backend=backend, branch_workspaces=workspaces).run(ROUTED, resume_from=checkpoint)
    assert resumed.status is RunStatus.SUCCESS, resumed.failure_reason
    assert workspaces.joined == [] and workspaces.landed == [("fan", None, {"steps": [{"path": "fan:b"}]}, "fixer")]
    assert backend.visits("fixer") == 1
