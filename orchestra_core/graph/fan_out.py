"""Where a parallel node's branches start and join: graph facts the engine walks and validation checks."""

from __future__ import annotations

from collections import deque

from orchestra_core.model.graph import Edge, Graph, Node

FAN_IN_TYPE = "parallel.fan_in"


def branch_edges(graph: Graph, node: Node) -> tuple[Edge, ...]:
    """A parallel node's branches: its unconditional outgoing edges.

    Conditional edges of a parallel node are routes taken after the fan-out (e.g. on failure).
    """
    return tuple(edge for edge in graph.outgoing(node.id) if edge.condition_ast is None)


def distances(graph: Graph, start: str, stop: str) -> dict[str, int]:
    """Shortest distances from `start` to every node it reaches, not walking through `stop`."""
    seen = {start: 0}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for edge in graph.outgoing(current):
            if edge.target not in seen and edge.target != stop:
                seen[edge.target] = seen[current] + 1
                queue.append(edge.target)
    return seen


def find_join_node(graph: Graph, node: Node) -> str | None:
    """Where a parallel node's branches join; the engine continues there after the fan-out.

    The node's `fan_in` attribute when set; otherwise, among the nodes every branch reaches (the branch
    starts themselves excluded), a `parallel.fan_in` node if there is one, else any node; the nearest
    (smallest longest distance over the branches, then id) wins. None when the branches never meet.
    """
    explicit = node.get("fan_in")
    if explicit:
        return explicit if explicit in graph.nodes else None
    starts = [edge.target for edge in branch_edges(graph, node)]
    if not starts:
        return None
    reach = [distances(graph, start, node.id) for start in starts]
    common = set(reach[0]).intersection(*reach[1:]) - set(starts) - {node.id}
    if not common:
        return None
    fan_ins = {
        n for n in common if graph.nodes.get(n) is not None and graph.nodes[n].handler_type == FAN_IN_TYPE
    }
    pool = fan_ins or common
    return min(pool, key=lambda n: (max(r[n] for r in reach), n))
