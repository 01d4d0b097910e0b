"""Output helpers shared by the commands: JSON on stdout, consoles that respect NO_COLOR, tables.

On a terminal tables are drawn with rich; anywhere else (pipes, files, CI logs) they are plain text in
aligned columns, one row per line, so they can be grepped. rich is imported only when it draws.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

    from orchestra_core.pipeline import PreparedPipeline
    from orchestra_core.validation import Diagnostic

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_stdout_documents = 0  # lets `--json` know whether a command already printed its document


def is_terminal(stream: TextIO | None = None) -> bool:
    """Whether `stream` (default stdout) is an interactive terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def color_disabled() -> bool:
    """Whether the user asked for no colour (the NO_COLOR convention, or TERM=dumb)."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def make_console(*, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr) that honours NO_COLOR and draws no colour off a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    plain = color_disabled() or not is_terminal(stream)
    return Console(file=stream, no_color=plain, color_system=None if plain else "auto", highlight=False)


def print_json(data: Any, stream: TextIO | None = None, *, compact: bool = False) -> None:
    """Write `data` as indented JSON and a newline (stdout by default); non-ASCII text is kept readable.

    `compact` writes it on one line without spaces, for documents that can be tens of MB (json's C encoder
    only runs without indentation: indenting a 100,000-turn session's document took 2 s of its 5).
    """
    global _stdout_documents
    stream = sys.stdout if stream is None else stream
    if compact:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    stream.write(text + "\n")
    stream.flush()
    if stream is sys.stdout:
        _stdout_documents += 1


def stdout_documents() -> int:
    """How many JSON documents `print_json` has written to stdout in this process."""
    return _stdout_documents


def format_columns(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Plain-text lines with every column padded to its widest cell (the last column is not padded)."""
    cleaned = [[_one_line(cell) for cell in row] for row in rows]
    widths = [max([len(headers[i]), *(len(row[i]) for row in cleaned)]) for i in range(len(headers))]
    lines = []
    for row in [list(headers), *cleaned]:
        padded = [cell.ljust(width) for cell, width in zip(row[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    return lines


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    first_cell_styles: Sequence[str | None] | None = None,
    column_styles: Mapping[int, str] | None = None,
) -> None:
    """Print a table on stdout: rich on a terminal, aligned plain text otherwise.

    Args:
        headers: Column titles.
        rows: Cells as plain strings (never interpreted as rich markup).
        title: A line printed above the table.
        first_cell_styles: A rich style for each row's first cell (e.g. "bold red" for an error's
            severity), used on a terminal only.
        column_styles: A rich style per column index, used on a terminal only.
    """
    if not is_terminal():
        if title:
            print(title)
        print("\n".join(format_columns(headers, rows)))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    for index, header in enumerate(headers):
        table.add_column(header, style=(column_styles or {}).get(index), overflow="fold")
    for index, row in enumerate(rows):
        lead_style = first_cell_styles[index] if first_cell_styles else None
        table.add_row(Text(row[0], style=lead_style or ""), *(Text(cell) for cell in row[1:]))
    make_console().print(table)


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """A validation diagnostic as JSON: rule, severity, message, node_id, edge ([from, to] or null), fix."""
    return {
        "rule": diagnostic.rule,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "node_id": diagnostic.node_id,
        "edge": list(diagnostic.edge) if diagnostic.edge is not None else None,
        "fix": diagnostic.fix,
    }


def print_diagnostics(diagnostics: Sequence[Diagnostic]) -> None:
    """Print diagnostics as a table, errors first (nothing when there are none)."""
    if not diagnostics:
        return
    order = list(SEVERITY_STYLES)
    ranked = sorted(diagnostics, key=lambda d: order.index(d.severity.value))
    print_table(
        ["severity", "rule", "where", "message", "fix"],
        [[d.severity.value, d.rule, d.location, d.message, d.fix or ""] for d in ranked],
        first_cell_styles=[SEVERITY_STYLES[d.severity.value] for d in ranked],
    )


def diagnostics_summary(diagnostics: Sequence[Diagnostic]) -> str:
    """`2 errors, 1 warning`, or an empty string when there are no diagnostics."""
    counts = {name: sum(d.severity.value == name for d in diagnostics) for name in SEVERITY_STYLES}
    return ", ".join(count_noun(count, name) for name, count in counts.items() if count)


def count_noun(count: int, noun: str) -> str:
    """`1 node`, `2 nodes` (regular plurals only)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _one_line(cell: str) -> str:
    return cell.replace("\r", " ").replace("\n", " ").replace("\t", " ")


def compile_json(prepared: PreparedPipeline) -> dict[str, Any]:
    """The `compile --json` document (DESIGN.md): the graph after transforms, every diagnostic, the synopsis."""
    from orchestra_core.validation.synopsis import pipeline_synopsis

    graph = prepared.graph
    return {
        "valid": prepared.valid,
        "goal": graph.goal,
        "nodes": [
            {"id": n.id, "handler": n.handler_type, "attrs": dict(n.attrs)} for n in graph.nodes.values()
        ],
        "edges": [{"from": e.source, "to": e.target, "attrs": dict(e.attrs)} for e in graph.edges],
        "diagnostics": [diagnostic_json(d) for d in prepared.diagnostics],
        "synopsis": pipeline_synopsis(graph).as_json(),
    }
