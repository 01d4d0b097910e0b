"""Which of Orchestra's tools an ACP tool call is a call of, however the agent names it."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_adapters.backends.acp.names import orchestra_tool_of
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.tools import AgentTool


def _tool(name: str) -> AgentTool:
    def func(path: str) -> str:
        """A tool.

        Args:
            path: A path.
        """
        return path

    return AgentTool(name=name, description="a tool", func=func)


TOOLBOX = Toolbox([_tool("project:write-file"), _tool("project:read-file"), _tool("backend:run-tests")])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ({"title": "mcp__orchestra__project__write-file"}, "project:write-file"),  # Claude Code's adapter
        (
            {"title": '{"path": "a.py"}', "toolCallId": "project__read-file-1712345678"},
            "project:read-file",
        ),  # Gemini
        ({"title": "x", "toolCallId": "orchestra__backend__run-tests-17"}, "backend:run-tests"),
        (
            {"title": "Run", "_meta": {"claudeCode": {"toolName": "mcp__orchestra__project__write-file"}}},
            "project:write-file",
        ),
        ({"title": "project__write_file (orchestra MCP Server)"}, "project:write-file"),  # `-` read as `_`
        ({"title": "mcp__orchestra__report_outcome"}, "report_outcome"),
        ({"title": "WriteFile a.py", "toolCallId": "write_file-1712345678", "kind": "edit"}, None),
        ({"title": "mcp__other__project__write-file-x"}, None),
        ({"title": 5, "toolCallId": None, "_meta": [1, 2]}, None),
    ],
)
def test_calls_of_orchestras_tools_are_named_whatever_the_agents_spelling(
    call: dict[str, Any], name: str | None
) -> None:
    assert orchestra_tool_of(call, TOOLBOX) == name
