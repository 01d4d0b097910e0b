"""How often a node may run in one run: its visit bound (node `max_visits`, graph `default_max_visits`, else 20).

A visit is one execution of the node (its retries are part of the visit). Visits count over the whole run:
resumes, replays and `loop_restart` rounds included, and in a parallel branch the run's visits before the
fan-out plus the branch's own. The visit after the bound fails the run, so a loop whose way out never opens
(a model that never gets it right, the simulate backend) ends instead of running all night.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from orchestra_core.model.graph import Graph, Node

# Twenty runs of one stage is far past what a fix-and-check loop needs to converge (a loop that has not got
# there by then will not), while two nested loops of 4 x 5 rounds still fit; with a real model it caps what
# one forgotten bound can spend.
DEFAULT_MAX_VISITS = 20
NODE_KEY = "max_visits"
GRAPH_KEY = "default_max_visits"
BoundSource = Literal["node", "graph", "default"]


@frozen
class VisitBound:
    """A node's visit bound and where it comes from; `limit` None: no bound (lifted with 0)."""

    node_id: str
    limit: int | None
    source: BoundSource

    def refusal(self, visits: int) -> str | None:
        """Why the node may not run again after `visits` visits; None while it may."""
        if self.limit is None or visits < self.limit:
            return None
        return (
            f"node {self.node_id} exceeded {self._what()}: it already ran {visits} times and a loop led back to "
            f"it; {self._how()}"
        )

    def _what(self) -> str:
        if self.source == "node":
            return f"{NODE_KEY}={self.limit}"
        if self.source == "graph":
            return f"the graph's {GRAPH_KEY}={self.limit}"
        return f"the default visit bound ({DEFAULT_MAX_VISITS} runs of a node)"

    def _how(self) -> str:
        node = f"{NODE_KEY}=N on {self.node_id}"
        if self.source == "node":
            return f"to allow more, raise {node} ({NODE_KEY}=0 lifts its bound)"
        return f"to allow more, set {node} or {GRAPH_KEY}=N on the graph (0 lifts the bound)"


def visit_bound(node: Node, graph: Graph) -> VisitBound:
    """The node's bound: its `max_visits`, else the graph's `default_max_visits`, else DEFAULT_MAX_VISITS.

    A value of 0 (or less) lifts the bound.

    Raises:
        AttributeValueError: `max_visits` or `default_max_visits` is not an integer (validation reports it first).
    """
    if node.attrs.get(NODE_KEY, "").strip():
        return _bound(node.id, node.get_int(NODE_KEY, 0), "node")
    if graph.attrs.get(GRAPH_KEY, "").strip():
        return _bound(node.id, graph.get_int(GRAPH_KEY, 0), "graph")
    return VisitBound(node.id, DEFAULT_MAX_VISITS, "default")


def _bound(node_id: str, limit: int, source: BoundSource) -> VisitBound:
    return VisitBound(node_id, limit if limit > 0 else None, source)


def has_explicit_bound(node: Node, graph: Graph) -> bool:
    """Whether the pipeline itself says how often the node may run (a bound or `0`, on the node or the graph)."""
    return bool(node.attrs.get(NODE_KEY, "").strip() or graph.attrs.get(GRAPH_KEY, "").strip())
