"""An agent's tools: the backend's base set plus the agent's additions, minus its restrictions."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

from orchestra_core.agents.builtin_tools import BUILTIN_TOOL_NAMES, register_builtins
from orchestra_core.agents.command_tools import register_command_tools
from orchestra_core.agents.registry import ToolRegistry, ToolRegistryError, matching
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker, index_by_safe_name
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.command_runner import CommandRunner

# What a tool-using backend offers every agent: the built-in tools of every repo.
DEFAULT_BASE_TOOLS = tuple(f"*:{name}" for name in BUILTIN_TOOL_NAMES)


class UnknownToolError(ToolRegistryError):
    """An agent names a tool (or pattern) that matches no available tool."""


def create_registry(settings: OrchestraSettings, runner: CommandRunner | None = None) -> ToolRegistry:
    """A registry with the built-in tools and the `workspace.tools` commands of `settings`.

    Custom Python tools are added with `registry.register(...)` / `register_builtin(...)` afterwards.
    """
    registry = register_builtins(ToolRegistry())
    return register_command_tools(registry, settings.workspace.tools, runner)


def select_tools(
    available: Sequence[str], base: Sequence[str], additions: Sequence[str], restrictions: Sequence[str]
) -> tuple[str, ...]:
    """The tool names an agent gets, in order: base set, then additions, without the restricted ones.

    Names may be glob patterns (`*:write-file`, `backend:*`). Base patterns may match nothing (a
    workspace without repos); additions and restrictions must each match something.

    Raises:
        UnknownToolError: An addition or restriction matches no available tool.
    """
    base_names = [name for name in available if any(fnmatch.fnmatchcase(name, pattern) for pattern in base)]
    added, unknown_additions = matching(additions, available)
    removed, unknown_restrictions = matching(restrictions, available)
    unknown = unknown_additions + unknown_restrictions
    if unknown:
        raise UnknownToolError(
            f"unknown tool(s): {', '.join(unknown)} (available: {', '.join(available) or 'none'})"
        )
    ordered = base_names + [name for name in added if name not in base_names]
    return tuple(name for name in ordered if name not in removed)


def build_tools(
    registry: ToolRegistry, names: Sequence[str], repos: Mapping[str, RepoContext], tracker: WriteTracker
) -> list[AgentTool]:
    """Bind the named tools to the run's repos and the turn's WriteTracker.

    Raises:
        ToolRegistryError: A name is unknown for these repos.
        OrchestraError: Two tools would share a provider-safe name.
    """
    tools = registry.build(names, repos, tracker)
    index_by_safe_name(tools)
    return tools
