"""Reading a YAML configuration file with ruamel's round-trip loader, keeping every key's line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from orchestra_core.model.settings import ConfigError

KeyPath = tuple[str | int, ...]


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


def read_yaml(path: Path, display: str | None = None) -> YamlSource:
    """Read and parse a YAML file.

    Args:
        path: The file.
        display: How to name the file in messages (default: the path as given).

    Raises:
        ConfigError: The file cannot be read, is not UTF-8, or is not valid YAML (with its line).
    """
    file = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError.at("file not found", file=file) from None
    except IsADirectoryError:
        raise ConfigError.at("is a directory, not a YAML file", file=file) from None
    except UnicodeDecodeError as error:
        raise ConfigError.at(f"not UTF-8 text ({error.reason} at byte {error.start})", file=file) from None
    except OSError as error:
        raise ConfigError.at(f"cannot read: {error.strerror or error}", file=file) from None
    return parse_yaml(text, file)


def parse_yaml(text: str, file: str) -> YamlSource:
    """Parse YAML text named `file` in messages.

    Raises:
        ConfigError: The text is not valid YAML; the message has the line and the parser's complaint.
    """
    try:
        document = YAML(typ="rt").load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        raise ConfigError.at(f"YAML syntax error: {problem.splitlines()[0]}", file=file, line=line) from None
    except YAMLError as error:
        raise ConfigError.at(f"YAML syntax error: {error}", file=file) from None
    return YamlSource(file=file, data=plain(document), document=document)


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
