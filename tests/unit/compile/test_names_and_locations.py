"""Mistyped attribute keys and edge ends are named with what was probably meant; a diagnostic names its
location once (the rule's own "node a: " prefix is not repeated by the output)."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.validation import Diagnostic, ValidationError, validate
from orchestra_core.validation.names import did_you_mean


def diagnostics(body: str, rule: str) -> list[Diagnostic]:
    graph = parse_dot("digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; " + body + " }")
    return [d for d in validate(graph) if d.rule == rule]


def test_an_unknown_node_attribute_is_a_warning_with_the_closest_key() -> None:
    [found] = diagnostics('a [promt="x", color=red, fontsize=12]; start -> a -> exit', "attribute_known")
    assert (found.severity.value, found.node_id) == ("warning", "a")
    assert found.message == "unknown attribute 'promt' is ignored; did you mean 'prompt'?"
    assert found.fix == "rename it to prompt"


def test_an_unknown_edge_attribute_and_one_like_nothing() -> None:
    found = diagnostics(
        'a [prompt="x"]; start -> a [condtion="outcome=success"]; a -> exit [zzz=1]', "attribute_known"
    )
    assert [(d.edge, d.message) for d in found] == [
        (("start", "a"), "unknown attribute 'condtion' is ignored; did you mean 'condition'?"),
        (("a", "exit"), "unknown attribute 'zzz' is ignored"),
    ]
    assert found[1].fix and "docs/pipelines.md" in found[1].fix


def test_documented_orchestra_and_graphviz_attributes_are_known() -> None:
    body = (
        'a [prompt="x", agent.role="r", backend=simulate, tool_command="true", color=red, style=filled, '
        'timeout=10s, class="c", agent.max_turns=3]; start -> a [label="go", weight=2, color=blue, penwidth=2]; '
        "a -> exit"
    )
    assert diagnostics(body, "attribute_known") == []


def test_a_custom_handlers_node_may_carry_attributes_of_its_own() -> None:
    assert diagnostics('a [type="my.handler", my_setting=1]; start -> a -> exit', "attribute_known") == []


def test_an_edge_end_declared_only_by_edges_that_looks_like_a_node_says_so() -> None:
    [found] = diagnostics(
        'review [prompt="x"]; start -> review -> revew; revew -> exit', "edge_target_declared"
    )
    assert (found.severity.value, found.edge) == ("warning", ("review", "revew"))
    assert "did you mean 'review'?" in found.message and found.message.startswith("revew is declared nowhere")


@pytest.mark.parametrize(
    "body",
    [
        'a [prompt="x"]; b [prompt="y"]; start -> a -> b -> exit',  # both declared
        'a [prompt="x"]; start -> a -> deploy_to_production -> exit',  # looks like nothing
        'aa [prompt="x"]; start -> {aa ab} -> exit',  # named in a group: declared there
    ],
)
def test_no_lookalike_warning_without_a_lookalike(body: str) -> None:
    assert diagnostics(body, "edge_target_declared") == []


def test_did_you_mean_ignores_case_and_needs_closeness() -> None:
    assert did_you_mean("Prompt", ["prompt", "label"]) == "prompt"
    assert did_you_mean("xyz", ["prompt", "label"]) is None


@pytest.mark.parametrize(
    ("message", "node_id", "edge", "stored"),
    [
        ("node a: unknown backend 'x'", "a", None, "unknown backend 'x'"),
        ("node a has no edges", "a", None, "has no edges"),
        ("edge a -> b: condition bad", None, ("a", "b"), "condition bad"),
        ("node ab: other node", "a", None, "node ab: other node"),  # another node: kept
        ("graph: kept", None, None, "graph: kept"),
    ],
)
def test_a_message_does_not_repeat_its_location(
    message: str, node_id: str | None, edge: tuple[str, str] | None, stored: str
) -> None:
    assert Diagnostic("r", "error", message, node_id=node_id, edge=edge).message == stored


def test_every_built_in_rule_names_its_location_once() -> None:
    graph = parse_dot(
        "digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; a [max_retries=x, fidelity=bad, "
        'reasoning_effort=huge, retry_target=nowhere, goal_gate=true, shape=blob, prompt="$goal"]; '
        'b; orphan [prompt="o"]; start -> a [condition="outcome=="]; a -> b -> exit; exit -> a }'
    )
    found = validate(graph)
    assert len(found) >= 10
    for diagnostic in found:
        if diagnostic.location != "graph":
            assert not diagnostic.message.startswith(diagnostic.location), diagnostic
    error = ValidationError(found)
    assert "condition_syntax: edge start -> a: condition 'outcome==' does not parse" in str(error)
