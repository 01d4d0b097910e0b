"""DOT a new user writes: a byte-order mark, `"a" + "b"`, very long strings work; a stray `+` is named."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.model.errors import PipelineLoadError

BASE = "digraph g {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  a [prompt=%s]\n  start -> a -> exit\n}\n"


def prompt_of(text: str) -> str:
    return parse_dot(text, path="p.dot").nodes["a"].prompt


def test_a_utf8_byte_order_mark_is_skipped_and_lines_still_count_from_one() -> None:
    assert prompt_of("\ufeff" + BASE % '"hi"') == "hi"
    with pytest.raises(PipelineLoadError) as raised:
        parse_dot("\ufeffdigraph g {\n  a -- b\n}\n", path="p.dot")
    assert raised.value.line == 2


def test_quoted_strings_joined_with_plus_are_one_string() -> None:
    assert prompt_of(BASE % '"Review " + "the \\"diff\\""') == 'Review the "diff"'
    assert prompt_of(BASE % '"one" +\n    "two" /* c */ + // more\n "three"') == "onetwothree"
    graph = parse_dot(BASE.replace("start -> a", '"st" + "art" -> a') % '"x"', path="p.dot")
    assert [(edge.source, edge.target) for edge in graph.edges] == [("start", "a"), ("a", "exit")]


def test_line_numbers_after_a_multi_line_concatenation_stay_right() -> None:
    text = BASE % '"one" +\n "two"' + ""
    with pytest.raises(PipelineLoadError) as raised:
        parse_dot(text.replace("start -> a -> exit", "start -> a -> exit\n  x -- y"), path="p.dot")
    assert raised.value.line == 7


def test_a_plus_outside_strings_says_what_and_where() -> None:
    with pytest.raises(PipelineLoadError) as raised:
        parse_dot(BASE % "review + diff", path="p.dot")
    assert raised.value.line == 4
    assert str(raised.value) == (
        "p.dot:4: '+' outside a string: '+' joins double-quoted strings only, as in \"first part\" + \"second part\""
    )


@pytest.mark.parametrize("size", [16_384, 200_000])
def test_strings_longer_than_graphviz_takes_are_read_whole(size: int) -> None:
    value = ('a "quoted" \\ back\\slash é ' * (size // 25 + 1))[:size]
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    assert prompt_of(BASE % f'"{escaped}"') == value
