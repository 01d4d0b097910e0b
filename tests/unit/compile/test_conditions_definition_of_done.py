"""Attractor 11.9 (condition expressions) and the 10.x semantics, one named test per item."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.model.conditions import ConditionSyntaxError, evaluate_condition, parse_condition
from orchestra_core.model.context import Context


def holds(text: str, outcome: str = "", preferred_label: str = "", **context: object) -> bool:
    return evaluate_condition(text, outcome=outcome, preferred_label=preferred_label, context=context)


def test_11_9_equals_compares_strings() -> None:
    assert holds("outcome=success", outcome="success")
    assert not holds("outcome=success", outcome="fail")


def test_11_9_not_equals() -> None:
    assert holds("outcome!=success", outcome="fail")
    assert not holds("outcome!=success", outcome="success")


def test_11_9_and_conjunction_needs_every_clause() -> None:
    text = "outcome=success && context.tests_passed=true && context.branch!=main"
    assert holds(text, outcome="success", tests_passed=True, branch="feature")
    assert not holds(text, outcome="success", tests_passed=False, branch="feature")
    assert not holds(text, outcome="success", tests_passed=True, branch="main")


def test_11_9_outcome_resolves_to_the_status() -> None:
    for status in ("success", "partial_success", "retry", "fail"):
        assert holds(f"outcome={status}", outcome=status)


def test_11_9_preferred_label_resolves_to_the_outcome_label() -> None:
    assert holds("preferred_label=Fix", preferred_label="Fix")
    assert not holds("preferred_label=Fix", preferred_label="fix")  # case-sensitive


def test_11_9_context_values_resolve_and_missing_keys_are_empty() -> None:
    assert holds("context.loop_state=exhausted", **{"context.loop_state": "exhausted"})
    assert holds("context.loop_state!=exhausted")
    assert not holds("context.loop_state=exhausted")
    assert holds('context.missing=""')


def test_context_prefix_falls_back_to_the_unprefixed_key() -> None:
    assert holds("context.tests=passed", tests="passed")
    assert holds("context.tests=passed", **{"context.tests": "passed", "tests": "failed"})


def test_plain_keys_are_looked_up_directly() -> None:
    assert holds("tests=passed", tests="passed")


def test_11_9_empty_condition_is_always_true() -> None:
    assert holds("")
    assert holds("   ")
    edge = parse_dot("digraph G { a -> b }").edges[0]
    assert edge.condition_ast is None and edge.condition_error is None


def test_bare_key_truthiness() -> None:
    assert holds("context.ready", ready="yes")
    assert not holds("context.ready")
    assert not holds("context.ready", ready=False)
    assert not holds("context.ready", ready="0")


def test_quoted_literals_with_spaces_and_escapes() -> None:
    assert holds('context.msg="all good"', msg="all good")
    assert holds('context.msg="say \\"hi\\""', msg='say "hi"')
    assert holds('context.msg!="a && b"', msg="x")


def test_values_are_stringified_for_comparison() -> None:
    assert holds("context.count=3", count=3)
    assert holds("context.flag=true", flag=True)


def test_evaluates_against_the_run_context() -> None:
    context = Context()
    context.set("tests_passed", "true")
    assert evaluate_condition(
        "outcome=success && context.tests_passed=true", outcome="success", context=context
    )


def test_conditions_are_parsed_once_when_the_edge_is_built() -> None:
    edge = parse_dot('digraph G { a -> b [condition="outcome=success"] }').edges[0]
    assert edge.condition_ast is edge.condition_ast
    assert edge.condition_ast is not None and edge.condition_ast.render() == "outcome=success"


@pytest.mark.parametrize(
    "text",
    ["outcome==success", "outcome=", "&& outcome=success", "outcome=success &&", "a b", '"x"=y', 'x="open'],
)
def test_malformed_conditions_raise_condition_syntax_error(text: str) -> None:
    with pytest.raises(ConditionSyntaxError) as caught:
        parse_condition(text)
    assert 0 <= caught.value.position <= len(text)
    assert f"column {caught.value.position + 1}" in str(caught.value)
