"""The parallel handler (Attractor 4.8): fan out over the unconditional edges, each branch on a cloned
context, at most `max_parallel` at a time, joined by `join_policy` (graph/join_policy.py: `wait_all`,
`first_success`, `k_of_n`, `quorum`, and the spellings of other runners that mean one of them).

Each branch runs node by node until it reaches the join node (see `find_join_node`), an exit node or a
dead end. The results go to `parallel.results` (and each branch's status to `parallel.branch.<id>.status`);
afterwards the engine continues at the join node. A merge conflict at the join is the join node's outcome (see
`orchestra_core.engine.join_outcome`); without a join node to take it, the parallel node fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchPlan
from orchestra_core.engine.fan_out import branch_nodes, branch_stage_keys
from orchestra_core.engine.join_outcome import PENDING_JOIN_KEY, PendingJoin
from orchestra_core.engine.stage import BranchResult, StageRun
from orchestra_core.graph.fan_out import branch_edges, find_join_node
from orchestra_core.graph.join_policy import JoinPolicy, JoinPolicyError, join_policy
from orchestra_core.model.context import Context
from orchestra_core.model.events import (
    ParallelBranchCompleted,
    ParallelBranchStarted,
    ParallelCompleted,
    ParallelStarted,
)
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus

DEFAULT_MAX_PARALLEL = 4
_SUCCESSFUL = (StageStatus.SUCCESS.value, StageStatus.PARTIAL_SUCCESS.value)


def result_record(result: BranchResult, branch_path: str) -> dict[str, Any]:
    """One branch's entry in `parallel.results` (plain JSON values)."""
    outcome = result.outcome
    return {
        "id": result.branch_id,
        "branch": branch_path,
        "status": result.status,
        "last_node": result.last_node,
        "completed_nodes": list(result.completed_nodes),
        "preferred_label": outcome.preferred_label if outcome else "",
        "notes": outcome.notes if outcome else "",
        "failure_reason": result.failure_reason,
        "score": _score(result.context_changes),
        "duration_s": round(result.duration_s, 6),
        "context_updates": dict(result.context_changes),
    }


def branch_statuses(results: list[BranchResult]) -> dict[str, str]:
    """`parallel.branch.<branch id>.status` per branch, as other Attractor runners' scripts read them."""
    return {f"parallel.branch.{r.branch_id}.status": r.status for r in results}


def _score(changes: Mapping[str, Any]) -> float:
    try:
        return float(changes.get("score", 0) or 0)
    except (TypeError, ValueError):
        return 0.0


class ParallelHandler:
    """Runs the branches of a `parallel` node concurrently (node attributes `max_parallel`, default 4,
    and `join_policy`: `wait_all` (default), `first_success`, which cancels the others at their next
    node once one branch succeeds, `k_of_n` or `quorum`)."""

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        edges = branch_edges(graph, node)
        if not edges:
            return Outcome.fail(f"parallel node {node.id} has no unconditional outgoing edges to fan out to")
        try:
            policy = join_policy(node)
        except JoinPolicyError as error:  # validation refuses such a pipeline before it runs
            return Outcome.fail(str(error))
        max_parallel = max(node.get_int("max_parallel", DEFAULT_MAX_PARALLEL), 1)
        join = find_join_node(graph, node)
        prefix = f"{stage.branch}/" if stage.branch else ""
        paths = [f"{prefix}{node.id}:{edge.target}" for edge in edges]
        stage.emit(
            ParallelStarted,
            node_id=node.id,
            branch_count=len(edges),
            branch_ids=tuple(edge.target for edge in edges),
            join_policy=policy.name,
            max_parallel=max_parallel,
            join_node=join,
        )
        started = stage.engine.clock.monotonic()
        reach = branch_nodes(graph, node, join)
        plans = [BranchPlan(path, edge.target, reach[edge.target]) for edge, path in zip(edges, paths, strict=True)]
        try:
            stage.engine.workspaces.fork(node, stage.branch, plans)
        except Exception as error:  # the branches cannot get their worktrees: none runs
            return Outcome.fail(f"could not set up the branches' workspaces: {error}")
        run = _FanOut(node, context, stage, join, branch_stage_keys(graph, node, join), policy.name)
        results = run.all(edges, paths, max_parallel)
        successes = sum(r.status in _SUCCESSFUL for r in results)
        failures = sum(r.status == StageStatus.FAIL.value for r in results)
        duration = stage.engine.clock.monotonic() - started
        stage.emit(ParallelCompleted, node_id=node.id, duration_s=duration, success_count=successes, failure_count=failures)
        updates = {
            "parallel.results": [result_record(r, path) for r, path in zip(results, paths, strict=True)],
            "parallel.branch_count": len(results),
            "parallel.success_count": successes,
            "parallel.failure_count": failures,
            "parallel.fail_count": failures,  # the name other Attractor runners use
            "parallel.join_node": join or "",
            **branch_statuses(results),
        }
        notes = f"{len(results)} branches: {successes} succeeded, {failures} failed"
        status, reason = joined_status(policy, len(results), successes, failures)
        statuses = {p: r.status for r, p in zip(results, paths, strict=True)}
        joined, failure, note = _join(node, context, graph, stage, join, statuses)
        updates.update(joined)
        if failure:
            status, reason = StageStatus.FAIL, failure
        return Outcome(status, context_updates=updates, notes=notes + note, failure_reason=reason)


