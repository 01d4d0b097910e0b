"""Generated conditions and stylesheets survive render -> parse unchanged; styling respects specificity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.graph import Node
from orchestra_core.model.conditions import Clause, Condition, parse_condition
from orchestra_core.stylesheet import (
    PROPERTIES,
    Declaration,
    Selector,
    StyleRule,
    Stylesheet,
    parse_stylesheet,
)

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
CONDITION_KEY = st.one_of(
    st.sampled_from(["outcome", "preferred_label"]),
    st.from_regex(r"context\.[A-Za-z_][A-Za-z0-9_-]{0,5}(\.[A-Za-z_][A-Za-z0-9_]{0,4})?", fullmatch=True),
    NAME,
)
CLAUSE = st.one_of(
    st.builds(Clause, CONDITION_KEY, st.sampled_from(["=", "!="]), TEXT),
    st.builds(Clause, CONDITION_KEY, st.just("truthy")),
)
SELECTOR = st.one_of(
    st.just(Selector("universal")),
    st.builds(Selector, st.just("shape"), NAME),
    st.builds(Selector, st.just("class"), st.from_regex(r"[a-z0-9_-]{1,8}", fullmatch=True)),
    st.builds(Selector, st.just("id"), NAME),
)
DECLARATION = st.builds(Declaration, st.sampled_from(PROPERTIES), TEXT.filter(bool))
STYLESHEET = st.builds(
    Stylesheet, st.lists(st.builds(StyleRule, SELECTOR, st.lists(DECLARATION, max_size=3)), max_size=6)
)


@given(st.lists(CLAUSE, min_size=1, max_size=4).map(lambda clauses: Condition(tuple(clauses))))
def test_condition_render_parses_back_to_the_same_condition(condition: Condition) -> None:
    assert parse_condition(condition.render()) == condition


@given(STYLESHEET)
def test_stylesheet_render_parses_back_to_the_same_stylesheet(stylesheet: Stylesheet) -> None:
    assert parse_stylesheet(stylesheet.render()) == stylesheet


@given(
    STYLESHEET,
    NAME,
    st.sampled_from(["box", "diamond", "hexagon"]),
    st.lists(st.from_regex(r"[a-z0-9_-]{1,8}", fullmatch=True), max_size=3),
)
def test_each_property_comes_from_the_most_specific_then_latest_matching_rule(
    stylesheet: Stylesheet, node_id: str, shape: str, classes: list[str]
) -> None:
    node = Node(node_id, {"shape": shape, "class": ",".join(classes)})
    expected: dict[str, tuple[int, int, str]] = {}
    for order, rule in enumerate(stylesheet.rules):
        if not rule.selector.matches(node):
            continue
        for declaration in rule.declarations:
            rank = (rule.selector.specificity, order, declaration.value)
            if declaration.property not in expected or rank[:2] >= expected[declaration.property][:2]:
                expected[declaration.property] = rank
    assert stylesheet.properties_for(node) == {key: value for key, (_, _, value) in expected.items()}
