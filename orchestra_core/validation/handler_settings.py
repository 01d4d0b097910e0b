"""Lint rule `attribute_value`: settings a handler would refuse when the node runs, refused before the run.

A join policy Orchestra cannot honour (or a `k` more than the branches), a retry preset the spec does not
define, a tool node without a command, a human gate whose `human.default_choice` names no choice, a manager
loop with neither a child to supervise nor a condition to stop on, a `loop_restart` edge that a parallel
branch may take (a branch cannot start the run over): each would only fail the node (or the branch) when the
run reaches it, so `compile` (and `run`, before anything is recorded) reports it as an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from orchestra_core.graph import retry_presets
from orchestra_core.graph.fan_out import branch_edges, distances, find_join_node
from orchestra_core.graph.gate_choices import find_choice, gate_choices, is_freeform
from orchestra_core.graph.join_policy import POLICIES, JoinPolicyError, join_policy
from orchestra_core.model import values
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph, Node
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

RULE = "attribute_value"
ERROR = Severity.ERROR


def check_attribute_value(graph: Graph) -> Iterator[Diagnostic]:
    """Handler settings that would fail their node at run time."""
    yield from _retry_presets(graph)
    yield from _restarts_in_branches(graph)
    for node in graph.nodes.values():
        handler = node.handler_type
        if handler == "parallel":
            yield from _join_policy(graph, node)
        elif handler == "tool" and not node.get("tool_command").strip():
            yield _error(node, "tool node without tool_command: it has no command to run", 'add tool_command="..."')
        elif handler == "wait.human":
            yield from _default_choice(graph, node)
        elif handler == "stack.manager_loop":
            yield from _manager(graph, node)


def _error(node: Node | None, message: str, fix: str) -> Diagnostic:
    return Diagnostic(RULE, ERROR, message, node_id=node.id if node is not None else None, fix=fix)


def _retry_presets(graph: Graph) -> Iterator[Diagnostic]:
    fix = f"name one of the spec's presets: {', '.join(retry_presets.PRESETS)}"
    try:
        retry_presets.graph_preset(graph)
    except OrchestraError as error:
        yield _error(None, str(error), fix)
    for node in graph.nodes.values():
        try:
            retry_presets.node_preset(node)
        except OrchestraError as error:
            yield _error(node, str(error), fix)


def _join_policy(graph: Graph, node: Node) -> Iterator[Diagnostic]:
    fix = f"use one of {', '.join(POLICIES)} (k_of_n with k=N, quorum with quorum_ratio=0.5)"
    try:
        policy = join_policy(node)
    except JoinPolicyError as error:
        yield _error(node, str(error), fix)
        return
    branches = len(branch_edges(graph, node))
    needed = policy.needed(branches)
    if needed is not None and branches and needed > branches:
        yield _error(
            node,
            f"{policy.spelled()} can never be met: it needs {needed} successful branches and the node has {branches}",
            f"lower the number to at most {branches}, or add branches",
        )


def _default_choice(graph: Graph, node: Node) -> Iterator[Diagnostic]:
    default = node.get("human.default_choice").strip()
    if not default or is_freeform(node, graph) or not graph.outgoing(node.id):
        return
    choices = gate_choices(node, graph)
    if find_choice(choices, default) is None:
        offered = ", ".join(c.label for c in choices)
        yield _error(
            node,
            f"human.default_choice={default!r} names none of the gate's choices ({offered})",
            "name a choice by its key, its label or its target node",
        )


def _manager(graph: Graph, node: Node) -> Iterator[Diagnostic]:
    dotfile = node.get("stack.child_dotfile") or graph.stack_child_dotfile
    try:
        autostart = node.get_bool("stack.child_autostart", True)
    except OrchestraError:
        return  # attribute_type reports it
    if dotfile and autostart:
        return
    if node.get("manager.stop_condition").strip() or node.get("stop_condition_key").strip():
        return
    yield _error(
        node,
        "manager loop with no child to supervise (no stack.child_dotfile, or stack.child_autostart=false) and "
        "nothing to stop on",
        "set stack.child_dotfile, or manager.stop_condition / stop_condition_key to watch the context",
    )


def _restarts_in_branches(graph: Graph) -> Iterator[Diagnostic]:
    restarting = [edge for edge in graph.edges if _is_true(edge.attrs.get("loop_restart", ""))]
    if not restarting:
        return
    in_branches = _branch_nodes(graph)
    for edge in restarting:
        if edge.source in in_branches:
            yield Diagnostic(
                RULE,
                ERROR,
                f"loop_restart=true on an edge from {edge.source}, which runs inside a parallel branch: a branch "
                "cannot start the run over, so taking this edge would fail the branch",
                edge=(edge.source, edge.target),
                fix="restart from a node after the fan-in (on the main line), or remove loop_restart",
            )


def _is_true(raw: str) -> bool:
    try:
        return values.parse_bool(raw) if raw.strip() else False
    except ValueError:
        return False  # attribute_type reports it


def _branch_nodes(graph: Graph) -> set[str]:
    """Every node a parallel branch may run (from its start up to the join)."""
    found: set[str] = set()
    for node in graph.nodes.values():
        if node.handler_type != "parallel":
            continue
        stop = find_join_node(graph, node) or node.id
        for edge in branch_edges(graph, node):
            found.update(distances(graph, edge.target, stop))
    return found


VALUE_RULES = (FunctionRule(RULE, check_attribute_value),)
