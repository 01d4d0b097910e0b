"""Load a pipeline from DOT text through Graphviz (libcgraph, as the pygraphviz wheel ships it) into the frozen
Graph model.

Graphviz applies node and edge defaults in the order and scope they appear and expands chained edges;
this module reads its result, drops empty (unset) values, derives subgraph classes (2.10), restores the
declared edge order and checks that node ids are identifiers.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from orchestra_core.graph.dot_lexer import LexedDot, lex, restore
from orchestra_core.model.errors import PipelineLoadError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.input_files import MAX_PIPELINE_BYTES, InputFileError, read_text_file

_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GRAPHVIZ_ERROR_RE = re.compile(r"(?:Error|Warning):\s*(?:[^:\n]*:\s*)?(.*?)\s+in line (\d+)(.*)")
_GRAPHVIZ_FAILED_RE = re.compile(r"(?:\A|\n)Error:")
_AGRAPH, _AGNODE, _AGEDGE = 0, 1, 2
# Node ids name run directories (`{logs_root}/{node_id}/`) and the graph's name session branches; file
# names end at 255 bytes on common file systems.
MAX_NODE_ID_LENGTH = 128
# Any Graphviz layout in the process sets `\N` ("the node's name") as the global default node label, which
# later reads would report as an explicit label. User backslashes reach Graphviz as placeholders, so a raw
# `\N` value can only be that default.
_GRAPHVIZ_NODE_NAME = b"\\N"
# libcgraph's user error function, `int (*)(char *)`; AGWARN, the level from which messages reach it.
_ERROR_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)
_AGWARN = 0
# Graphviz's error settings are process-wide: one read at a time installs and restores them.
_read_lock = threading.Lock()


def load_pipeline(path: str | os.PathLike[str]) -> Graph:
    """Read and parse a pipeline file.

    Raises:
        PipelineLoadError: The file cannot be read or is not valid DOT of the supported subset.
    """
    return parse_dot(read_pipeline_text(path), path=str(path))


def read_pipeline_text(path: str | os.PathLike[str]) -> str:
    """A pipeline file's text (at most MAX_PIPELINE_BYTES, see docs/configuration.md).

    Raises:
        PipelineLoadError: The file is missing, not a regular file (a directory, FIFO or device), too
            large, not UTF-8 (with the byte offset) or unreadable.
    """
    try:
        return read_text_file(path, limit=MAX_PIPELINE_BYTES)
    except InputFileError as error:
        raise PipelineLoadError(error.detail, path=error.path, line=error.line) from None


def parse_dot(text: str, path: str | None = None) -> Graph:
    """Parse DOT text of the supported subset into a Graph.

    Raises:
        PipelineLoadError: The text is not valid DOT of the supported subset; names the line.
    """
    if "\x00" in text:
        raise PipelineLoadError("contains a NUL byte; not a text file", path=path)
    lexed = lex(text, path)
    handle = _read_with_graphviz(lexed.graphviz_text, path)
    try:
        graph = _build_graph(handle, lexed, path)
    finally:
        _gv().agclose(handle)
    _check_complete(graph, lexed, path)
    return graph


@functools.cache
def _gv() -> Any:
    """The Graphviz calls the loader makes: libcgraph through ctypes, or pygraphviz's own bindings when this
    libcgraph does not lay out attribute symbols as cgraph.h has them (checked once, on a probe graph)."""
    direct = _CGraph(_cgraph())
    return direct if _reads_attribute_names(direct) else _PygraphvizCalls()


_PROBE_ATTRIBUTE = b"orchestra_probe"


def _reads_attribute_names(gv: Any) -> bool:
    """Whether `_CGraph.agattrname` reads the names Graphviz stores (the one place that relies on a struct layout)."""
    with _read_lock:  # Graphviz's parser is not reentrant
        handle = gv.agread(b"digraph { a [" + _PROBE_ATTRIBUTE + b'="1"] }')
    if not handle:
        return False
    try:
        names: list[bytes] = []
        symbol = gv.agnxtattr(handle, _AGNODE, None)
        while symbol and len(names) < 100:
            names.append(gv.agattrname(symbol))
            symbol = gv.agnxtattr(handle, _AGNODE, symbol)
        return _PROBE_ATTRIBUTE in names
    finally:
        gv.agclose(handle)


class _PygraphvizCalls:
    """pygraphviz's SWIG bindings of the same calls (slower to import and heavier: its extension links Graphviz's
    layout and rendering libraries)."""

    def __getattr__(self, name: str) -> Any:
        from pygraphviz import graphviz

        return getattr(graphviz, name)

    @staticmethod
    def agread(data: bytes) -> Any:
        from pygraphviz import graphviz

        with tempfile.TemporaryFile() as source:
            source.write(data)
            source.seek(0)
            return graphviz.agread(source, None)


def _read_with_graphviz(text: str, path: str | None) -> Any:
    gv = _gv()
    data = text.encode("utf-8")
    with _read_lock, _graphviz_messages() as messages:
        try:
            handle = _agread(gv, data)
        except Exception:
            handle = None
    reported = "".join(messages)
    # Graphviz can report an error and still return the graph it had built so far (a bison stack
    # overflow, "memory exhausted", keeps the statements before it): a partial graph is never used.
    if handle is not None and _GRAPHVIZ_FAILED_RE.search(reported):
        gv.agclose(handle)
        handle = None
    if handle is None:
        raise _graphviz_error(reported, path)
    return handle


@functools.cache
def _cgraph() -> ctypes.CDLL:
    """libcgraph, the Graphviz library that reads DOT, loaded alone (Graphviz's layout and rendering libraries,
    which pygraphviz's extension links, would cost ~10 MB of memory and its import ~10 ms); the same library
    pygraphviz uses when it is imported, so Graphviz's error settings are shared with it."""
    library = ctypes.CDLL(_cgraph_path())
    pointer, handle = ctypes.c_void_p, [ctypes.c_void_p]
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "agseterrf": (pointer, [pointer]),
        "agseterr": (ctypes.c_int, [ctypes.c_int]),
        "agmemread": (pointer, [ctypes.c_char_p]),
        "agclose": (ctypes.c_int, handle),
        "agnxtattr": (pointer, [pointer, ctypes.c_int, pointer]),
        "agxget": (ctypes.c_char_p, [pointer, pointer]),
        "agnameof": (ctypes.c_char_p, handle),
        "agfstnode": (pointer, handle),
        "agnxtnode": (pointer, [pointer, pointer]),
        "agfstout": (pointer, [pointer, pointer]),
        "agnxtout": (pointer, [pointer, pointer]),
        "agtail": (pointer, handle),
        "aghead": (pointer, handle),
        "agfstsubg": (pointer, handle),
        "agnxtsubg": (pointer, handle),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(library, name)
        function.restype, function.argtypes = restype, argtypes
    return library


def _cgraph_path() -> str:
    """libcgraph as the pygraphviz wheel bundles it, else pygraphviz's extension (which links it)."""
    spec = importlib.util.find_spec("pygraphviz")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise PipelineLoadError("pygraphviz is not installed; Orchestra reads DOT through its Graphviz library")
    package = os.path.dirname(spec.origin)
    bundled = os.path.join(os.path.dirname(package), "pygraphviz.libs")
    if os.path.isdir(bundled):
        for name in sorted(os.listdir(bundled)):
            if name.startswith("libcgraph"):
                return os.path.join(bundled, name)
    extension = next((name for name in os.listdir(package) if name.startswith("_graphviz")), None)
    if extension is None:
        raise PipelineLoadError(f"pygraphviz at {package} has no Graphviz extension")
    return os.path.join(package, extension)


class _CGraph:
    """The libcgraph calls the loader makes; iteration functions return None at the end."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._library = library
        for name in ("agclose", "agnameof", "agfstnode", "agnxtnode", "agfstout", "agnxtout", "agtail", "aghead",
                     "agfstsubg", "agnxtsubg", "agnxtattr", "agxget"):  # fmt: skip
            setattr(self, name, getattr(library, name))

    def agread(self, data: bytes) -> Any:
        return self._library.agmemread(data)

    @staticmethod
    def agattrname(symbol: int) -> bytes:
        """An attribute symbol's name: `Agsym_t.name`, after its `Dtlink_t` (two pointers) in cgraph.h."""
        return ctypes.cast(symbol + 2 * ctypes.sizeof(ctypes.c_void_p), ctypes.POINTER(ctypes.c_char_p))[0] or b""


@contextmanager
def _graphviz_messages() -> Iterator[list[str]]:
    """Graphviz's warnings and errors while the block runs (`Error: ... in line N`), kept off stderr.

    Graphviz's previous error function and reporting level are restored afterwards.
    """
    library = _cgraph()
    messages: list[str] = []

    def collect(message: bytes | None) -> int:
        messages.append((message or b"").decode("utf-8", "replace"))
        return 0

    callback = _ERROR_FUNCTION(collect)
    previous_function = library.agseterrf(ctypes.cast(callback, ctypes.c_void_p))
    previous_level = library.agseterr(_AGWARN)
    try:
        yield messages
    finally:
        library.agseterr(previous_level)
        library.agseterrf(previous_function)


def _agread(gv: Any, data: bytes) -> Any:
    return gv.agread(data)


def _graphviz_error(messages: str, path: str | None) -> PipelineLoadError:
    matches = list(_GRAPHVIZ_ERROR_RE.finditer(messages))
    match = next((m for m in matches if m.group(0).startswith("Error")), matches[0] if matches else None)
    if match is None:
        detail = messages.strip().splitlines()[0] if messages.strip() else "not valid DOT"
        return PipelineLoadError(detail, path=path)
    detail = restore((match.group(1) + match.group(3)).strip().replace('"', ""))
    if "memory exhausted" in detail:
        detail = "Graphviz's parser ran out of stack on this statement (it nests or chains too deeply); split it"
    return PipelineLoadError(detail, path=path, line=int(match.group(2)))


def _check_complete(graph: Graph, lexed: LexedDot, path: str | None) -> None:
    """Refuse a graph that lacks an edge the text declares: Graphviz stopped early without saying so."""
    present = {(edge.source, edge.target) for edge in graph.edges}
    for source, target in lexed.edge_order:
        if (source, target) not in present:
            raise PipelineLoadError(
                f"Graphviz returned an incomplete graph: the edge {source} -> {target} is missing",
                path=path,
                line=lexed.first_line_of(source),
            )


def _declared(gv: Any, root: Any, kind: int) -> list[tuple[str, Any]]:
    symbols: list[tuple[str, Any]] = []
    symbol = None
    while True:
        try:
            symbol = gv.agnxtattr(root, kind, symbol)
        except StopIteration:
            return symbols
        if symbol is None:
            return symbols
        symbols.append((restore(gv.agattrname(symbol).decode("utf-8")), symbol))


def _values(gv: Any, item: Any, symbols: list[tuple[str, Any]]) -> dict[str, str]:
    found = {}
    for name, symbol in symbols:
        raw = gv.agxget(item, symbol)
        if raw and raw != _GRAPHVIZ_NODE_NAME:
            found[name] = restore(raw.decode("utf-8"))
    return found


def _iterate(first: Any, following: Any) -> Iterator[Any]:
    item = first()
    while item is not None:
        yield item
        try:
            item = following(item)
        except StopIteration:
            return


def _build_graph(root: Any, lexed: LexedDot, path: str | None) -> Graph:
    gv = _gv()
    graph_symbols = _declared(gv, root, _AGRAPH)
    node_symbols = _declared(gv, root, _AGNODE)
    edge_symbols = _declared(gv, root, _AGEDGE)
    node_handles = list(_iterate(lambda: gv.agfstnode(root), lambda n: gv.agnxtnode(root, n)))
    nodes: dict[str, dict[str, str]] = {}
    for handle in node_handles:
        node_id = restore((gv.agnameof(handle) or b"").decode("utf-8"))  # Graphviz names "" as NULL
        _check_node_id(node_id, lexed, path)
        nodes[node_id] = _values(gv, handle, node_symbols)
    _apply_subgraph_classes(gv, root, graph_symbols, nodes, _values(gv, root, graph_symbols).get("label", ""))
    edges = _read_edges(gv, root, node_handles, edge_symbols)
    return Graph(
        name=_graph_name(gv, root, lexed, path),
        attrs=_values(gv, root, graph_symbols),
        nodes={node_id: Node(node_id, node_attrs) for node_id, node_attrs in nodes.items()},
        edges=_in_declared_order(edges, lexed.edge_order),
        source_path=path,
        edge_only_ids=lexed.edge_only_ids(),
    )


def _graph_name(gv: Any, root: Any, lexed: LexedDot, path: str | None) -> str:
    name = restore((gv.agnameof(root) or b"").decode("utf-8"))
    if len(name) > MAX_NODE_ID_LENGTH:
        raise PipelineLoadError(
            f"the graph name is {len(name)} characters long; the limit is {MAX_NODE_ID_LENGTH} "
            "(it names session branches); put long text in the graph's label",
            path=path,
            line=lexed.first_line_of(name),
        )
    return name if not name.startswith("%") else ""


def _check_node_id(node_id: str, lexed: LexedDot, path: str | None) -> None:
    if len(node_id) > MAX_NODE_ID_LENGTH:
        raise PipelineLoadError(
            f"node id {node_id[:20]}... is {len(node_id)} characters long; the limit is {MAX_NODE_ID_LENGTH} "
            "(ids name run directories and branches); put long text in label",
            path=path,
            line=lexed.first_line_of(node_id),
        )
    if not _IDENTIFIER_RE.fullmatch(node_id):
        raise PipelineLoadError(
            f"node id {node_id!r} is not an identifier ([A-Za-z_][A-Za-z0-9_]*); put display text in label",
            path=path,
            line=lexed.first_line_of(node_id),
        )


def _read_edges(gv: Any, root: Any, node_handles: list[Any], symbols: list[tuple[str, Any]]) -> list[Edge]:
    edges = []
    for node in node_handles:
        for edge in _iterate(lambda n=node: gv.agfstout(root, n), lambda e: gv.agnxtout(root, e)):
            source = restore(gv.agnameof(gv.agtail(edge)).decode("utf-8"))
            target = restore(gv.agnameof(gv.aghead(edge)).decode("utf-8"))
            edges.append(Edge(source, target, _values(gv, edge, symbols)))
    return edges


def _in_declared_order(edges: list[Edge], declared: tuple[tuple[str, str], ...]) -> list[Edge]:
    """Graphviz lists a node's out-edges by target; put them back in the order the file declared them."""
    positions: dict[tuple[str, str], list[int]] = {}
    for index, pair in enumerate(declared):
        positions.setdefault(pair, []).append(index)
    seen: dict[tuple[str, str], int] = {}
    fallback = len(declared)

    def rank(edge: Edge) -> int:
        pair = (edge.source, edge.target)
        occurrence = seen.get(pair, 0)
        seen[pair] = occurrence + 1
        slots = positions.get(pair, [])
        return slots[occurrence] if occurrence < len(slots) else fallback

    ranked = [(rank(edge), index, edge) for index, edge in enumerate(edges)]
    ranked.sort(key=lambda item: (item[0], item[1]))
    return [edge for _, _, edge in ranked]


def derive_class(label: str) -> str:
    """Subgraph label to class (2.10): lower-case, spaces to hyphens, drop other non-alphanumerics."""
    lowered = label.strip().lower().replace(" ", "-")
    return re.sub(r"[^a-z0-9-]", "", lowered)


def _apply_subgraph_classes(
    gv: Any, parent: Any, symbols: list[tuple[str, Any]], nodes: dict[str, dict[str, str]], parent_label: str
) -> None:
    for subgraph in _iterate(lambda: gv.agfstsubg(parent), gv.agnxtsubg):
        label = _values(gv, subgraph, symbols).get("label", "")
        # Graphviz copies the parent's label into a subgraph that sets none; only a new label names a class.
        derived = derive_class(label) if label and label != parent_label else ""
        if derived:
            members = _iterate(lambda s=subgraph: gv.agfstnode(s), lambda n, s=subgraph: gv.agnxtnode(s, n))
            for member in members:
                attrs = nodes[restore(gv.agnameof(member).decode("utf-8"))]
                classes = [c for c in re.split(r"[,\s]+", attrs.get("class", "")) if c]
                if derived not in classes:
                    attrs["class"] = ",".join([*classes, derived])
        _apply_subgraph_classes(gv, subgraph, symbols, nodes, label)
