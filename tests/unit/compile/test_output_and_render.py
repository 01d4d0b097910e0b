"""Shared CLI output helpers and the graph renderer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from orchestra_adapters.render import RenderError, render_format, render_graph
from orchestra_adapters.render.graph_renderer import build_drawing
from orchestra_cli.output import (
    color_disabled,
    diagnostic_json,
    diagnostics_summary,
    format_columns,
    make_console,
    print_diagnostics,
    print_json,
    print_table,
)
from orchestra_core.graph import parse_dot
from orchestra_core.validation import Diagnostic

GRAPH = parse_dot(
    """digraph Demo {
        label="Demo \\\\ pipeline"
        start [shape=Mdiamond]
        plan [label="Plan\\nit", llm_model=opus]
        ask [shape=hexagon, label="Approve?"]
        custom [type=deploy]
        exit [shape=Msquare]
        start -> plan -> ask
        ask -> exit [label="[A] Approve", condition="preferred_label=Approve"]
        ask -> custom -> exit
    }"""
)


def test_format_columns_aligns_every_column_but_the_last() -> None:
    lines = format_columns(["a", "bb", "c"], [["xxx", "y", "long text"], ["z", "multi\nline", "end"]])
    assert lines == ["a    bb          c", "xxx  y           long text", "z    multi line  end"]


def test_print_table_is_plain_text_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    print_table(["rule", "message"], [["r1", "[bold]not markup[/bold]"]], title="Findings")
    assert capsys.readouterr().out == "Findings\nrule  message\nr1    [bold]not markup[/bold]\n"


def test_print_json_keeps_unicode_readable() -> None:
    stream = io.StringIO()
    print_json({"goal": "déployer ✓"}, stream)
    assert stream.getvalue() == '{\n  "goal": "déployer ✓"\n}\n'
    assert json.loads(stream.getvalue()) == {"goal": "déployer ✓"}


def test_console_honours_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert color_disabled()
    assert make_console().no_color
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "xterm")
    assert not color_disabled()
    assert make_console().no_color  # pytest's captured stdout is not a terminal


def test_render_format_by_extension() -> None:
    assert render_format("out.SVG") == "svg" and render_format(Path("a/b.png")) == "png"
    with pytest.raises(
        RenderError, match=r"x\.pdf: cannot render to '\.pdf'; use a \.svg or \.png file name"
    ):
        render_format("x.pdf")
    with pytest.raises(RenderError, match="cannot render to no extension"):
        render_format("noext")


def test_render_svg_shows_labels_handlers_legend_and_problems(tmp_path: Path) -> None:
    out = tmp_path / "demo.svg"
    problems = [
        Diagnostic("r", "error", "bad", node_id="plan"),
        Diagnostic("r", "warning", "meh", edge=("ask", "custom")),
    ]
    render_graph(GRAPH, out, problems)
    svg = out.read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in (
        "Demo \\ pipeline",
        ">Plan<",
        ">it<",
        ">opus<",
        "Approve?",
        "[A] Approve [preferred_label=Approve]",
    ):
        assert text in svg, text
    assert "human gate (wait.human)" in svg and "LLM stage (codergen)" in svg and ">deploy<" in svg
    assert "#dc2626" in svg and "#ea580c" in svg


def test_labels_wrapped_in_angle_brackets_are_drawn_as_text_not_markup(tmp_path: Path) -> None:
    out = tmp_path / "hostile.svg"
    pipeline = parse_dot(
        'digraph "<b>title</b>" { start [shape=Mdiamond]; done [shape=Msquare]; '
        'a [label="<script>alert(1)</script>"]; start -> a [label="<i>go</i>"]; a -> done }'
    )
    render_graph(pipeline, out)
    svg = out.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg and "&lt;i&gt;go&lt;/i&gt;" in svg
    assert "<script" not in svg


def test_drawing_uses_handler_shapes() -> None:
    drawing = build_drawing(GRAPH)
    assert drawing.get_node("ask").attr["shape"] == "hexagon"
    assert drawing.get_node("plan").attr["shape"] == "box"
    assert drawing.get_node("custom").attr["style"] == "filled,dashed"
    assert drawing.get_node("legend:wait.human").attr["shape"] == "hexagon"


def test_render_png_is_a_real_png(tmp_path: Path) -> None:
    out = tmp_path / "demo.png"
    render_graph(GRAPH, out)
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_render_to_an_unwritable_place_is_a_render_error(tmp_path: Path) -> None:
    with pytest.raises(RenderError, match="cannot write"):
        render_graph(GRAPH, tmp_path / "missing-dir" / "x.svg")


def test_print_diagnostics_puts_errors_first_and_summarises(capsys: pytest.CaptureFixture[str]) -> None:
    diagnostics = [
        Diagnostic("orphan_node", "warning", "node x has no edges", node_id="x", fix="connect x"),
        Diagnostic("start_node", "error", "no start node"),
        Diagnostic("condition_syntax", "error", "bad", edge=("a", "b")),
    ]
    print_diagnostics(diagnostics)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines[1:]] == [
        ["error", "start_node", "graph"],
        ["error", "condition_syntax", "edge"],
        ["warning", "orphan_node", "node"],
    ]
    assert lines[3].split() == ["warning", "orphan_node", "node", "x", "has", "no", "edges", "connect", "x"]
    assert diagnostics_summary(diagnostics) == "2 errors, 1 warning"
    assert diagnostics_summary([]) == ""
    assert diagnostic_json(diagnostics[2])["edge"] == ["a", "b"]
    print_diagnostics([])
    assert capsys.readouterr().out == ""
