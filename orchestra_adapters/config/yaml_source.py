"""Reading a YAML configuration file with ruamel's round-trip loader, keeping every key's line."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import CollectionNode, MappingNode, Node
from ruamel.yaml.scalarbool import ScalarBoolean

from orchestra_core.model.input_files import MAX_YAML_BYTES, InputFileError, read_text_file
from orchestra_core.model.settings import ConfigError

KeyPath = tuple[str | int, ...]
# What aliases may add to a document (values beyond those written in the file) and how deep collections
# nest: far beyond any configuration, far below what takes a second to build (docs/configuration.md).
MAX_ALIAS_VALUES = 10_000
MAX_YAML_DEPTH = 64
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@frozen
class YamlSource:
    """A parsed YAML file: plain Python data plus the round-trip document that knows the lines.

    Attributes:
        file: The file's name as shown in messages.
        data: The document as plain dicts, lists and scalars (None for an empty file).
        document: ruamel's round-trip document (CommentedMap/CommentedSeq carry line numbers).
    """

    file: str
    data: Any
    document: Any

    def line_of(self, path: KeyPath) -> int | None:
        """The 1-based line of the deepest key along `path` that exists in the file."""
        node, line = self.document, None
        for step in path:
            position = _position(node, step)
            if position is None:
                break
            line = position + 1
            node = node[step]
        return line

    def value_line(self, path: KeyPath) -> int | None:
        """The 1-based line where the value at `path` starts (block scalars: their first text line)."""
        parent_path, step = path[:-1], path[-1]
        parent = self._node(parent_path)
        if isinstance(parent, dict) and step in parent and hasattr(parent, "lc"):
            line, _ = parent.lc.value(step)
            block = type(parent[step]).__name__ in ("LiteralScalarString", "FoldedScalarString")
            return line + 1 + (1 if block else 0)
        return self.line_of(path)

    def _node(self, path: KeyPath) -> Any:
        node = self.document
        for step in path:
            node = node[step]
        return node


def read_yaml(path: Path, display: str | None = None, *, limit: int = MAX_YAML_BYTES) -> YamlSource:
    """Read and parse a YAML file.

    Args:
        path: The file.
        display: How to name the file in messages (default: the path as given).
        limit: Most bytes accepted (default MAX_YAML_BYTES, documented in docs/configuration.md).

    Raises:
        ConfigError: The file cannot be read, is not a regular file, is too large, is not UTF-8, is not
            valid YAML or expands its aliases beyond the bound (with its line).
    """
    file = display or str(path)
    return parse_yaml(read_yaml_text(path, file, limit=limit), file)


def read_yaml_text(path: Path, file: str, *, limit: int = MAX_YAML_BYTES) -> str:
    """A YAML file's text, read as every input file is (regular files only, within `limit`, UTF-8).

    Raises:
        ConfigError: The file is missing, not a regular file, too large, unreadable or not UTF-8.
    """
    try:
        return read_text_file(path, limit=limit, display=file)
    except InputFileError as error:
        raise ConfigError.at(error.detail, file=file, line=error.line) from None


def parse_yaml(text: str, file: str) -> YamlSource:
    """Parse YAML text named `file` in messages.

    Raises:
        ConfigError: The text is not valid YAML; the message has the line and the parser's complaint.
    """
    document = load_yaml(text, file)
    return YamlSource(file=file, data=plain(document), document=document)


def load_yaml(text: str, file: str) -> Any:
    """ruamel's round-trip document for YAML text: the one way Orchestra parses YAML.

    Aliases may add at most MAX_ALIAS_VALUES values to the document and may not refer to the collection
    that holds them; collections nest at most MAX_YAML_DEPTH deep; text holds no lone surrogate.

    Raises:
        ConfigError: The text is not valid YAML, or breaks one of those bounds; with the line.
    """
    yaml = YAML(typ="rt")
    yaml.Composer = _BoundedComposer
    yaml.max_depth = MAX_YAML_DEPTH
    try:
        return yaml.load(text)
    # ValueError, TypeError, OverflowError: a value ruamel cannot build (a huge int, a bad date, a list as key)
    except (_Refused, YAMLError, RecursionError, ValueError, TypeError, OverflowError) as error:
        raise _config_error(error, file) from None


def _config_error(error: Exception, file: str) -> ConfigError:
    if isinstance(error, _Refused):
        return ConfigError.at(error.detail, file=file, line=error.line)
    if isinstance(error, MaxDepthExceededError | RecursionError):
        line = _mark_line(getattr(error, "problem_mark", None))
        return ConfigError.at(f"YAML nested more than {MAX_YAML_DEPTH} levels deep", file=file, line=line)
    if isinstance(error, MarkedYAMLError):
        problem = error.problem or error.context or "invalid YAML"
        line = _mark_line(error.problem_mark or error.context_mark)
        return ConfigError.at(f"YAML syntax error: {problem.splitlines()[0]}", file=file, line=line)
    if isinstance(error, YAMLError):
        return ConfigError.at(f"YAML syntax error: {_first_line(str(error))}", file=file)
    return ConfigError.at(f"invalid YAML value: {_first_line(str(error))}", file=file)


def _mark_line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


class _Refused(Exception):
    def __init__(self, detail: str, line: int | None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.line = line


class _BoundedComposer(Composer):
    """ruamel's composer, checking each document's node graph before anything is built from it.

    Aliases share nodes, so the graph stays small however far it would expand; its expanded size is
    counted once per shared node, and a "billion laughs" is refused before any value is built.
    """

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            _NodeBudget().check(node)
        return node


class _NodeBudget:
    """Counts a node graph's distinct nodes and the values it expands to; refuses too much expansion."""

    def __init__(self) -> None:
        self.expanded: dict[int, int] = {}
        self.open: set[int] = set()
        self.distinct: set[int] = set()

    def check(self, root: Node) -> None:
        self.size(root)

    def size(self, node: Node) -> int:
        key = id(node)
        if key in self.expanded:
            return self.expanded[key]
        if key in self.open:
            raise _Refused("an alias refers to the collection that holds it (a recursive alias)", _line(node))
        self.distinct.add(key)
        if not isinstance(node, CollectionNode):
            self.expanded[key] = 1
            _check_scalar(node)
            return 1
        self.open.add(key)
        total = 1 + sum(self.size(child) for child in _children(node))
        self.open.discard(key)
        self.expanded[key] = total
        # Never more than the whole document adds: the distinct nodes seen so far include this subtree's.
        if total - len(self.distinct) > MAX_ALIAS_VALUES:
            raise _Refused(
                f"YAML aliases here expand to more than {MAX_ALIAS_VALUES} values beyond the file's own "
                "(a \"billion laughs\"?); write the values out instead",
                _line(node),
            )
        return total


