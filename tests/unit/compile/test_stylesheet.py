"""Attractor 11.10 and section 8: the model stylesheet, its errors and its application."""

from __future__ import annotations

import pytest

from orchestra_core.graph import Graph, Node, parse_dot
from orchestra_core.model.errors import OrchestraError
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.stylesheet import (
    Declaration,
    Selector,
    StyleRule,
    StylesheetSyntaxError,
    parse_stylesheet,
)


def styled(stylesheet: str, body: str) -> Graph:
    escaped = stylesheet.replace("\\", "\\\\").replace('"', '\\"')
    return prepare_pipeline(parse_dot(f'digraph G {{ model_stylesheet="{escaped}"\n{body} }}')).graph


def model_of(graph: Graph, node_id: str) -> str:
    return graph.nodes[node_id].llm_model


def test_11_10_stylesheet_is_parsed_from_the_graph_attribute() -> None:
    graph = styled("* { llm_model: base; }", "a")
    assert model_of(graph, "a") == "base"


def test_11_10_shape_selector() -> None:
    graph = styled(
        'box { llm_model: "claude-opus-4-6" } hexagon { llm_model: human-ish }', "a\nb [shape=hexagon]"
    )
    assert (model_of(graph, "a"), model_of(graph, "b")) == ("claude-opus-4-6", "human-ish")


def test_11_10_class_selector() -> None:
    graph = styled('.fast { llm_model: "gemini-3-flash-preview" }', 'a [class="slow,fast"]\nb')
    assert (model_of(graph, "a"), model_of(graph, "b")) == ("gemini-3-flash-preview", "")


def test_11_10_id_selector() -> None:
    graph = styled('#review { reasoning_effort: "high" }', "review\nother")
    assert graph.nodes["review"].attrs["reasoning_effort"] == "high"
    assert "reasoning_effort" not in graph.nodes["other"].attrs


def test_11_10_specificity_universal_shape_class_id() -> None:
    sheet = "#n4 { llm_model: id; } .c { llm_model: class; } box { llm_model: shape; } * { llm_model: any; }"
    graph = styled(sheet, "n1 [shape=diamond]\nn2\nn3 [class=c]\nn4 [class=c]")
    assert [model_of(graph, n) for n in ("n1", "n2", "n3", "n4")] == ["any", "shape", "class", "id"]


def test_later_rule_wins_at_equal_specificity() -> None:
    graph = styled(
        ".a { llm_model: first; } .b { llm_model: second; } .a { llm_provider: p; }", 'n [class="b,a"]'
    )
    assert (model_of(graph, "n"), graph.nodes["n"].llm_provider) == ("second", "p")


def test_11_10_explicit_node_attributes_override_the_stylesheet() -> None:
    graph = styled("#n { llm_model: sheet; llm_provider: sheetco; }", "n [llm_model=mine]")
    assert (model_of(graph, "n"), graph.nodes["n"].llm_provider) == ("mine", "sheetco")


def test_node_defaults_count_as_explicit_attributes() -> None:
    graph = styled("* { llm_model: sheet; }", "node [llm_model=default]\nn")
    assert model_of(graph, "n") == "default"


def test_subgraph_derived_class_is_selectable() -> None:
    graph = styled(".loop-a { llm_model: looper; }", 'subgraph cluster_x { label="Loop A"; inside } outside')
    assert (model_of(graph, "inside"), model_of(graph, "outside")) == ("looper", "")


def test_spec_example_of_section_8_6() -> None:
    graph = styled(
        """
        * { llm_model: claude-sonnet-4-5; llm_provider: anthropic; }
        .code { llm_model: claude-opus-4-6; llm_provider: anthropic; }
        #critical_review { llm_model: gpt-5.2; llm_provider: openai; reasoning_effort: high; }
        """,
        'plan [class="planning"]\nimplement [class="code"]\ncritical_review [class="code"]',
    )
    assert model_of(graph, "plan") == "claude-sonnet-4-5"
    assert model_of(graph, "implement") == "claude-opus-4-6"
    review = graph.nodes["critical_review"]
    assert (review.llm_model, review.llm_provider, review.reasoning_effort) == ("gpt-5.2", "openai", "high")


