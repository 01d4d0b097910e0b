"""Lint rules about the graph's shape: start and exit nodes, reachability, dangling edges."""

from __future__ import annotations

from collections.abc import Iterator

from orchestra_core.model.graph import Graph, Node
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity
from orchestra_core.validation.flow import analyse_flow

ERROR = Severity.ERROR


def _names(nodes: list[Node]) -> str:
    return ", ".join(node.id for node in nodes)


def check_start_node(graph: Graph) -> Iterator[Diagnostic]:
    """Exactly one start node: shape=Mdiamond, or when no node has that shape, id start/Start."""
    found = graph.start_nodes()
    if not found:
        yield Diagnostic(
            "start_node",
            ERROR,
            "the pipeline has no start node (shape=Mdiamond, or a node with id start)",
            fix="add `start [shape=Mdiamond]` with an edge to the first stage",
        )
    elif len(found) > 1:
        yield Diagnostic(
            "start_node",
            ERROR,
            f"found {len(found)} start nodes ({_names(found)}); the pipeline needs exactly one",
            node_id=found[1].id,
            fix="keep one start node and give the others another shape",
        )


def check_terminal_node(graph: Graph) -> Iterator[Diagnostic]:
    """Exactly one exit node: shape=Msquare, or when no node has that shape, id exit/end."""
    found = graph.exit_nodes()
    if not found:
        yield Diagnostic(
            "terminal_node",
            ERROR,
            "the pipeline has no exit node (shape=Msquare, or a node with id exit or end)",
            fix="add `exit [shape=Msquare]` with an edge from the last stage",
        )
    elif len(found) > 1:
        yield Diagnostic(
            "terminal_node",
            ERROR,
            f"found {len(found)} exit nodes ({_names(found)}); the pipeline needs exactly one",
            node_id=found[1].id,
            fix="route every finishing path to one exit node",
        )


def reachable_from(graph: Graph, start: str) -> frozenset[str]:
    """Ids of the nodes a run from `start` may visit (start included).

    It follows every edge, and the engine's jumps too: a parallel node's join (`fan_in`) and failure
    retry targets, so a fan-in that only its `fan_in` attribute names is reachable.
    """
    return analyse_flow(graph, start).reached


def _structural_ids(graph: Graph) -> set[str]:
    return {node.id for node in (*graph.start_nodes(), *graph.exit_nodes())}


def _is_orphan(graph: Graph, node_id: str) -> bool:
    return not graph.outgoing(node_id) and not graph.incoming(node_id)


def _reached(graph: Graph) -> frozenset[str]:
    start = graph.start_node()
    return frozenset() if start is None else reachable_from(graph, start.id)


def check_reachability(graph: Graph) -> Iterator[Diagnostic]:
    """Every node reachable from the start node; nodes without any edge are left to `orphan_node`."""
    start = graph.start_node()
    if start is None:
        return
    reached = reachable_from(graph, start.id)
    structural = _structural_ids(graph)
    for node_id in graph.nodes:
        if node_id in reached or (_is_orphan(graph, node_id) and node_id not in structural):
            continue
        yield Diagnostic(
            "reachability",
            ERROR,
            f"node {node_id} is unreachable (orphan): no path from the start node {start.id} leads to it",
            node_id=node_id,
            fix=f"add an edge into {node_id} from a reachable node, or remove it",
        )


def check_orphan_node(graph: Graph) -> Iterator[Diagnostic]:
    """A stage with no edges at all is unreachable (start and exit nodes are checked by `reachability`).

    A node only the engine's jumps lead to (a `fan_in` or `retry_target`) is not an orphan.
    """
    structural = _structural_ids(graph)
    reached = _reached(graph)
    for node_id in graph.nodes:
        if _is_orphan(graph, node_id) and node_id not in structural and node_id not in reached:
            yield Diagnostic(
                "orphan_node",
                ERROR,
                f"node {node_id} is unreachable (orphan): it has no edges, so it never runs",
                node_id=node_id,
                fix=f"connect {node_id} with edges, or remove it",
            )


def check_edge_target_exists(graph: Graph) -> Iterator[Diagnostic]:
    """Both ends of every edge are nodes of the graph."""
    for edge in graph.edges:
        for end, role in ((edge.source, "source"), (edge.target, "target")):
            if end not in graph.nodes:
                yield Diagnostic(
                    "edge_target_exists",
                    ERROR,
                    f"edge {edge.source} -> {edge.target}: its {role} {end} is not a node of the graph",
                    edge=(edge.source, edge.target),
                    fix=f"declare node {end}, or point the edge at an existing node",
                )


def check_start_no_incoming(graph: Graph) -> Iterator[Diagnostic]:
    """No edge enters a start node."""
    for start in graph.start_nodes():
        for edge in graph.incoming(start.id):
            yield Diagnostic(
                "start_no_incoming",
                ERROR,
                f"edge {edge.source} -> {edge.target} enters the start node {start.id}",
                node_id=start.id,
                edge=(edge.source, edge.target),
                fix="point the edge at the first stage after start instead",
            )


def check_exit_no_outgoing(graph: Graph) -> Iterator[Diagnostic]:
    """No edge leaves an exit node."""
    for exit_node in graph.exit_nodes():
        for edge in graph.outgoing(exit_node.id):
            yield Diagnostic(
                "exit_no_outgoing",
                ERROR,
                f"edge {edge.source} -> {edge.target} leaves the exit node {exit_node.id}",
                node_id=exit_node.id,
                edge=(edge.source, edge.target),
                fix="remove the edge; to loop back, branch before the exit node",
            )


STRUCTURE_RULES = (
    FunctionRule("start_node", check_start_node),
    FunctionRule("terminal_node", check_terminal_node),
    FunctionRule("reachability", check_reachability),
    FunctionRule("orphan_node", check_orphan_node),
    FunctionRule("edge_target_exists", check_edge_target_exists),
    FunctionRule("start_no_incoming", check_start_no_incoming),
    FunctionRule("exit_no_outgoing", check_exit_no_outgoing),
)
