"""A run's mutable state (completed nodes, outcomes, retries, visits) and the snapshots made of it."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from attrs import define, field

from orchestra_core.engine.edges import select_edge
from orchestra_core.engine.execution import apply_outcome
from orchestra_core.engine.routing import Advance, Finish, next_transition
from orchestra_core.engine.stage import BranchResult
from orchestra_core.model.checkpoint import Checkpoint, OutcomeMap, RunManifest, RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus

WorkspaceSnapshot = Callable[[], Mapping[str, str]]
# The visits of every node in the rounds before the latest loop restart (whose completed nodes are gone), kept in
# the context so that checkpoints, resumes and replays carry them.
EARLIER_VISITS_KEY = "internal.visits_before_restart"


@define
class Position:
    """Where the loop is about to go."""

    node_id: str
    edge: Edge | None = None
    previous: str | None = None
    resumed: bool = False


def fresh_context(graph: Graph, initial: Mapping[str, Any]) -> Context:
    """A run's starting context: every graph attribute as `graph.<key>`, then the initial values."""
    context = Context({f"graph.{key}": value for key, value in graph.attrs.items()})
    context.apply_updates(initial)
    return context


@define
class RunState:
    """The mutable state of one run."""

    context: Context
    initial_context: dict[str, Any]
    completed_nodes: list[str] = field(factory=list)
    node_outcomes: OutcomeMap = field(factory=OutcomeMap)
    node_retries: dict[str, int] = field(factory=dict)
    node_visits: int = 0
    loop_restarts: int = 0
    visit_counts: Counter[str] = field(factory=Counter)  # each node's visits in the run, loop restarts included

    @classmethod
    def restored(cls, checkpoint: Checkpoint, initial: Mapping[str, Any]) -> RunState:
        """The state a checkpoint describes."""
        context = Context(checkpoint.context, list(checkpoint.logs))
        return cls(
            context,
            dict(initial),
            list(checkpoint.completed_nodes),
            checkpoint.node_outcomes,
            dict(checkpoint.node_retries),
            checkpoint.node_visits,
            checkpoint.loop_restarts,
            earlier_visits(context) + Counter(checkpoint.completed_nodes),
        )

    def record(self, node: Node, outcome: Outcome, attempts: int) -> None:
        """Record a finished node (SKIPPED is routed, not recorded) and merge its outcome into the context."""
        if outcome.status is not StageStatus.SKIPPED:
            self.completed_nodes.append(node.id)
            self.visit_counts[node.id] += 1
            self.node_outcomes = self.node_outcomes.with_outcome(node.id, outcome)
        if attempts > 1:
            self.node_retries[node.id] = attempts - 1
        else:
            self.node_retries.pop(node.id, None)
        apply_outcome(self.context, outcome)

    def merge_branches(self, results: list[BranchResult]) -> None:
        """Add the nodes parallel branches ran, branch by branch."""
        for result in results:
            self.completed_nodes.extend(result.completed_nodes)
            self.visit_counts.update(result.completed_nodes)
            for node_id, outcome in result.node_outcomes.items():
                self.node_outcomes = self.node_outcomes.with_outcome(node_id, outcome)

    def start_over(self, context: Context) -> None:
        """A loop restart: a fresh context and no finished nodes; visits keep counting (every node's too)."""
        self.loop_restarts += 1
        self.context = context
        self.context.set("internal.loop_restart_count", self.loop_restarts)
        self.context.set(EARLIER_VISITS_KEY, dict(self.visit_counts))
        self.completed_nodes = []
        self.node_outcomes = OutcomeMap()
        self.node_retries = {}

    def checkpoint(
        self, current: str, next_node: str | None, finish: Finish | None, now: datetime, workspace: Mapping[str, str]
    ) -> Checkpoint:
        """A snapshot of the state."""
        return Checkpoint(
            current_node=current,
            completed_nodes=tuple(self.completed_nodes),
            node_outcomes=self.node_outcomes,
            node_retries=self.node_retries,
            context=self.context.snapshot(),
            timestamp=now,
            next_node=next_node,
            status=finish.status if finish else RunStatus.RUNNING,
            failure_reason=finish.reason if finish else "",
            logs=tuple(self.context.logs),
            workspace_snapshot=workspace,
            node_visits=self.node_visits,
            loop_restarts=self.loop_restarts,
        )

    def looping_message(self, limit: int) -> str:
        recent = ", ".join(self.completed_nodes[-8:])
        return (
            f"stopped after {limit} node visits without reaching an exit (max_node_visits); "
            f"the last nodes were: {recent}. Look for a loop whose exit condition never holds, or raise "
            "the limit with --max-visits or the graph attribute max_node_visits"
        )


def earlier_visits(context: Context) -> Counter[str]:
    """Each node's visits before the latest loop restart, as the context keeps them (none before the first)."""
    kept = context.get(EARLIER_VISITS_KEY)
    if not isinstance(kept, Mapping):
        return Counter()
    return Counter({str(node): count for node, count in kept.items() if isinstance(count, int) and count > 0})


def manifest_for(graph: Graph, session_id: str, logs_root: str, now: datetime, initial: Mapping[str, Any]) -> RunManifest:
    """The manifest of a new run (the pipeline file as an absolute path, for resume from elsewhere)."""
    return RunManifest(
        session_id=session_id,
        pipeline=graph.name,
        goal=graph.goal,
        label=graph.label,
        source_path=os.path.abspath(graph.source_path) if graph.source_path else None,
        logs_root=logs_root,
        started_at=now,
        initial_context=initial,
    )


def resumed_edge(graph: Graph, checkpoint: Checkpoint, context: Context) -> Edge | None:
    """The edge a resumed run arrives by: the one routing picks again from the last node, if it leads to
    the checkpoint's next node (jumps have none)."""
    node = graph.nodes.get(checkpoint.current_node)
    if node is None:
        return None
    outcome = checkpoint.node_outcomes.get(node.id, Outcome(StageStatus.SKIPPED))
    try:
        selected = select_edge(graph.outgoing(node.id), outcome, context)
    except OrchestraError:
        return None
    return selected.edge if selected is not None and selected.edge.target == checkpoint.next_node else None


def failed_run_position(graph: Graph, checkpoint: Checkpoint, context: Context) -> Position | None:
    """Where the resume of a failed run continues: a run that failed at an exit's goal-gate check goes back to
    that exit, whose gates are checked again (against the pipeline as it is now); otherwise the node that
    failed runs again, with the checkpoint's context (which a user may have changed). None when there is
    neither."""
    node = graph.nodes.get(checkpoint.current_node)
    if node is None:
        exits = graph.exit_nodes()
        return Position(exits[0].id, None, None, resumed=True) if exits else None
    outcome = checkpoint.node_outcomes.get(node.id, Outcome(StageStatus.FAIL))
    try:
        transition = next_transition(graph, node, outcome, context)
    except OrchestraError:
        transition = None
    target = graph.nodes.get(transition.target) if isinstance(transition, Advance) else None
    if isinstance(transition, Advance) and target is not None and graph.is_exit(target):
        return Position(target.id, transition.edge, node.id, resumed=True)
    return Position(node.id, None, None, resumed=True)
