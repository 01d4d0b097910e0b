"""Draw a pipeline with pygraphviz's `dot` layout: shapes and colours by handler type, a legend, problems
outlined (red for errors, orange for warnings)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.validation import Diagnostic, Severity

RENDER_FORMATS = ("svg", "png")
FONT = "Helvetica"


class RenderError(OrchestraError):
    """The rendering cannot be produced or written."""


@frozen
class HandlerStyle:
    """How nodes of one handler type are drawn."""

    shape: str
    fill: str
    title: str
    style: str = "filled"


HANDLER_STYLES = {
    "start": HandlerStyle("Mdiamond", "#b7e4c7", "start"),
    "exit": HandlerStyle("Msquare", "#74c69d", "exit"),
    "codergen": HandlerStyle("box", "#dbeafe", "LLM stage (codergen)", "filled,rounded"),
    "wait.human": HandlerStyle("hexagon", "#fde68a", "human gate (wait.human)"),
    "conditional": HandlerStyle("diamond", "#e9d5ff", "conditional"),
    "parallel": HandlerStyle("component", "#fed7aa", "parallel fan-out"),
    "parallel.fan_in": HandlerStyle("tripleoctagon", "#fdba74", "parallel fan-in"),
    "tool": HandlerStyle("parallelogram", "#e5e7eb", "tool"),
    "stack.manager_loop": HandlerStyle("house", "#fecaca", "manager loop"),
}
UNKNOWN_STYLE = HandlerStyle("box", "#ffffff", "unknown handler", "filled,dashed")
PROBLEM_COLORS = {Severity.ERROR: "#dc2626", Severity.WARNING: "#ea580c"}


def render_format(path: str | os.PathLike[str]) -> str:
    """The output format named by the file's extension.

    Raises:
        RenderError: The extension is not .svg or .png.
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in RENDER_FORMATS:
        shown = f"'.{suffix}'" if suffix else "no extension"
        raise RenderError(f"{path}: cannot render to {shown}; use a .svg or .png file name")
    return suffix


def render_graph(graph: Graph, path: str | os.PathLike[str], diagnostics: Iterable[Diagnostic] = ()) -> None:
    """Lay the graph out with `dot` and write it to `path` (SVG or PNG, by extension).

    Raises:
        RenderError: Unsupported extension, Graphviz failure, or the file cannot be written.
    """
    output_format = render_format(path)
    drawing = build_drawing(graph, diagnostics)
    with _captured_stderr() as captured:
        try:
            data = drawing.draw(format=output_format, prog="dot")
        except (OSError, ValueError) as error:
            raise RenderError(
                f"{path}: Graphviz could not render the graph: {_first_line(captured(), error)}"
            ) from None
    try:
        Path(path).write_bytes(data)
    except OSError as error:
        raise RenderError(f"{path}: cannot write: {error.strerror or error}") from None


def build_drawing(graph: Graph, diagnostics: Iterable[Diagnostic] = (), *, legend: bool = True) -> Any:
    """A pygraphviz AGraph of the pipeline, styled for display (not the DOT the pipeline was read from); without
    `legend`, no legend of handler shapes in the drawing (a page that shows its own)."""
    import pygraphviz

    node_marks, edge_marks = _problem_marks(diagnostics)
    drawing = pygraphviz.AGraph(directed=True, strict=False, name=graph.name or "pipeline")
    title = graph.label or graph.name
    drawing.graph_attr.update(
        rankdir=graph.attrs.get("rankdir", "TB"), fontname=FONT, label=_plain(_escape(title)), labelloc="t"
    )
    drawing.node_attr.update(fontname=FONT, fontsize="11")
    drawing.edge_attr.update(fontname=FONT, fontsize="9", color="#475569")
    for node in graph.nodes.values():
        drawing.add_node(node.id, **_node_attrs(node, node_marks.get(node.id)))
    for edge in graph.edges:
        drawing.add_edge(
            edge.source, edge.target, **_edge_attrs(edge, edge_marks.get((edge.source, edge.target)))
        )
    if legend:
        _add_legend(drawing, {node.handler_type for node in graph.nodes.values()})
    return drawing


