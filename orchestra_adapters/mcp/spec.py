"""How an MCP client starts a stdio MCP server (what an agent's MCP configuration names)."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple


@frozen
class McpServerSpec:
    """A stdio MCP server an agent starts and connects to.

    Attributes:
        name: The server's name in the agent's configuration (tools are `mcp__<name>__<tool>`).
        command: The program to start.
        args: Its arguments.
        env: Environment variables set for it (on top of the agent's).
    """

    name: str
    command: str
    args: tuple[str, ...] = field(default=(), converter=str_tuple)
    env: Mapping[str, str] = field(factory=dict, converter=frozen_map)
