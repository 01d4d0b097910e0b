"""Where the run goes after a node: edges, failure routing (3.7), goal gates (3.4), loop restarts."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from orchestra_core.engine.edges import select_edge
from orchestra_core.graph.fan_out import find_join_node
from orchestra_core.graph.visits import visit_bound
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.conditions import ContextLookup
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus


@frozen
class Advance:
    """Continue at `target`; `edge` is None for jumps (retry targets, goal gates, fan-in joins); `gate` names the
    unsatisfied goal gate of a goal-gate jump."""

    target: str
    edge: Edge | None
    reason: str
    gate: str = ""


@frozen
class Restart:
    """A `loop_restart` edge: start the run over at `target` with a fresh context and logs."""

    target: str
    edge: Edge


@frozen
class Finish:
    """The run ends (`reason` explains a failure)."""

    status: RunStatus
    reason: str = ""


Transition = Advance | Restart | Finish


def first_existing(graph: Graph, *candidates: str) -> str | None:
    """The first candidate that names a node of the graph."""
    return next((c for c in candidates if c and c in graph.nodes), None)


def failure_target(node: Node, graph: Graph) -> str | None:
    """A failed node's own jump target: `retry_target`, then `fallback_retry_target` (3.7)."""
    return first_existing(graph, node.retry_target, node.fallback_retry_target)


def goal_gate_target(node: Node, graph: Graph) -> str | None:
    """Where an unsatisfied goal gate sends the run: the node's retry targets, then the graph's (3.4)."""
    return first_existing(
        graph, node.retry_target, node.fallback_retry_target, graph.retry_target, graph.fallback_retry_target
    )


def goal_gate_met(node: Node, outcome: Outcome, context: ContextLookup) -> bool:
    """Whether a visited goal gate lets the run exit: a boolean gate when its latest outcome is SUCCESS or
    PARTIAL_SUCCESS, a gate given as a condition when the condition holds (its `outcome` and `preferred_label`
    are the gate node's latest; its `context.*` the run's now).

    Raises:
        ConditionSyntaxError: The gate's condition does not parse (validation reports it first).
    """
    condition = node.goal_gate_condition
    if condition is None:
        return outcome.status.is_success
    return condition.evaluate(outcome=outcome.status.value, preferred_label=outcome.preferred_label, context=context)


def unsatisfied_goal_gate(graph: Graph, node_outcomes: Mapping[str, Outcome], context: ContextLookup) -> Node | None:
    """The first visited goal-gate node that is not met (`goal_gate_met`)."""
    for node_id, outcome in node_outcomes.items():
        node = graph.nodes.get(node_id)
        if node is not None and node.goal_gate and not goal_gate_met(node, outcome, context):
            return node
    return None


def outcome_summary(outcome: Outcome) -> str:
    """An outcome in a failure message: its status and, when it has one, its reason (`fail: exit code 1: ...`)."""
    reason = " ".join(outcome.failure_reason.split()) if outcome.failure_reason else ""
    return f"{outcome.status.value}: {reason}" if reason else outcome.status.value


def goal_gate_message(gate: Node, outcome: Outcome, target: str | None) -> str:
    """Which goal gate holds the run back, why, and where it sends the run."""
    where = f"sends the run back to {target}" if target is not None else "has no retry target"
    condition = gate.goal_gate_condition if gate.goal_gate else None
    why = f"{gate.get('goal_gate').strip()!r} does not hold; " if condition is not None else ""
    return f"goal gate {gate.id} is unsatisfied ({why}{outcome_summary(outcome)}) and {where}"


def visit_limit_failure(node: Node, graph: Graph, visits: int) -> Finish | None:
    """The end of the run when `node`, run `visits` times so far, may not run again (its `visit_bound`), or
    its bound is malformed; None when it may run."""
    try:
        reason = visit_bound(node, graph).refusal(visits)
    except OrchestraError as error:
        return Finish(RunStatus.FAIL, str(error))
    return None if reason is None else Finish(RunStatus.FAIL, reason)


def exit_transition(graph: Graph, node_outcomes: Mapping[str, Outcome], context: ContextLookup) -> Transition | None:
    """Before the run may end: None when every goal gate is satisfied, else a jump or a failure.

    Raises:
        ConditionSyntaxError: A goal gate's condition does not parse (validation reports it first).
    """
    gate = unsatisfied_goal_gate(graph, node_outcomes, context)
    if gate is None:
        return None
    target = goal_gate_target(gate, graph)
    if target is not None:
        return Advance(target, None, "goal_gate", gate.id)
    return Finish(RunStatus.FAIL, goal_gate_message(gate, node_outcomes[gate.id], None))


def next_transition(graph: Graph, node: Node, outcome: Outcome, context: ContextLookup) -> Transition:
    """Decide what follows a finished node.

    Exit nodes end the run. A parallel node continues at its join node unless one of its conditional
    edges matches or it failed. A FAIL follows a matching condition, preferred label or suggested id,
    else the node's retry target, else ends the run; it never falls through an unconditional edge.

    Raises:
        ConditionSyntaxError: An outgoing edge's condition does not parse.
    """
    if graph.is_exit(node):
        return Finish(RunStatus.SUCCESS)
    failed = outcome.status is StageStatus.FAIL
    edges = graph.outgoing(node.id)
    if node.handler_type == "parallel":
        edges = tuple(edge for edge in edges if edge.condition_ast is not None)
    selected = select_edge(edges, outcome, context, allow_fallthrough=not failed)
    if selected is not None:
        if selected.edge.loop_restart:
            return Restart(selected.edge.target, selected.edge)
        return Advance(selected.edge.target, selected.edge, selected.reason)
    if node.handler_type == "parallel" and not failed:
        join = find_join_node(graph, node)
        if join is not None:
            return Advance(join, None, "fan_in")
    if failed:
        target = failure_target(node, graph)
        if target is not None:
            return Advance(target, None, "retry_target")
        if node.goal_gate:
            return Finish(RunStatus.FAIL, goal_gate_message(node, outcome, None))
        return Finish(RunStatus.FAIL, f"stage {node.id} failed: {outcome.failure_reason or 'no reason given'}")
    return Finish(RunStatus.SUCCESS)