def _style_for(handler: str) -> HandlerStyle:
    return HANDLER_STYLES.get(handler, UNKNOWN_STYLE)


def _node_attrs(node: Node, problem: Severity | None) -> dict[str, str]:
    style = _style_for(node.handler_type)
    lines = [node.label]
    if node.llm_model and node.handler_type == "codergen":
        lines.append(node.llm_model)
    attrs = {
        "shape": style.shape,
        "style": style.style,
        "fillcolor": style.fill,
        "label": _plain("\\n".join(_escape(line) for line in lines)),
        "tooltip": _escape(f"{node.id} ({node.handler_type})"),
    }
    if problem is not None:
        attrs.update(color=PROBLEM_COLORS[problem], penwidth="2.5")
    return attrs


def _edge_attrs(edge: Edge, problem: Severity | None) -> dict[str, str]:
    parts = [edge.label] if edge.label else []
    if edge.condition:
        parts.append(f"[{edge.condition}]")
    attrs = {"label": _plain(_escape(" ".join(parts)))} if parts else {}
    if edge.get("loop_restart") in ("true", "yes", "1", "on"):
        attrs["style"] = "dashed"
    if problem is not None:
        attrs.update(color=PROBLEM_COLORS[problem], fontcolor=PROBLEM_COLORS[problem], penwidth="2")
    return attrs


def _add_legend(drawing: Any, handlers: set[str]) -> None:
    legend = drawing.add_subgraph(
        name="cluster_legend", label="Legend", fontsize="10", style="dashed", color="#94a3b8"
    )
    for handler in sorted(handlers):
        style = _style_for(handler)
        # Node ids cannot contain ':', so legend entries never collide with pipeline nodes.
        legend.add_node(
            f"legend:{handler}",
            label=_escape(style.title if style is not UNKNOWN_STYLE else handler),
            shape=style.shape,
            style=style.style,
            fillcolor=style.fill,
            fontsize="9",
        )


def _problem_marks(
    diagnostics: Iterable[Diagnostic],
) -> tuple[dict[str, Severity], dict[tuple[str, str], Severity]]:
    nodes: dict[str, Severity] = {}
    edges: dict[tuple[str, str], Severity] = {}
    for diagnostic in diagnostics:
        if diagnostic.severity not in PROBLEM_COLORS:
            continue
        if diagnostic.edge is not None:
            target: dict[Any, Severity] = edges
            key: Any = diagnostic.edge
        elif diagnostic.node_id is not None:
            target, key = nodes, diagnostic.node_id
        else:
            continue
        if target.get(key) is not Severity.ERROR:
            target[key] = diagnostic.severity
    return nodes, edges


def _escape(text: str) -> str:
    """Graphviz reads backslash sequences in labels (\\n, \\l, \\N...); show the text as written."""
    return text.replace("\\", "\\\\").replace("\r", "").replace("\n", "\\n")


def _plain(label: str) -> str:
    """An escaped label as plain text: pygraphviz writes a value wrapped in `<...>` as an HTML-like label,
    which Graphviz would parse as markup (a trailing space keeps it a string)."""
    return f"{label} " if label.startswith("<") and label.endswith(">") else label


def _first_line(messages: str, error: Exception) -> str:
    for line in messages.splitlines():
        if line.strip() and not line.startswith("Fontconfig"):
            return line.strip()
    return str(error) or type(error).__name__


@contextmanager
def _captured_stderr() -> Iterator[Any]:
    """Graphviz and fontconfig write warnings straight to file descriptor 2; keep them off the terminal."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)

        def read() -> str:
            sys.stderr.flush()
            sink.seek(0)
            return sink.read().decode("utf-8", "replace")

        try:
            yield read
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