def _children(node: CollectionNode) -> list[Node]:
    if isinstance(node, MappingNode):
        return [item for pair in node.value for item in pair]
    return list(node.value)


def _check_scalar(node: Node) -> None:
    if isinstance(node.value, str) and _SURROGATE_RE.search(node.value):
        raise _Refused("a string holds a lone surrogate (\\ud800-\\udfff escape), which is not text", _line(node))


def _line(node: Node) -> int | None:
    return _mark_line(getattr(node, "start_mark", None))


def _first_line(text: str) -> str:
    """The first line of a possibly multi-line message."""
    return text.strip().splitlines()[0] if text.strip() else text


def plain(value: Any) -> Any:
    """The round-trip document as built-in types (dict, list, str, int, float, bool, None, dates)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, ScalarBoolean):
        return bool(value)
    if isinstance(value, bool) or value is None:
        return value
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


def render_key_path(path: Sequence[str | int]) -> str:
    """`workspace.repos.backend.path`, with sequence items as `tools[1]`."""
    rendered = ""
    for step in path:
        if isinstance(step, int):
            rendered += f"[{step}]"
        else:
            rendered += f".{step}" if rendered else str(step)
    return rendered


def _position(node: Any, step: str | int) -> int | None:
    if isinstance(node, CommentedMap) and step in node:
        return node.lc.key(step)[0]
    if isinstance(node, CommentedSeq) and isinstance(step, int) and 0 <= step < len(node):
        return node.lc.item(step)[0]
    return None
