"""Attractor 11.1 (DOT parsing) and the parsing rows of the 11.12 matrix, one named test per item."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_core.graph import load_pipeline, parse_dot
from orchestra_core.model.errors import PipelineLoadError
from orchestra_core.pipeline import prepare_pipeline

LINEAR = """digraph Linear {
    start [shape=Mdiamond]
    A [prompt="first"]
    B [prompt="second"]
    done [shape=Msquare]
    start -> A -> B -> done
}"""


def test_11_1_parser_accepts_the_supported_subset() -> None:
    graph = parse_dot(
        """digraph Branch {
            graph [goal="Implement and validate a feature"]
            rankdir=LR
            node [shape=box, timeout="900s"]
            edge [weight=0]
            start [shape=Mdiamond, label="Start"]
            exit  [shape=Msquare, label="Exit"]
            plan  [label="Plan", prompt="Plan the implementation"];
            gate  [shape=diamond, label="Tests passing?"]
            start -> plan -> gate
            gate -> exit [label="Yes", condition="outcome=success"]
            gate -> plan [label="No", condition="outcome!=success"];
        }"""
    )
    assert list(graph.nodes) == ["start", "exit", "plan", "gate"]
    assert [(e.source, e.target) for e in graph.edges] == [
        ("start", "plan"),
        ("plan", "gate"),
        ("gate", "exit"),
        ("gate", "plan"),
    ]
    assert graph.attrs["rankdir"] == "LR"
    assert graph.nodes["gate"].handler_type == "conditional"


def test_11_1_graph_level_attributes_are_extracted() -> None:
    graph = parse_dot(
        'digraph G { graph [goal="Ship", label="Release"]\n model_stylesheet="* { llm_model: m; }"\n a }'
    )
    assert graph.goal == "Ship"
    assert graph.label == "Release"
    assert graph.model_stylesheet == "* { llm_model: m; }"


def test_11_1_multi_line_node_attribute_blocks() -> None:
    graph = parse_dot(
        """digraph G {
            review_gate [
                shape=hexagon,
                label="Review Changes",
                type="wait.human"
            ]
        }"""
    )
    node = graph.nodes["review_gate"]
    assert (node.shape, node.label, node.type) == ("hexagon", "Review Changes", "wait.human")


def test_11_1_edge_attributes_label_condition_weight() -> None:
    graph = parse_dot('digraph G { a -> b [label="Yes", condition="outcome=success", weight=5] }')
    edge = graph.edges[0]
    assert (edge.label, edge.condition, edge.weight) == ("Yes", "outcome=success", 5)
    assert edge.condition_ast is not None and edge.condition_ast.evaluate(outcome="success")


def test_11_1_chained_edges_produce_one_edge_per_pair_with_shared_attributes() -> None:
    graph = parse_dot('digraph G { A -> B -> C [label="next"] }')
    assert [(e.source, e.target, e.label) for e in graph.edges] == [("A", "B", "next"), ("B", "C", "next")]


def test_11_1_node_and_edge_default_blocks_apply_to_later_declarations() -> None:
    graph = parse_dot(
        """digraph G {
            first
            node [timeout="900s"]
            edge [weight=3]
            second
            third [timeout="1h"]
            first -> second
        }"""
    )
    assert "timeout" not in graph.nodes["first"].attrs
    assert graph.nodes["second"].timeout == 900.0
    assert graph.nodes["third"].timeout == 3600.0
    assert graph.edges[0].weight == 3


def test_11_1_subgraphs_are_flattened_with_scoped_defaults_and_derived_class() -> None:
    graph = parse_dot(
        """digraph G {
            subgraph cluster_loop {
                label = "Loop A"
                node [thread_id="loop-a", timeout="900s"]
                Plan      [label="Plan next step"]
                Implement [label="Implement", timeout="1800s"]
            }
            outside
            Plan -> Implement -> outside
        }"""
    )
    assert set(graph.nodes) == {"Plan", "Implement", "outside"}
    assert graph.nodes["Plan"].thread_id == "loop-a"
    assert graph.nodes["Implement"].timeout == 1800.0
    assert graph.nodes["Plan"].classes == ("loop-a",)
    assert "thread_id" not in graph.nodes["outside"].attrs


def test_11_1_class_attribute_merges_in_stylesheet_attributes() -> None:
    graph = parse_dot(
        """digraph G {
            graph [model_stylesheet=".code { llm_model: claude-opus-4-6; llm_provider: anthropic; }"]
            review_code [shape=box, class="code,critical", prompt="Review the code"]
        }"""
    )
    node = prepare_pipeline(graph).graph.nodes["review_code"]
    assert node.classes == ("code", "critical")
    assert (node.llm_model, node.llm_provider) == ("claude-opus-4-6", "anthropic")


def test_11_1_quoted_and_unquoted_values_both_work() -> None:
    graph = parse_dot('digraph G { a [max_retries=3, timeout=15m, label=Plan, prompt="Do \\"it\\""] }')
    node = graph.nodes["a"]
    assert (node.max_retries, node.timeout, node.label, node.prompt) == (3, 900.0, "Plan", 'Do "it"')


def test_11_1_comments_are_stripped() -> None:
    graph = parse_dot(
        """// leading comment
        digraph G {
            /* block
               comment with a -> b inside */
            a [label="keeps // and /* */ in strings"] // trailing
            a -> b /* inline */ [label="x"]
        }"""
    )
    assert set(graph.nodes) == {"a", "b"}
    assert graph.nodes["a"].label == "keeps // and /* */ in strings"
    assert graph.edges[0].label == "x"


def test_11_12_parse_a_simple_linear_pipeline() -> None:
    graph = parse_dot(LINEAR)
    assert list(graph.nodes) == ["start", "A", "B", "done"]
    assert [(e.source, e.target) for e in graph.edges] == [("start", "A"), ("A", "B"), ("B", "done")]
    assert not prepare_pipeline(graph).errors


def test_11_12_parse_graph_level_goal_and_label() -> None:
    graph = parse_dot('digraph G { goal="Create a script"; label="Smoke" start -> exit }')
    assert (graph.goal, graph.label) == ("Create a script", "Smoke")


def test_11_12_parse_multi_line_node_attributes() -> None:
    graph = parse_dot(
        'digraph G {\n a [\n  label="A",\n  prompt="line one\\nline two",\n  max_retries=2\n ]\n}'
    )
    node = graph.nodes["a"]
    assert (node.label, node.prompt, node.max_retries) == ("A", "line one\nline two", 2)


def test_11_13_smoke_pipeline_parses_and_validates_without_errors() -> None:
    graph = parse_dot(
        """digraph test_pipeline {
            graph [goal="Create a hello world Python script"]
            start       [shape=Mdiamond]
            plan        [shape=box, prompt="Plan how to create a hello world script for: $goal"]
            implement   [shape=box, prompt="Write the code based on the plan", goal_gate=true]
            review      [shape=box, prompt="Review the code for correctness"]
            done        [shape=Msquare]
            start -> plan
            plan -> implement
            implement -> review [condition="outcome=success"]
            implement -> plan   [condition="outcome=fail", label="Retry"]
            review -> done      [condition="outcome=success"]
            review -> implement [condition="outcome=fail", label="Fix"]
        }"""
    )
    prepared = prepare_pipeline(graph)
    assert graph.goal == "Create a hello world Python script"
    assert (len(graph.nodes), len(graph.edges)) == (5, 6)
    assert not prepared.errors
    assert prepared.graph.nodes["plan"].prompt.endswith("for: Create a hello world Python script")


def test_load_pipeline_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.dot"
    path.write_text("digraph G {\n  a -> b\n  c -- d\n}\n", encoding="utf-8")
    with pytest.raises(PipelineLoadError) as caught:
        load_pipeline(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert str(caught.value).startswith(f"{path}:3: ")
