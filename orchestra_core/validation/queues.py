"""Lint rules about `queue`: where a fleet runs a pipeline (`graph [queue=...]`), a parallel node's branches or a
node's work (docs/fleet.md). A queue is a name a worker serves (`orchestra worker --queue NAME`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from orchestra_core.graph.fan_out import branch_edges, distances, find_join_node
from orchestra_core.model.graph import Graph, Node
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

QUEUE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# Handlers that do no work of their own: a `queue` on them places nothing (on a parallel node it places its branches).
_NO_WORK = {"start": "the start node", "exit": "an exit node", "conditional": "a conditional node",
            "parallel.fan_in": "a fan-in node", "stack.manager_loop": "a manager loop node"}  # fmt: skip


def check_queue_name(graph: Graph) -> Iterator[Diagnostic]:
    """`queue` names a queue a worker can serve: letters, digits, `.`, `_` and `-`, at most 100 (empty: none)."""
    owners: list[tuple[str, str, str | None]] = [("graph", graph.attrs.get("queue", ""), None)]
    owners += [(f"node {node.id}", node.attrs.get("queue", ""), node.id) for node in graph.nodes.values()]
    for owner, queue, node_id in owners:
        if queue and not QUEUE_NAME.fullmatch(queue):  # an empty queue is no queue
            yield Diagnostic(
                "queue_name", Severity.ERROR, f"{owner}: queue={queue!r} is not a queue name", node_id=node_id,
                fix="use letters, digits, '.', '_' and '-' (at most 100), e.g. queue=\"gpu\"",
            )  # fmt: skip


def check_queue_per_branch(graph: Graph) -> Iterator[Diagnostic]:
    """The nodes of one parallel branch name one queue at most: a branch runs on one worker."""
    for node in graph.nodes.values():
        if node.handler_type != "parallel":
            continue
        stop = find_join_node(graph, node) or node.id
        for edge in branch_edges(graph, node):
            named = _queues(graph, distances(graph, edge.target, stop))
            if len(set(named.values())) > 1:
                listed = ", ".join(f"{n} ({q})" for n, q in sorted(named.items()))
                yield Diagnostic(
                    "queue_per_branch", Severity.ERROR,
                    f"parallel branch {node.id} -> {edge.target} names more than one queue: {listed}; a branch runs on "
                    "one worker", node_id=node.id,
                    fix="give the branch's nodes one queue, or put the nodes that need another queue in a branch of "
                    "their own",
                )  # fmt: skip


def check_queue_placement(graph: Graph) -> Iterator[Diagnostic]:
    """A `queue` on a node that does no work of its own places nothing."""
    for node in graph.nodes.values():
        what = _NO_WORK.get(node.handler_type)
        if what is not None and node.attrs.get("queue"):
            yield Diagnostic(
                "queue_placement", Severity.WARNING,
                f"node {node.id}: queue={node.attrs['queue']!r} has no effect on {what} (it does no work of its own)",
                node_id=node.id,
                fix="put queue on the nodes that need the queue's workers, on a parallel node (for its branches) or "
                "on the graph (for the whole pipeline)",
            )  # fmt: skip


def _queues(graph: Graph, nodes: dict[str, int]) -> dict[str, str]:
    found: dict[str, str] = {}
    for node_id in nodes:
        node: Node | None = graph.nodes.get(node_id)
        if node is not None and node.attrs.get("queue") and node.handler_type not in _NO_WORK:
            found[node_id] = node.attrs["queue"]
    return found


QUEUE_RULES = (
    FunctionRule("queue_name", check_queue_name),
    FunctionRule("queue_per_branch", check_queue_per_branch),
    FunctionRule("queue_placement", check_queue_placement),
)
