"""DOT text a user's editor or hand may produce reads back as the same graph: a UTF-8 byte-order mark,
`"a" + "b"` string concatenation (across lines and comments), values far longer than Graphviz's own limit."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.graph import Graph, Node, dot_writer, parse_dot, to_dot
from orchestra_core.model.quoting import quote_string
from tests.property.strategies import SPECIAL_VALUE, VALUE, graphs

SEPARATORS = st.sampled_from([" + ", "+", "\n  + ", " /* joined */ + ", " + // next\n"])


def same(parsed: Graph, graph: Graph) -> None:
    assert parsed.name == graph.name
    assert {k: dict(n.attrs) for k, n in parsed.nodes.items()} == {
        k: dict(n.attrs) for k, n in graph.nodes.items()
    }
    assert [(e.source, e.target, dict(e.attrs)) for e in parsed.edges] == [
        (e.source, e.target, dict(e.attrs)) for e in graph.edges
    ]


@settings(max_examples=100)
@given(graphs(), SEPARATORS, st.integers(0, 40))
def test_every_string_written_as_a_concatenation_reads_back_whole(graph: Graph, sep: str, cut: int) -> None:
    def split_quote(value: str) -> str:
        at = min(cut, len(value))
        return quote_string(value[:at]) + sep + quote_string(value[at:])

    with mock.patch.object(dot_writer, "quote", split_quote):
        text = to_dot(graph)
    same(parse_dot(text, path="concat.dot"), graph)


@settings(max_examples=50)
@given(graphs())
def test_a_leading_byte_order_mark_is_ignored(graph: Graph) -> None:
    same(parse_dot("\ufeff" + to_dot(graph), path="bom.dot"), graph)


@settings(max_examples=20, deadline=None)
@given(st.one_of(VALUE, SPECIAL_VALUE), st.integers(500, 3000))
def test_values_longer_than_graphviz_takes_read_back_whole(piece: str, times: int) -> None:
    value = piece * times  # up to 90,000 characters of any text, quotes and backslashes included
    graph = Graph(name="g", nodes={"a": Node("a", {"prompt": value, "label": value[:5000]})}, edges=[])
    same(parse_dot(to_dot(graph), path="long.dot"), graph)
