"""Lint rules about where a run can go: dead ends and nodes from which no exit node can be reached.

The engine's main line follows a node's edges, except that a parallel node continues at the node where its
branches join (or along its conditional edges); its unconditional edges start branches, and a branch runs
until the join, an exit node or a dead end (engine/branches.py). So a node that only ever runs inside a
parallel fan-out's branches may end its branch without an outgoing edge: only main-line nodes are held to
"has an outgoing edge" and "can reach an exit". Failure jumps (`retry_target`, `fallback_retry_target`)
count as ways out, as the engine takes them when no edge matches a failure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from attrs import frozen

from orchestra_core.graph.fan_out import find_join_node
from orchestra_core.model.graph import Graph, Node
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

ERROR = Severity.ERROR


def main_line_successors(graph: Graph, node: Node) -> list[str]:
    """Where the main line may go after `node`: its edges (a parallel node: conditional ones and the join)."""
    edges = graph.outgoing(node.id)
    if node.handler_type == "parallel":
        targets = [edge.target for edge in edges if edge.condition_ast is not None]
        join = find_join_node(graph, node)
        if join is not None:
            targets.append(join)
    else:
        targets = [edge.target for edge in edges]
    targets.extend(t for t in (node.retry_target, node.fallback_retry_target) if t)
    return [target for target in targets if target in graph.nodes]


@frozen
class Flow:
    """The main line from the start node and the nodes from which it can reach an exit node."""

    main_line: frozenset[str]
    dead_ends: frozenset[str]
    stops: frozenset[str]


def analyse_flow(graph: Graph, start: str) -> Flow:
    """Walk the main line forward from `start`, then backward from its ends (linear in nodes + edges).

    `stops` are the nodes from which the main line can reach an exit node or one of its dead ends: a node
    outside it can only go round in circles (or end a run at a parallel node whose branches never join).
    """
    successors = {node_id: main_line_successors(graph, node) for node_id, node in graph.nodes.items()}
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in graph.nodes}
    for node_id, targets in successors.items():
        for target in targets:
            predecessors[target].append(node_id)
    main_line = _walk([start], successors)
    dead_ends = [node_id for node_id in main_line if _is_dead_end(graph, graph.nodes[node_id])]
    ends = [node.id for node in graph.nodes.values() if graph.is_exit(node)] + dead_ends
    return Flow(frozenset(main_line), frozenset(dead_ends), frozenset(_walk(ends, predecessors)))


def _walk(starts: list[str], neighbours: dict[str, list[str]]) -> set[str]:
    seen = set(starts)
    queue = deque(starts)
    while queue:
        for other in neighbours[queue.popleft()]:
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen


def _flow(graph: Graph) -> Flow | None:
    start = graph.start_node()
    if start is None or not any(graph.is_exit(node) for node in graph.nodes.values()):
        return None  # start_node / terminal_node report it
    return analyse_flow(graph, start.id)


def _in_graph_order(graph: Graph, ids: frozenset[str]) -> list[str]:
    return [node_id for node_id in graph.nodes if node_id in ids]


def _is_dead_end(graph: Graph, node: Node) -> bool:
    return not graph.is_exit(node) and not graph.outgoing(node.id)


def check_dead_end(graph: Graph) -> Iterator[Diagnostic]:
    """A main-line node other than an exit has an outgoing edge (the run would stop there, not at the exit)."""
    flow = _flow(graph)
    if flow is None:
        return
    for node_id in _in_graph_order(graph, flow.dead_ends):
        yield Diagnostic(
            "dead_end",
            ERROR,
            f"node {node_id} is a dead end: it has no outgoing edge and is not an exit node",
            node_id=node_id,
            fix=f"add an edge from {node_id} toward the exit node, or remove {node_id}",
        )


def check_reaches_exit(graph: Graph) -> Iterator[Diagnostic]:
    """From every main-line node some path leads to an exit node (no cycle without a way out).

    A node whose paths all end in dead ends is left to `dead_end`, which names where they stop.
    """
    flow = _flow(graph)
    if flow is None:
        return
    for node_id in _in_graph_order(graph, flow.main_line - flow.stops):
        node = graph.nodes[node_id]
        if node.handler_type == "parallel" and find_join_node(graph, node) is None:
            fix = "its branches never meet: lead them to one fan-in node (shape=tripleoctagon) with an edge toward the exit"
        else:
            fix = f"add an edge from {node_id} (or from the cycle it is in) toward the exit node"
        yield Diagnostic(
            "reaches_exit",
            ERROR,
            f"node {node_id} cannot reach an exit node: every path from it loops or stops before an exit",
            node_id=node_id,
            fix=fix,
        )


FLOW_RULES = (
    FunctionRule("dead_end", check_dead_end),
    FunctionRule("reaches_exit", check_reaches_exit),
)
