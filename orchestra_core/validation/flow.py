"""Lint rules about where a run can go: dead ends and nodes from which no exit node can be reached.

The engine's main line follows a node's edges, except that a parallel node continues at the node where its
branches join (or along its conditional edges); its unconditional edges start branches, and a branch runs
until the join, an exit node or a dead end (engine/branches.py). So a node that only ever runs inside a
parallel fan-out's branches may end its branch without an outgoing edge: only main-line nodes are held to
"has an outgoing edge" and "can reach an exit". A parallel node whose branches never join ends the run
after the fan-out when it succeeds, so on the main line it is a dead end too. Failure jumps
(`retry_target`, `fallback_retry_target`) count as ways out, as the engine takes them when no edge matches
a failure.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Iterable, Iterator

from attrs import frozen

from orchestra_core.graph.fan_out import find_join_node
from orchestra_core.model.graph import Graph, Node
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

ERROR = Severity.ERROR
_PARALLEL = "parallel"


def ways_on(graph: Graph, node: Node) -> tuple[list[str], list[str], bool]:
    """Where the main line may go after `node`, where a run may go at all, and whether it is a fan-out
    whose branches never join.

    The main line follows the edges of a node (of a parallel node: its conditional edges and its join) and
    its failure retry targets; a run also goes down a parallel node's branches.
    """
    nodes = graph.nodes
    plain = [edge.target for edge in graph.outgoing(node.id) if edge.target in nodes]
    jumps = [
        t
        for t in (node.attrs.get("retry_target"), node.attrs.get("fallback_retry_target"))
        if t and t in nodes
    ]
    if node.handler_type != _PARALLEL:
        main = plain + jumps
        return main, main, False
    join = find_join_node(graph, node)
    main = [
        edge.target
        for edge in graph.outgoing(node.id)
        if edge.condition_ast is not None and edge.target in nodes
    ]
    main += [join, *jumps] if join is not None else jumps
    return main, main + plain, join is None


@frozen
class Flow:
    """Where a run from the start node goes.

    Attributes:
        reached: Nodes a run may visit, along edges and the engine's jumps (joins, retry targets).
        main_line: Nodes the run visits outside parallel branches.
        dead_ends: Main-line nodes other than exits where the run stops: no outgoing edge, or a parallel
            node whose branches never join.
        stuck: Main-line nodes that can reach neither an exit node nor a dead end, less those that only lead
            into such nodes (the cycles, and what lies between them, are what needs fixing).
    """

    reached: frozenset[str]
    main_line: frozenset[str]
    dead_ends: frozenset[str]
    stuck: frozenset[str]


_last: tuple[weakref.ref[Graph], str, Flow] | None = None


def analyse_flow(graph: Graph, start: str) -> Flow:
    """Walk the run forward from `start`, then backward from its ends (linear in nodes + edges).

    The four rules that need it (reachability, orphan_node, dead_end, reaches_exit) share one analysis of
    the graph they are given.
    """
    global _last
    last = _last
    if last is not None and last[0]() is graph and last[1] == start:
        return last[2]
    flow = _analyse(graph, start)
    _last = (weakref.ref(graph), start, flow)
    return flow


def _analyse(graph: Graph, start: str) -> Flow:
    successors: dict[str, list[str]] = {}
    every_way: dict[str, list[str]] = {}
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in graph.nodes}
    exits: list[str] = []
    stops_here: set[str] = set()
    for node_id, node in graph.nodes.items():
        main, every, unjoined = ways_on(graph, node)
        successors[node_id], every_way[node_id] = main, every
        for target in main:
            predecessors[target].append(node_id)
        if graph.is_exit(node):
            exits.append(node_id)
        elif unjoined or not graph.outgoing(node_id):
            stops_here.add(node_id)
    main_line = _walk([start], successors)
    dead_ends = main_line & stops_here
    stuck = main_line - _walk([*exits, *sorted(dead_ends)], predecessors)
    return Flow(
        frozenset(_walk([start], every_way)),
        frozenset(main_line),
        frozenset(dead_ends),
        frozenset(_without_lead_ins(stuck, successors)),
    )


def _walk(starts: Iterable[str], neighbours: dict[str, list[str]]) -> set[str]:
    seen = set(starts)
    queue = deque(seen)
    while queue:
        for other in neighbours[queue.popleft()]:
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen


def _without_lead_ins(stuck: set[str], successors: dict[str, list[str]]) -> set[str]:
    """`stuck` less the nodes that nothing stuck leads to and that only lead on into it, peeled repeatedly."""
    indegree = dict.fromkeys(stuck, 0)
    for node_id in stuck:
        for target in successors[node_id]:
            indegree[target] += 1  # every successor of a stuck node is stuck
    left = set(stuck)
    queue = deque(n for n in stuck if indegree[n] == 0)
    while queue:
        node_id = queue.popleft()
        left.discard(node_id)
        for target in successors[node_id]:
            indegree[target] -= 1
            if indegree[target] == 0:
                queue.append(target)
    return left


def _flow(graph: Graph) -> Flow | None:
    start = graph.start_node()
    if start is None or not graph.exit_nodes():
        return None  # start_node / terminal_node report it
    return analyse_flow(graph, start.id)


def _in_graph_order(graph: Graph, ids: frozenset[str]) -> list[str]:
    return [node_id for node_id in graph.nodes if node_id in ids]


def check_dead_end(graph: Graph) -> Iterator[Diagnostic]:
    """The run stops only at an exit node: no main-line node without an outgoing edge (or without a join)."""
    flow = _flow(graph)
    if flow is None:
        return
    for node_id in _in_graph_order(graph, flow.dead_ends):
        if graph.outgoing(node_id):
            message = (
                f"node {node_id} is a dead end: its parallel branches never meet at a join node, so the run "
                "stops after them instead of going on to an exit node"
            )
            fix = f"lead the branches to one fan-in node (shape=tripleoctagon, or fan_in=<node> on {node_id}) with an edge toward the exit"
        else:
            message = f"node {node_id} is a dead end: it has no outgoing edge and is not an exit node"
            fix = f"add an edge from {node_id} toward the exit node, or remove {node_id}"
        yield Diagnostic("dead_end", ERROR, message, node_id=node_id, fix=fix)


def check_reaches_exit(graph: Graph) -> Iterator[Diagnostic]:
    """From every main-line node some path leads to an exit node (no cycle without a way out).

    Nodes whose paths all end in dead ends are left to `dead_end`, and nodes that only lead into a cycle
    without a way out are not reported beside it.
    """
    flow = _flow(graph)
    if flow is None:
        return
    for node_id in _in_graph_order(graph, flow.stuck):
        yield Diagnostic(
            "reaches_exit",
            ERROR,
            f"node {node_id} cannot reach an exit node: every path from it goes round a cycle with no way out",
            node_id=node_id,
            fix=f"add an edge (or a retry_target) from {node_id} or another node of its cycle toward the exit node",
        )


FLOW_RULES = (
    FunctionRule("dead_end", check_dead_end),
    FunctionRule("reaches_exit", check_reaches_exit),
)
