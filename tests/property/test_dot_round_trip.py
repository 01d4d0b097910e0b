"""Generated graphs survive Graph -> to_dot -> parse_dot unchanged."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from orchestra_core.graph import Graph, parse_dot, to_dot
from tests.property.strategies import graphs


@pytest.mark.slow
@settings(max_examples=150)
@given(graphs())
def test_graph_to_dot_and_back_is_unchanged(graph: Graph) -> None:
    text = to_dot(graph)
    parsed = parse_dot(text)
    assert parsed.name == graph.name
    assert dict(parsed.attrs) == dict(graph.attrs)
    assert list(parsed.nodes) == list(graph.nodes)
    assert {k: dict(n.attrs) for k, n in parsed.nodes.items()} == {
        k: dict(n.attrs) for k, n in graph.nodes.items()
    }
    assert [(e.source, e.target, dict(e.attrs)) for e in parsed.edges] == [
        (e.source, e.target, dict(e.attrs)) for e in graph.edges
    ]
    assert parsed == graph
