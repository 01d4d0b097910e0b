"""Backends by name (`simulate`, `langgraph`, `direct`, `claude-code`, `codex`, `acp`) for the composition root;
imports lazily."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from orchestra_adapters.backends.agent_inputs import AgentResolver, AgentToolset, ToolHooksFor
from orchestra_adapters.collector import collector_paused
from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.chat_models import ChatModelFactory
from orchestra_core.ports.codergen_backend import CodergenBackend

if TYPE_CHECKING:
    from orchestra_core.model.settings import OrchestraSettings
    from orchestra_core.runs.ports import AgentRuntime

CLI_AGENT_BACKENDS = ("claude-code", "codex")
ACP_BACKEND = "acp"
BACKEND_NAMES = ("simulate", "langgraph", "direct", *CLI_AGENT_BACKENDS, ACP_BACKEND)
DEFAULT_BACKEND = "langgraph"
SIMULATE = "simulate"


class UnknownBackendError(OrchestraError):
    """The configured backend name is not one Orchestra has."""


def create_backend(
    name: str,
    *,
    chat_models: ChatModelFactory,
    resolver: AgentResolver,
    toolset: AgentToolset,
    state_path: Path,
    tool_hooks: ToolHooksFor | None = None,
    runtime: AgentRuntime | None = None,
    settings: OrchestraSettings | None = None,
) -> CodergenBackend | None:
    """The backend called `name`; None for `simulate` (the engine's backend-less simulation mode).

    Args:
        name: `simulate`, `langgraph`, `direct`, `claude-code`, `codex` or `acp` ("" means `langgraph`).
        chat_models: The run's chat model factory (one per run: it holds the scripted cassette's position).
        resolver: Resolves a node's agent (provider, model).
        toolset: Builds a node's tools (the LangGraph backend only).
        state_path: The LangGraph agent state database, e.g. `.orchestra/agents.db` beside the session store.
        tool_hooks: Builds a node's tool call hooks (the LangGraph backend only).
        runtime: The run (the CLI agent backends: tools, hooks, repos, worktree watch).
        settings: orchestra.yaml's settings (the CLI agent backends: `claude_code:` / `codex:`; `acp:`).

    Raises:
        UnknownBackendError: `name` is not a known backend.
        OrchestraError: A CLI agent backend without the run's `runtime`.
    """
    chosen = name or DEFAULT_BACKEND
    if chosen == SIMULATE:
        return None
    if chosen == ACP_BACKEND:
        if runtime is None:
            raise OrchestraError(f"the {chosen} backend needs the run's agent runtime; none was given")
        from orchestra_adapters.backends.acp import create_acp_backend
        from orchestra_adapters.process.sandbox import agent_sandbox
        from orchestra_core.model.builtin_prices import price_table

        sandbox = agent_sandbox(settings) if settings is not None else None
        prices = price_table(settings.pricing) if settings is not None else price_table()
        return create_acp_backend(settings.acp if settings is not None else None, runtime, sandbox, prices)
    if chosen in CLI_AGENT_BACKENDS:
        if runtime is None:
            raise OrchestraError(f"the {chosen} backend needs the run's agent runtime; none was given")
        from orchestra_adapters.backends.cli_agent import create_cli_backend
        from orchestra_adapters.process.sandbox import agent_sandbox
        from orchestra_core.model.builtin_prices import price_table

        agent_settings = settings.cli_agents.get(chosen) if settings is not None else None
        sandbox = agent_sandbox(settings) if settings is not None else None
        prices = price_table(settings.pricing) if settings is not None else price_table()
        return create_cli_backend(chosen, agent_settings, runtime, sandbox, prices)
    if chosen == "direct":
        with collector_paused():
            from orchestra_adapters.backends.direct_backend import DirectLLMBackend

        return DirectLLMBackend(chat_models, resolver)
    if chosen == "langgraph":
        with collector_paused():
            from orchestra_adapters.backends.langgraph_backend import LangGraphBackend

        return LangGraphBackend(chat_models, resolver, toolset, state_path, tool_hooks=tool_hooks)
    raise UnknownBackendError(f"unknown backend {name!r}; choose one of: {', '.join(BACKEND_NAMES)}")


# The executable each CLI agent is looked up as when orchestra.yaml names none (the adapters agree).
DEFAULT_COMMANDS = {"claude-code": "claude", "codex": "codex"}


def cli_agent_command(name: str, settings: OrchestraSettings) -> str:
    """The command a CLI agent backend starts: `claude_code.command` / `codex.command`, else the default."""
    configured = settings.cli_agents.get(name)
    return (configured.command if configured is not None else None) or DEFAULT_COMMANDS[name]


def find_acp_agent(settings: OrchestraSettings, which: Callable[[str], str | None] = shutil.which) -> str | None:
    """Where the ACP agent's program (`acp.command`'s first word) is, by the rules of `find_cli_agent`; None when
    `acp.command` is empty or the program is not found."""
    command = settings.acp.command
    return _find_program(command[0], settings, which) if command else None


def find_cli_agent(
    name: str, settings: OrchestraSettings, which: Callable[[str], str | None] = shutil.which
) -> str | None:
    """Where a CLI agent's executable is: a path (`~` expanded, relative to the project root) when the
    command has a `/`, else looked up on PATH; None when not found or not executable."""
    return _find_program(cli_agent_command(name, settings), settings, which)


def _find_program(command: str, settings: OrchestraSettings, which: Callable[[str], str | None]) -> str | None:
    if os.sep not in command:
        return which(command)
    path = Path(command).expanduser()
    if not path.is_absolute():
        path = (settings.project_root or settings.base_dir) / path
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def settings_key(name: str) -> str:
    """orchestra.yaml's section of a CLI agent backend (`claude-code` -> `claude_code`)."""
    return name.replace("-", "_")
