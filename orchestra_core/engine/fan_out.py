"""The shape of a parallel fan-out: its branches, the node where they join, per-branch stage keys."""

from __future__ import annotations

from collections.abc import Mapping

from orchestra_core.graph.fan_out import branch_edges, distances, find_join_node
from orchestra_core.model.graph import Graph, Node

__all__ = ["branch_nodes", "branch_stage_keys", "find_join_node"]  # find_join_node: tests still import it here


def branch_nodes(graph: Graph, node: Node, join: str | None) -> Mapping[str, frozenset[str]]:
    """Per branch (by its start node), every node it may run before the join (the start included)."""
    stop = join or node.id
    return {edge.target: frozenset(distances(graph, edge.target, stop)) for edge in branch_edges(graph, node)}


def branch_stage_keys(graph: Graph, node: Node, join: str | None) -> Mapping[str, Mapping[str, str]]:
    """Per branch (by its start node), the stage keys of nodes that more than one branch may run.

    Such a node gets the stage key `node@branch` in each branch so the branches never share a stage
    directory; every other node keeps its id as its stage key.
    """
    starts = [edge.target for edge in branch_edges(graph, node)]
    stop = join or node.id
    reach = {start: set(distances(graph, start, stop)) for start in starts}
    shared = {n for start in starts for n in reach[start] if sum(n in r for r in reach.values()) > 1}
    return {start: {n: f"{n}@{start}" for n in reach[start] & shared} for start in starts}
