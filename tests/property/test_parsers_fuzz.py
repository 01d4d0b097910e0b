"""Parsers fed arbitrary or mutated text raise only their own documented error types."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.graph import parse_dot, to_dot
from orchestra_core.model.conditions import ConditionSyntaxError, parse_condition
from orchestra_core.model.errors import PipelineLoadError
from orchestra_core.stylesheet import StylesheetSyntaxError, parse_stylesheet
from tests.property.strategies import (
    ANY_TEXT,
    CONDITION_LIKE,
    DOT_ALPHABET,
    DOT_LIKE,
    STYLESHEET_LIKE,
    graphs,
)


def parse_dot_or_load_error(text: str) -> None:
    try:
        parse_dot(text, path="fuzz.dot")
    except PipelineLoadError as error:
        assert error.path == "fuzz.dot"
        assert error.line is None or 1 <= error.line <= text.count("\n") + 2
        assert str(error).startswith("fuzz.dot")


@settings(max_examples=300)
@given(ANY_TEXT)
def test_dot_loader_on_arbitrary_text_raises_only_pipeline_load_error(text: str) -> None:
    parse_dot_or_load_error(text)


@settings(max_examples=300)
@given(st.one_of(DOT_LIKE, DOT_LIKE.map(lambda body: "digraph G {" + body + "}")))
def test_dot_loader_on_dot_like_text_raises_only_pipeline_load_error(text: str) -> None:
    parse_dot_or_load_error(text)


@pytest.mark.slow
@settings(max_examples=100)
@given(graphs(), st.data())
def test_dot_loader_on_mutated_valid_dot_raises_only_pipeline_load_error(
    graph: object, data: st.DataObject
) -> None:
    text = to_dot(graph)  # type: ignore[arg-type]
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 8)))
    insert = data.draw(st.one_of(st.just(""), DOT_ALPHABET, ANY_TEXT.map(lambda t: t[:5])))
    parse_dot_or_load_error(text[:start] + insert + text[end:])


@settings(max_examples=500)
@given(st.one_of(ANY_TEXT, CONDITION_LIKE))
def test_condition_parser_raises_only_condition_syntax_error(text: str) -> None:
    try:
        condition = parse_condition(text)
    except ConditionSyntaxError as error:
        assert 0 <= error.position <= len(text)
        return
    assert parse_condition(condition.render()) == condition


@settings(max_examples=500)
@given(st.one_of(ANY_TEXT, STYLESHEET_LIKE))
def test_stylesheet_parser_raises_only_stylesheet_syntax_error(text: str) -> None:
    try:
        stylesheet = parse_stylesheet(text)
    except StylesheetSyntaxError as error:
        assert 0 <= error.position <= len(text)
        assert error.line == text.count("\n", 0, error.position) + 1 and error.column >= 1
        return
    assert parse_stylesheet(stylesheet.render()) == stylesheet
