"""What a CLI agent is asked to do, independent of which CLI it is (seed 002: the abstract tool-restriction
interface): the executable, the model, the tools it keeps or loses, the MCP servers it connects to."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from attrs import field, frozen

from orchestra_adapters.mcp.spec import McpServerSpec
from orchestra_core.model.immutable import frozen_map, str_tuple


@frozen(kw_only=True)
class CliAgentSpec:
    """One run of a CLI agent.

    Attributes:
        executable: The command that starts the agent, with any leading arguments (`("claude",)`).
        model: The model to ask for; None lets the agent choose its default.
        allowed_tools: The agent's own (native) tools it keeps; empty: none of them, only the MCP servers'.
        disallowed_tools: Native tools removed even when `allowed_tools` would keep them.
        mcp_servers: The MCP servers it connects to (Orchestra's tool server first).
        cwd: The directory it works in (the session worktree of the node's repo).
        timeout_s: Seconds before the agent and everything it started are killed; None: no limit.
        extra_args: Arguments added at the end of the command line, as given.
        env: Environment variables for the agent (on top of the inherited environment).
        resume_session: The CLI's own session to continue (the stdin then carries only the next message);
            None: a new session. Only for adapters that `resumes_sessions`.
        fallback_models: Models the agent goes on with when its model is busy or unavailable, in order (Claude
            Code's `--fallback-model`); agents without such a switch ignore them.
    """

    executable: tuple[str, ...] = field(converter=str_tuple)
    model: str | None = None
    allowed_tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    disallowed_tools: tuple[str, ...] = field(default=(), converter=str_tuple)
    mcp_servers: tuple[McpServerSpec, ...] = ()
    cwd: Path = field(factory=Path.cwd, converter=Path)
    timeout_s: float | None = None
    extra_args: tuple[str, ...] = field(default=(), converter=str_tuple)
    env: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    resume_session: str | None = None
    fallback_models: tuple[str, ...] = field(default=(), converter=str_tuple)
