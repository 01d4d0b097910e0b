"""Reading JSON-lines output of CLI agents that may also print other text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def json_object(line: str) -> Mapping[str, Any] | None:
    """The JSON object on this line, or None (blank lines, progress text, broken JSON)."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def result_text(content: Any) -> str:
    """A tool result's text: a string as it is, content blocks joined by their text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return result_text([content])
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one (agents' output is read, never trusted)."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
