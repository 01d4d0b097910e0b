"""Pipelines at Graphviz's limits are parsed whole or refused naming the file, never truncated."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orchestra_core.graph.dot_lexer import MAX_CHAIN_OPERANDS, MAX_NESTING
from orchestra_core.graph.dot_loader import MAX_NODE_ID_LENGTH, parse_dot, read_pipeline_text
from orchestra_core.model.errors import PipelineLoadError
from orchestra_core.model.input_files import MAX_PIPELINE_BYTES


def chain(count: int) -> str:
    return " -> ".join(f"n{index}" for index in range(count))


@pytest.mark.parametrize("count", [MAX_CHAIN_OPERANDS, MAX_CHAIN_OPERANDS + 1, 2 * MAX_CHAIN_OPERANDS, 5000])
def test_long_edge_chains_are_parsed_whole_with_their_attributes(count: int) -> None:
    text = f'digraph G {{\n  edge [weight=2]\n  {chain(count)} [label="go on", color=red,\n   style=bold]\n  after\n}}\n'
    graph = parse_dot(text, path="chain.dot")
    assert len(graph.nodes) == count + 1 and "after" in graph.nodes
    assert [(edge.source, edge.target) for edge in graph.edges] == [
        (f"n{index}", f"n{index + 1}") for index in range(count - 1)
    ]
    assert {tuple(sorted(edge.attrs.items())) for edge in graph.edges} == {
        (("color", "red"), ("label", "go on"), ("style", "bold"), ("weight", "2"))
    }


def test_a_long_chain_keeps_the_lines_of_later_statements() -> None:
    text = f"digraph G {{\n  {chain(5000)}\n  bad -- x\n}}\n"
    with pytest.raises(PipelineLoadError) as caught:
        parse_dot(text, path="chain.dot")
    assert caught.value.line == 3


def test_a_chain_graphviz_gives_up_on_is_refused_naming_the_file_not_truncated() -> None:
    subgraphs = " -> ".join(f"{{n{index}}}" for index in range(5000))
    with pytest.raises(PipelineLoadError) as caught:
        parse_dot(f"digraph G {{\n  start -> {subgraphs}\n  after\n}}\n", path="deep.dot")
    assert caught.value.path == "deep.dot" and caught.value.line == 2
    assert "ran out of stack" in caught.value.detail


def test_a_chain_going_on_into_a_subgraph_is_not_split_and_not_truncated() -> None:
    text = f"digraph G {{\n  {chain(5000)} -> {{x y}}\n}}\n"
    with pytest.raises(PipelineLoadError, match="ran out of stack"):
        parse_dot(text, path="c.dot")


def test_deep_nesting_is_refused_with_the_line() -> None:
    depth = MAX_NESTING + 1
    with pytest.raises(PipelineLoadError, match=f"nest more than {MAX_NESTING} levels") as caught:
        parse_dot("digraph G {\n" + "subgraph { " * depth + "a" + " }" * depth + "\n}", path="n.dot")
    assert caught.value.line == 2


def test_values_longer_than_graphviz_strings_are_kept_whole() -> None:
    value = 'say "hi" \\ é ✓ 😀 ' * 3000  # about 60,000 characters, 16 KiB is Graphviz's string limit
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    graph = parse_dot(f'digraph G {{ a [prompt="{escaped}", label=x{"y" * 20000}] }}', path="long.dot")
    assert graph.nodes["a"].attrs["prompt"] == value
    assert graph.nodes["a"].attrs["label"] == "x" + "y" * 20000


@pytest.mark.parametrize("length", [MAX_NODE_ID_LENGTH + 1, 100_000])
def test_over_long_node_ids_are_refused_with_the_line(length: int) -> None:
    node = "n" * length
    with pytest.raises(PipelineLoadError, match=f"is {length} characters long; the limit is {MAX_NODE_ID_LENGTH}") as caught:
        parse_dot(f"digraph G {{\n  start -> {node}\n}}", path="ids.dot")
    assert caught.value.line == 2


def test_a_node_id_at_the_limit_is_fine() -> None:
    node = "n" * MAX_NODE_ID_LENGTH
    assert node in parse_dot(f"digraph G {{ start -> {node} }}").nodes


def test_a_partial_graph_from_graphviz_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestra_core.graph import dot_loader

    real = dot_loader._agread

    def drop_last_edge(gv: object, data: bytes) -> object:
        return real(gv, data.replace(b'"b" -> "c"', b'"b"'))

    monkeypatch.setattr(dot_loader, "_agread", drop_last_edge)
    with pytest.raises(PipelineLoadError, match="incomplete graph: the edge b -> c is missing"):
        parse_dot("digraph G { a -> b\n b -> c }", path="p.dot")


@pytest.mark.parametrize("special", ["fifo", "device", "directory"])
def test_pipeline_files_that_are_not_regular_are_refused_without_blocking(tmp_path: Path, special: str) -> None:
    path = {"fifo": tmp_path / "p.dot", "device": Path("/dev/zero"), "directory": tmp_path}[special]
    if special == "fifo":
        os.mkfifo(path)
    started = time.monotonic()
    with pytest.raises(PipelineLoadError, match="not a regular file") as caught:
        read_pipeline_text(path)
    assert caught.value.path == str(path) and time.monotonic() - started < 10  # blocking would never end


def test_an_oversized_pipeline_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.dot"
    path.write_bytes(b"digraph G { a }\n//" + b"x" * MAX_PIPELINE_BYTES)
    with pytest.raises(PipelineLoadError, match=r"big\.dot: larger than the limit of 4 MiB"):
        read_pipeline_text(path)


def test_a_non_utf8_pipeline_names_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "p.dot"
    path.write_bytes(b'digraph G {\n  a [label="caf\xe9"]\n}\n')
    with pytest.raises(PipelineLoadError) as caught:
        read_pipeline_text(path)
    assert caught.value.line == 2 and "byte 0xe9 at offset 27" in caught.value.detail


def test_an_over_long_graph_name_is_refused() -> None:
    with pytest.raises(PipelineLoadError, match=f"the graph name is 2000 characters long; the limit is {MAX_NODE_ID_LENGTH}"):
        parse_dot(f"digraph {'G' * 2000} {{ a }}", path="g.dot")
