"""Regressions in DOT loading found while building compile, render and the property tests."""

from __future__ import annotations

import pygraphviz

from orchestra_core.graph import parse_dot


def test_a_graphviz_layout_elsewhere_in_the_process_does_not_leak_labels_into_loaded_nodes() -> None:
    drawing = pygraphviz.AGraph(directed=True)
    drawing.add_edge("x", "y")
    drawing.draw(format="svg", prog="dot")  # sets Graphviz's global default node label to \N
    graph = parse_dot('digraph G { work -> next\n literal [label="\\\\N"] }')
    assert dict(graph.nodes["work"].attrs) == {}
    assert dict(graph.nodes["next"].attrs) == {}
    assert graph.nodes["literal"].label == "\\N"
