"""Write a Graph back as DOT text of the supported subset (flat: defaults and subgraphs already applied)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from orchestra_core.model.graph import Graph
from orchestra_core.model.quoting import quote_string

_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_KEYWORDS = frozenset({"digraph", "graph", "node", "edge", "subgraph", "strict"})


quote = quote_string  # a double-quoted DOT string with Attractor escapes


def _key(key: str) -> str:
    return key if _KEY_RE.fullmatch(key) and key.lower() not in _KEYWORDS else quote(key)


def _id(name: str) -> str:
    """Node ids and graph names such as `node` or `Graph` are DOT keywords unless quoted."""
    return name if _IDENTIFIER_RE.fullmatch(name) and name.lower() not in _KEYWORDS else quote(name)


def _attr_block(attrs: Mapping[str, str]) -> str:
    if not attrs:
        return ""
    return " [" + ", ".join(f"{_key(k)}={quote(v)}" for k, v in attrs.items()) + "]"


def to_dot(graph: Graph) -> str:
    """Render the graph as DOT text that `parse_dot` reads back into an equal Graph."""
    name = graph.name
    header = "digraph" if not name else f"digraph {_id(name)}"
    lines = [header + " {"]
    if graph.attrs:
        lines.append("  graph" + _attr_block(graph.attrs))
    lines.extend(f"  {_id(node.id)}{_attr_block(node.attrs)}" for node in graph.nodes.values())
    lines.extend(
        f"  {_id(edge.source)} -> {_id(edge.target)}{_attr_block(edge.attrs)}" for edge in graph.edges
    )
    lines.append("}")
    return "\n".join(lines) + "\n"
