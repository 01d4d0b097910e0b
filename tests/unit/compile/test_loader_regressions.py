"""Regressions in DOT loading found while building compile, render and the property tests."""

from __future__ import annotations

import pygraphviz
import pytest

from orchestra_core.graph import parse_dot, to_dot
from orchestra_core.model.errors import PipelineLoadError


def test_a_graphviz_layout_elsewhere_in_the_process_does_not_leak_labels_into_loaded_nodes() -> None:
    drawing = pygraphviz.AGraph(directed=True)
    drawing.add_edge("x", "y")
    drawing.draw(format="svg", prog="dot")  # sets Graphviz's global default node label to \N
    graph = parse_dot('digraph G { work -> next\n literal [label="\\\\N"] }')
    assert dict(graph.nodes["work"].attrs) == {}
    assert dict(graph.nodes["next"].attrs) == {}
    assert graph.nodes["literal"].label == "\\N"


def test_node_ids_that_are_dot_keywords_round_trip_through_to_dot() -> None:
    graph = parse_dot('digraph G { "node" -> "Graph" [label=x]\n "edge" [prompt=p] }')
    assert list(graph.nodes) == ["node", "Graph", "edge"]
    assert parse_dot(to_dot(graph)) == graph


def test_an_edge_attribute_named_key_stays_an_attribute_and_keeps_parallel_edges() -> None:
    graph = parse_dot("digraph G { key=top\n a [key=1]\n a -> b [key=x]\n a -> b [key=x] }")
    assert graph.attrs["key"] == "top" and graph.nodes["a"].attrs["key"] == "1"
    assert [dict(edge.attrs) for edge in graph.edges] == [{"key": "x"}, {"key": "x"}]
    assert parse_dot(to_dot(graph)) == graph


@pytest.mark.parametrize("text", ['digraph G { "" }', 'digraph G { "" -> a }'])
def test_an_empty_node_id_is_a_load_error_not_a_crash(text: str) -> None:
    with pytest.raises(PipelineLoadError, match="node id '' is not an identifier"):
        parse_dot(text)


def test_an_unterminated_quote_cannot_pair_up_with_a_later_one() -> None:
    with pytest.raises(PipelineLoadError, match="unterminated string") as caught:
        parse_dot('digraph G {"d\\n}')
    assert caught.value.line == 1


def test_private_use_characters_are_ordinary_text() -> None:
    graph = parse_dot('digraph G { a [label="\ue000 icon \ue0a0"] }')
    assert graph.nodes["a"].label == "\ue000 icon \ue0a0"
