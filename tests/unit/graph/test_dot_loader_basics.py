"""DOT loading: the supported subset, Graphviz quirks handled, and rejections with lines."""

from __future__ import annotations

import pytest

from orchestra_core.graph import load_pipeline, parse_dot, to_dot
from orchestra_core.model.errors import PipelineLoadError


def test_qualified_keys_bare_values_and_escapes() -> None:
    graph = parse_dot(
        'digraph G {\n  graph [goal="say \\"hi\\"\\nthen \\\\ go"]\n'
        "  a [agent.role=reviewer, timeout=900s, llm_model=claude-3.5:latest]\n}"
    )
    node = graph.nodes["a"]
    assert graph.goal == 'say "hi"\nthen \\ go'
    assert node.agent_role == "reviewer"
    assert node.timeout == 900.0
    assert node.llm_model == "claude-3.5:latest"


def test_defaults_apply_in_order_and_scope_and_subgraph_classes() -> None:
    graph = parse_dot(
        """digraph G {
          early
          node [shape=box, timeout="900s"]
          subgraph cluster_loop {
            label = "Loop A"
            node [thread_id="loop-a"]
            plan
            implement [timeout="1800s"]
          }
          after
        }"""
    )
    assert "timeout" not in graph.nodes["early"].attrs
    assert graph.nodes["plan"].thread_id == "loop-a"
    assert graph.nodes["plan"].timeout == 900.0
    assert graph.nodes["implement"].timeout == 1800.0
    assert graph.nodes["plan"].classes == ("loop-a",)
    assert graph.nodes["after"].classes == ()
    assert "thread_id" not in graph.nodes["after"].attrs


def test_edges_keep_declaration_order_and_chains_share_attributes() -> None:
    graph = parse_dot(
        'digraph G { z; a -> z [label="1"]; a -> b -> c [label="next", weight=2]; a -> z [label="3"] }'
    )
    assert [(e.source, e.target, e.label) for e in graph.outgoing("a")] == [
        ("a", "z", "1"),
        ("a", "b", "next"),
        ("a", "z", "3"),
    ]
    assert graph.outgoing("b")[0].weight == 2


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("graph { a -- b }", 1, "undirected graphs"),
        ("strict digraph { a }", 1, "strict"),
        ("digraph { a }\ndigraph { b }", 2, "one graph"),
        ("digraph {\n a -- b\n}", 2, "'--'"),
        ('digraph {\n\n "my node" -> b }', 3, "not an identifier"),
        ("digraph {\n a -> ;\n}", 2, "syntax error"),
        ('digraph {\n a [label=<b>x</b>]\n}', 2, "HTML"),
        ('digraph {\n a [label="open\n}', 2, "unterminated string"),
    ],
)
def test_rejections_name_the_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(PipelineLoadError) as caught:
        parse_dot(text, path="p.dot")
    assert caught.value.line == line
    assert fragment in str(caught.value)
    assert str(caught.value).startswith(f"p.dot:{line}:")


def test_unreadable_file(tmp_path) -> None:
    with pytest.raises(PipelineLoadError, match="file not found"):
        load_pipeline(tmp_path / "missing.dot")


def test_writer_round_trip() -> None:
    graph = parse_dot('digraph G { graph [goal="g"]; node [shape=box]; a -> b [condition="outcome=success"] }')
    assert parse_dot(to_dot(graph)) == graph