def test_parse_accepts_comments_quotes_and_optional_semicolons() -> None:
    sheet = parse_stylesheet(
        '/* defaults */ * { llm_model: \'a b\'; llm_provider : "x\\"y" }\n'
        "#n{reasoning_effort:low;;}  box {}  .c-1 { llm_model: openrouter/meta:free /* why */ ; }"
    )
    assert sheet.rules == (
        StyleRule(
            Selector("universal"), [Declaration("llm_model", "a b"), Declaration("llm_provider", 'x"y')]
        ),
        StyleRule(Selector("id", "n"), [Declaration("reasoning_effort", "low")]),
        StyleRule(Selector("shape", "box"), []),
        StyleRule(Selector("class", "c-1"), [Declaration("llm_model", "openrouter/meta:free")]),
    )
    assert parse_stylesheet(sheet.render()) == sheet


def test_empty_or_comment_only_stylesheet_has_no_rules() -> None:
    assert parse_stylesheet("").rules == ()
    assert parse_stylesheet("  /* nothing */ \n").rules == ()


@pytest.mark.parametrize(
    ("text", "line", "column", "detail"),
    [
        (
            "* { modle: x; }",
            1,
            5,
            "unknown property 'modle'; allowed: llm_model, llm_provider, reasoning_effort",
        ),
        ("* { llm_model x }", 1, 15, "expected ':' after property 'llm_model'"),
        ("* { llm_model: ; }", 1, 16, "expected a value for 'llm_model'"),
        ('* { llm_model: ""; }', 1, 16, "empty value for 'llm_model'"),
        ("* { llm_model: a b }", 1, 18, "expected ';' or '}' after 'llm_model''s value"),
        ("*\n{ llm_model: a;", 2, 1, "'{' of rule '*' is never closed"),
        ("box llm_model: a", 1, 5, "expected '{' after selector 'box'"),
        ("a, b { llm_model: x }", 1, 2, "selector lists are not supported; write one rule per selector"),
        ("{ llm_model: x }", 1, 1, "expected a selector ('*', a shape, '.class' or '#node_id'), found '{'"),
        (". { }", 1, 2, "expected a class name after '.'"),
        ("#1 { }", 1, 2, "expected a node id after '#'"),
        ('* { llm_model: "open }', 1, 16, "unterminated string"),
        ("* { /* open", 1, 5, "unterminated /* comment"),
    ],
)
def test_syntax_errors_name_line_column_and_problem(text: str, line: int, column: int, detail: str) -> None:
    with pytest.raises(StylesheetSyntaxError) as caught:
        parse_stylesheet(text)
    error = caught.value
    assert isinstance(error, OrchestraError)
    assert (error.line, error.column, error.detail) == (line, column, detail)
    assert str(error) == f"model_stylesheet line {line}, column {column}: {detail}"


def test_bad_stylesheet_leaves_nodes_unstyled_and_is_reported() -> None:
    prepared = prepare_pipeline(parse_dot('digraph G { model_stylesheet="* { llm_model: a; } oops"\n n }'))
    assert "llm_model" not in prepared.graph.nodes["n"].attrs
    assert [d.rule for d in prepared.errors if d.rule == "stylesheet_syntax"] == ["stylesheet_syntax"]


def test_properties_for_and_selector_matching() -> None:
    sheet = parse_stylesheet("box { llm_model: b; } .x { llm_provider: p; }")
    assert sheet.properties_for(Node("n", {"class": "x"})) == {"llm_model": "b", "llm_provider": "p"}
    assert sheet.properties_for(Node("n", {"shape": "diamond"})) == {}
    assert Selector("class", "x").specificity == 2 and Selector("universal").render() == "*"