def _join(
    node: Node, context: Context, graph: Graph, stage: StageRun, join: str | None, statuses: Mapping[str, str]
) -> tuple[dict[str, Any], str, str]:
    """Join the branches' workspaces: (context updates, why the parallel node fails or "", a note). A merge
    conflict is left pending for the join node to take as its outcome; without one that can, the node fails."""
    joined = stage.engine.workspaces.join(node, stage.branch, statuses)
    updates = dict(joined.context_updates)
    if not joined.failed:
        earlier = PendingJoin.of(context, stage.branch)
        if earlier is not None and earlier.fan_out == node.id:
            updates[PENDING_JOIN_KEY] = None  # an earlier run of this fan-out left it; those branches are gone
        return updates, "", ""
    taker = _conflict_taker(graph, join)
    if taker is None:
        return updates, joined.reason, f"; {joined.reason}"
    pending = PendingJoin(taker, node.id, stage.branch, joined.reason, joined.pending_merge)
    updates[PENDING_JOIN_KEY] = pending.to_json()
    return updates, "", f"; {joined.reason}; the join node {taker} takes it as its outcome"


def _conflict_taker(graph: Graph, join: str | None) -> str | None:
    """The join node when it can take a merge conflict as its outcome: a node of the graph that is not an exit
    (an exit only ends the run)."""
    target = graph.nodes.get(join) if join is not None else None
    return target.id if target is not None and not graph.is_exit(target) else None


def joined_status(policy: JoinPolicy, branches: int, successes: int, failures: int) -> tuple[StageStatus, str]:
    """The parallel node's status under its join policy, and the reason when it fails."""
    needed = policy.needed(branches)
    if needed is not None:
        if successes >= needed:
            return StageStatus.SUCCESS, ""
        return StageStatus.FAIL, f"{successes} of {branches} branches succeeded; {policy.spelled()} needs {needed}"
    if policy.name == "first_success":
        return (StageStatus.SUCCESS, "") if successes else (StageStatus.FAIL, "no branch succeeded")
    return (StageStatus.SUCCESS if failures == 0 else StageStatus.PARTIAL_SUCCESS), ""


class _FanOut:
    """One fan-out: runs the branches in a bounded thread pool and applies the join policy."""

    def __init__(
        self,
        node: Node,
        context: Context,
        stage: StageRun,
        join: str | None,
        stage_keys: Mapping[str, Mapping[str, str]],
        policy: str,
    ) -> None:
        self.node = node
        self.context = context
        self.stage = stage
        self.join = join
        self.stage_keys = stage_keys
        self.policy = policy
        self.cancel = stage.cancel  # set by first_success, or by the engine when the node times out

    def all(self, edges: tuple[Edge, ...], paths: list[str], max_parallel: int) -> list[BranchResult]:
        results: dict[int, BranchResult] = {}
        workers = min(max_parallel, len(edges))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"orchestra-{self.node.id}") as pool:
            futures = {
                pool.submit(self.one, index, edge, path): index
                for index, (edge, path) in enumerate(zip(edges, paths, strict=True))
            }
            for future in as_completed(futures):
                result = future.result()
                results[futures[future]] = result
                if self.policy == "first_success" and result.status in _SUCCESSFUL:
                    self.cancel.set()
        return [results[index] for index in range(len(edges))]

    def one(self, index: int, edge: Edge, path: str) -> BranchResult:
        self.stage.emit(ParallelBranchStarted, node_id=self.node.id, branch_id=edge.target, index=index)
        result = self.stage.engine.run_branch(
            edge,
            self.context.clone(),
            branch=path,
            stop_at=self.join,
            stage_keys=self.stage_keys.get(edge.target, {}),
            cancel=self.cancel,
        )
        self.stage.emit(
            ParallelBranchCompleted,
            node_id=self.node.id,
            branch_id=edge.target,
            index=index,
            duration_s=result.duration_s,
            success=result.status in _SUCCESSFUL,
            status=result.status,
        )
        return result
