"""Which of Orchestra's tools an ACP tool call is a call of.

ACP gives a tool call no tool name; agents name the calls of an MCP server's tools their own way, in the title,
the call id or `_meta`: Claude Code's adapter titles them `mcp__orchestra__project__write-file`, Gemini CLI's
call ids are `<tool>-<milliseconds>` (`project__write-file-1712345678`). A call is Orchestra's when one of those
holds one of the node's tools by its provider-safe name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.tools import provider_safe_name

REPORT_OUTCOME = "report_outcome"
_PREFIXES = ("mcp__orchestra__", "orchestra__", "mcp_orchestra_")
_TOKEN = re.compile(r"[A-Za-z0-9_.:-]+")
_CALL_SUFFIX = re.compile(r"-\d+$")


def orchestra_tool_of(call: Mapping[str, Any], toolbox: Toolbox) -> str | None:
    """The Orchestra name (`project:write-file`) of the tool an ACP tool call calls; None: not one of the node's."""
    for text in (call.get("title"), call.get("toolCallId"), *_strings(call.get("_meta"))):
        for token in _TOKEN.findall(text if isinstance(text, str) else ""):
            name = _tool_named(token, toolbox)
            if name is not None:
                return name
    return None


def _tool_named(token: str, toolbox: Toolbox) -> str | None:
    for prefix in _PREFIXES:
        if token.startswith(prefix):
            token = token[len(prefix) :]
            break
    for candidate in dict.fromkeys((token, _CALL_SUFFIX.sub("", token))):
        safe = toolbox.safe_name_of(provider_safe_name(candidate))
        if safe == REPORT_OUTCOME:
            return REPORT_OUTCOME
        name = toolbox.orchestra_name(safe)
        if name != safe:
            return name
    return None


def _strings(value: Any, depth: int = 0) -> list[str]:
    """The strings in an agent's `_meta` (two levels deep at most)."""
    if isinstance(value, str):
        return [value]
    if depth >= 2 or not isinstance(value, Mapping):
        return []
    return [text for inner in value.values() for text in _strings(inner, depth + 1)]
