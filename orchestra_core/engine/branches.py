"""Parallel branches: running nodes on a cloned context from a branch start until the join node."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchWorkspaces, NoBranchWorkspaces
from orchestra_core.engine.execution import StageExecutor, StageVisit, apply_outcome
from orchestra_core.engine.join_outcome import PendingJoin, settle_pending_join, unrouted_reason
from orchestra_core.engine.routing import Advance, Finish, next_transition, visit_limit_failure
from orchestra_core.engine.stage import BranchResult
from orchestra_core.graph.fan_out import branch_edges
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.clock import Clock

_ResultKey = tuple[str | None, str]
BRANCH_KEY = "internal.branch"


def parent_branch(branch: str) -> str | None:
    """The branch path a branch was forked from (None for the main line)."""
    return branch.rsplit("/", 1)[0] if "/" in branch else None


class BranchWalker:
    """Walks parallel branches for one run and keeps their results until the fan-out collects them."""

    def __init__(
        self,
        graph: Graph,
        executor: StageExecutor,
        clock: Clock,
        max_visits: int,
        visited: Callable[[], Mapping[str, int]] = dict,
        workspaces: BranchWorkspaces | None = None,
    ) -> None:
        """`visited`: each node's visits in the run before its branches started (for the nodes' visit bounds);
        `workspaces`: where a nested fan-out's merge conflict is committed when its join routes it on."""
        self._graph = graph
        self._workspaces = workspaces or NoBranchWorkspaces()
        self._executor = executor
        self._clock = clock
        self._max_visits = max_visits
        self._visited = visited
        self._results: dict[_ResultKey, dict[str, BranchResult]] = {}
        self._lock = threading.Lock()

    def walk(
        self,
        start: Edge,
        context: Context,
        *,
        branch: str,
        stop_at: str | None,
        stage_keys: Mapping[str, str],
        cancel: threading.Event,
        single: bool = False,
    ) -> BranchResult:
        """Run one branch; its result is also kept for `take_results` of the parallel node. `single`: only its
        first node, one attempt (a main-line node a worker runs for its session's runner)."""
        started = self._clock.monotonic()
        context.set(BRANCH_KEY, branch)  # the branch's tools find its worktrees by it
        before = context.snapshot()
        walk = _Walk(self, branch, context, stage_keys, cancel, single)
        status = walk.run(start, stop_at)
        result = BranchResult(
            branch_id=start.target,
            status=status,
            outcome=walk.last_outcome,
            last_node=walk.completed[-1] if walk.completed else None,
            completed_nodes=tuple(walk.completed),
            node_outcomes=dict(walk.outcomes),
            context_changes=_changes(before, context.snapshot()),
            duration_s=self._clock.monotonic() - started,
        )
        self.keep(start, branch, result)
        return result

    def keep(self, start: Edge, branch: str, result: BranchResult) -> None:
        """Keep a branch's result for `take_results` (a branch that ran elsewhere is kept the same way)."""
        with self._lock:
            self._results.setdefault((parent_branch(branch), start.source), {})[start.target] = result

    def take_results(self, branch: str | None, node: Node) -> list[BranchResult]:
        """The latest results of a parallel node's branches, in branch order (and forget them)."""
        with self._lock:
            found = self._results.pop((branch, node.id), {})
        order = [edge.target for edge in branch_edges(self._graph, node)]
        return [found[target] for target in order if target in found]


class _Walk:
    """The node-by-node loop of one branch."""

    def __init__(
        self,
        walker: BranchWalker,
        branch: str,
        context: Context,
        stage_keys: Mapping[str, str],
        cancel: threading.Event,
        single: bool = False,
    ) -> None:
        self.single = single
        self.walker = walker
        self.branch = branch
        self.context = context
        self.stage_keys = stage_keys
        self.cancel = cancel
        self.completed: list[str] = []
        self.visits: Counter[str] = Counter()  # the branch's own visits of each node
        self.outcomes: dict[str, Outcome] = {}
        self.last_outcome: Outcome | None = None

    def run(self, start: Edge, stop_at: str | None) -> str:
        graph = self.walker._graph
        edge: Edge | None
        current, edge, previous = start.target, start, start.source
        visits = 0
        while True:
            if self.cancel.is_set() or self.walker._executor.budget_stop() is not None:
                return StageStatus.SKIPPED.value
            node = graph.nodes.get(current)
            if current == stop_at or node is None or graph.is_exit(node):
                return self._final_status(None if node is not None or current == stop_at else current)
            if visits >= self.walker._max_visits:
                return self._fail(f"branch stopped after {visits} node visits (max_node_visits)")
            before = self.walker._visited().get(node.id, 0)
            over_limit = visit_limit_failure(node, graph, before + self.visits[node.id])
            if over_limit is not None:
                return self._fail(over_limit.reason)
            visits += 1
            outcome = self._execute(node, visits, edge, previous)
            if outcome is None:  # the session's budget stopped the node: the branch ends here
                return StageStatus.SKIPPED.value
            if self.single:
                return self._final_status(None)
            try:
                transition = next_transition(graph, node, outcome, self.context)
            except OrchestraError as error:
                return self._fail(f"cannot route from {node.id}: {error}")
            settled = settle_pending_join(self.walker._workspaces, graph, node, self.context, self.branch, transition)
            if settled is not transition and isinstance(settled, Finish):  # the conflicted merge could not be landed
                return self._fail(settled.reason)
            if isinstance(transition, Finish):
                return transition.status.value if transition.status.value == "fail" else self._final_status(None)
            if not isinstance(transition, Advance):
                return self._fail(f"loop_restart from {node.id} is not allowed inside a parallel branch")
            current, edge, previous = transition.target, transition.edge, node.id

    def _execute(self, node: Node, index: int, edge: Edge | None, previous: str) -> Outcome | None:
        visit = StageVisit(
            index=index,
            branch=self.branch,
            incoming_edge=edge,
            previous_node=previous,
            resumed=False,
            stage_key=self.stage_keys.get(node.id, node.id),
            completed_nodes=self.completed,
            node_outcomes=self.outcomes,
            cancel=self.cancel,
            max_attempts=1 if self.single else None,
        )
        run = self.walker._executor.execute(node, self.context, visit)
        if run.stopped is not None:
            return None
        outcome = run.outcome
        if node.handler_type == "parallel":
            for nested in self.walker.take_results(self.branch, node):
                self.completed.extend(nested.completed_nodes)
                self.visits.update(nested.completed_nodes)
                self.outcomes.update(nested.node_outcomes)
        if outcome.status is not StageStatus.SKIPPED:
            self.completed.append(node.id)
            self.visits[node.id] += 1
            self.outcomes[node.id] = outcome
        apply_outcome(self.context, outcome)
        self.last_outcome = outcome
        return outcome

    def _final_status(self, missing: str | None) -> str:
        if missing is not None:
            return self._fail(f"node {missing!r} is not in the pipeline")
        pending = PendingJoin.of(self.context, self.branch)
        if pending is not None:  # a nested fan-out's conflict its join never took (the branch ended first)
            return self._fail(unrouted_reason(pending))
        return self.last_outcome.status.value if self.last_outcome else StageStatus.SUCCESS.value

    def _fail(self, reason: str) -> str:
        self.last_outcome = Outcome.fail(reason)
        return StageStatus.FAIL.value


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Values added or changed in `after` (removed keys are not reported)."""
    return {key: value for key, value in after.items() if key not in before or before[key] != value}
