"""Generated graphs: the reachability, dead-end and exit-reach rules report exactly the nodes they should."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.graph import Edge, Graph, Node
from orchestra_core.validation import validate

UNREACHABLE_RULES = {"reachability", "orphan_node"}


@st.composite
def pipelines(draw: st.DrawFn) -> Graph:
    """A start, an exit and up to 8 LLM stages joined by random edges (no edge into start or out of exit)."""
    stages = [f"n{i}" for i in range(draw(st.integers(0, 8)))]
    sources = ["start", *stages]
    targets = [*stages, "exit"]
    pairs = draw(st.lists(st.tuples(st.sampled_from(sources), st.sampled_from(targets)), max_size=20))
    nodes = [Node("start", {"shape": "Mdiamond"}), Node("exit", {"shape": "Msquare"})]
    nodes += [Node(stage, {"prompt": stage}) for stage in stages]
    return Graph("g", nodes={node.id: node for node in nodes}, edges=[Edge(a, b) for a, b in pairs])


def reach(graph: Graph, origin: str, forward: bool = True) -> set[str]:
    seen, queue = {origin}, deque([origin])
    while queue:
        current = queue.popleft()
        edges = graph.outgoing(current) if forward else graph.incoming(current)
        for edge in edges:
            other = edge.target if forward else edge.source
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen


def reported(graph: Graph, rules: set[str]) -> set[str]:
    return {d.node_id for d in validate(graph) if d.rule in rules and d.node_id is not None}


@settings(max_examples=200, deadline=None)
@given(pipelines())
def test_exactly_the_nodes_without_a_path_from_start_are_reported_unreachable(graph: Graph) -> None:
    assert reported(graph, UNREACHABLE_RULES) == set(graph.nodes) - reach(graph, "start")


@settings(max_examples=200, deadline=None)
@given(pipelines())
def test_dead_ends_are_exactly_the_reachable_stages_without_an_outgoing_edge(graph: Graph) -> None:
    reachable = reach(graph, "start")
    expected = {n for n in reachable if n != "exit" and not graph.outgoing(n)}
    assert reported(graph, {"dead_end"}) == expected


@settings(max_examples=200, deadline=None)
@given(pipelines())
def test_nodes_reported_as_unable_to_reach_an_exit_really_cannot_and_explain_the_others(graph: Graph) -> None:
    reachable = reach(graph, "start")
    dead_ends = reported(graph, {"dead_end"})
    finishing = reach(graph, "exit", forward=False).union(
        *(reach(graph, d, forward=False) for d in dead_ends)
    )
    stuck = reachable - finishing
    cycles = reported(graph, {"reaches_exit"})
    assert cycles <= stuck
    # What is not reported only leads into what is: every stuck node reaches a reported one.
    assert all(reach(graph, node) & cycles for node in stuck)
