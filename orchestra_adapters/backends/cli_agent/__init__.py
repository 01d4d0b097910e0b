"""CLI coding agents (Claude Code, Codex) as a CodergenBackend, their tools served over MCP.

`create_cli_backend(name, settings, runtime)` builds the backend for a name in `CLI_AGENT_NAMES`; a new CLI
agent needs only an adapter (its flags and stream format, `adapter.CliAgentAdapter`) added to `ADAPTERS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestra_adapters.backends.cli_agent.adapter import CliAgentAdapter
from orchestra_adapters.backends.cli_agent.claude_code import ClaudeCode
from orchestra_adapters.backends.cli_agent.codex import Codex

if TYPE_CHECKING:
    from orchestra_adapters.backends.cli_agent.backend import CLIAgentBackend
    from orchestra_adapters.process.sandbox import AgentSandbox
    from orchestra_core.model.pricing import PriceTable
    from orchestra_core.model.settings import CliAgentSettings
    from orchestra_core.runs.ports import AgentRuntime

ADAPTERS: dict[str, CliAgentAdapter] = {adapter.name: adapter for adapter in (ClaudeCode(), Codex())}
CLI_AGENT_NAMES = tuple(ADAPTERS)


def create_cli_backend(
    name: str,
    settings: CliAgentSettings | None,
    runtime: AgentRuntime,
    sandbox: AgentSandbox | None = None,
    prices: PriceTable | None = None,
) -> CLIAgentBackend:
    """The CLI agent backend called `name` (`claude-code`, `codex`) for one run (in `sandbox`, when given; its turns
    priced with `prices`).

    Raises:
        KeyError: `name` is not a CLI agent Orchestra has an adapter for.
    """
    from orchestra_adapters.backends.cli_agent.backend import CLIAgentBackend

    return CLIAgentBackend(ADAPTERS[name], runtime, settings, sandbox, prices)


def default_command(name: str) -> str:
    """The executable a CLI agent is looked up as when orchestra.yaml names none (`claude`)."""
    return ADAPTERS[name].default_command
