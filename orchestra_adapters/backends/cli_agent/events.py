"""What a CLI agent's output stream says, whichever agent printed it: one small vocabulary of events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.turn import TokenUsage


@frozen
class AgentStarted:
    """The agent is up: its session id (for resuming its conversation), model and MCP servers' states."""

    session_id: str = ""
    model: str = ""
    mcp_servers: Mapping[str, str] = field(factory=dict, converter=frozen_map)  # name -> status


@frozen
class ModelCall:
    """A new model response begins (a new agent turn); `model` is the model that gives it, when the agent says."""

    message_id: str = ""
    model: str = ""


@frozen
class ModelSwitched:
    """The agent went on with one of its fallback models (Claude Code's `--fallback-model`); `text` says why."""

    text: str = ""


@frozen
class TextOutput:
    """Text the model wrote."""

    text: str


@frozen
class ToolStarted:
    """The model called a tool (`name` as the agent names it, e.g. `mcp__orchestra__project__write-file`)."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    native: bool = False  # one of the agent's own tools (a shell, its file tools), not an MCP server's


@frozen
class ToolFinished:
    """A tool call's result."""

    call_id: str
    result: str = ""
    is_error: bool = False


@frozen
class UsageReport:
    """Tokens used by the model call in progress (`replace`: the figure is the call's total so far)."""

    usage: TokenUsage
    replace: bool = True


@frozen
class AgentResult:
    """The agent's final answer: the node's response, or its failure; `usage` and `cost_usd`: the run's totals,
    when the agent reports them (Claude Code's `total_cost_usd`)."""

    text: str
    is_error: bool = False
    detail: str = ""
    usage: TokenUsage | None = None
    cost_usd: float | None = None


AgentEvent = (
    AgentStarted | ModelCall | ModelSwitched | TextOutput | ToolStarted | ToolFinished | UsageReport | AgentResult
)
