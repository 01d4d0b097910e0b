"""The DOT reader calls libcgraph through ctypes; where that libcgraph lays out attribute symbols differently
than cgraph.h says, it falls back to pygraphviz's own bindings, and both read the same graph."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestra_core.graph import dot_loader

PIPELINE = """digraph release {
    graph [goal="Ship it", label="Release"]
    node [timeout="15m"]
    start [shape=Mdiamond]
    subgraph cluster_loop { label="Loop A"; plan [prompt="Plan"]; build [shape=parallelogram, tool_command="make"] }
    done [shape=Msquare]
    start -> plan -> build [label="next", weight=2]
    build -> done [condition="outcome=success"]
    build -> plan [condition="outcome!=success", loop_restart=true]
}
"""


BROKEN = "digraph broken {\n  a -> -> b\n}\n"


@pytest.fixture
def fresh_bindings() -> Iterator[None]:
    dot_loader._gv.cache_clear()
    yield
    dot_loader._gv.cache_clear()


def _summary(text: str) -> tuple[object, ...]:
    graph = dot_loader.parse_dot(text)
    nodes = {node_id: dict(node.attrs) for node_id, node in graph.nodes.items()}
    edges = [(edge.source, edge.target, dict(edge.attrs)) for edge in graph.edges]
    return graph.name, dict(graph.attrs), nodes, edges


def test_the_ctypes_binding_reads_attribute_names_here(fresh_bindings: None) -> None:
    assert isinstance(dot_loader._gv(), dot_loader._CGraph)


def test_a_libcgraph_with_another_symbol_layout_falls_back_to_pygraphviz(
    fresh_bindings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = _summary(PIPELINE)
    direct_error = _error(BROKEN)
    dot_loader._gv.cache_clear()
    monkeypatch.setattr(dot_loader, "_reads_attribute_names", lambda gv: False)
    assert isinstance(dot_loader._gv(), dot_loader._PygraphvizCalls)
    assert _summary(PIPELINE) == direct
    assert str(_error(BROKEN)) == str(direct_error)
    assert direct_error.line == 2


def _error(text: str) -> dot_loader.PipelineLoadError:
    with pytest.raises(dot_loader.PipelineLoadError) as raised:
        dot_loader.parse_dot(text)
    return raised.value
