"""Claude Code in print mode (`claude -p --output-format stream-json`): flags and stream."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from orchestra_adapters.backends.cli_agent.adapter import AgentStatePaths, home
from orchestra_adapters.backends.cli_agent.events import (
    AgentEvent,
    AgentResult,
    AgentStarted,
    ModelCall,
    ModelSwitched,
    TextOutput,
    ToolFinished,
    ToolStarted,
    UsageReport,
)
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.cli_agent.streams import items, json_object, mapping, result_text
from orchestra_core.model.turn import TokenUsage

# Claude Code's own tools that change files: never offered, so every write goes through Orchestra's tools.
WRITING_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
SHELL_TOOL = "Bash"
MCP_PREFIX = "mcp__"


class ClaudeCode:
    """The Claude Code adapter.

    Only the native tools named in `allowed_tools` are offered (none by default: Orchestra's MCP tools
    read, search and write); the writing tools never are, and `Bash` only when named. The MCP servers'
    tools are pre-approved (`--allowedTools mcp__<server>`), since print mode cannot ask. A resumed run
    (`--resume=<session id>`) continues the session Claude Code keeps under its config directory (by working
    directory): an unknown id ends the run with an error result and no `init` line.
    """

    name = "claude-code"
    default_command = "claude"
    resumes_sessions = True
    provider = "anthropic"

    def command(self, spec: CliAgentSpec, workdir: Path) -> list[str]:
        config = workdir / "mcp-config.json"
        config.write_text(json.dumps(mcp_config(spec)), encoding="utf-8")
        native = [tool for tool in spec.allowed_tools if tool not in WRITING_TOOLS]
        removed = [*WRITING_TOOLS, *([] if SHELL_TOOL in native else [SHELL_TOOL]), *spec.disallowed_tools]
        argv = [
            *spec.executable,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            *([f"--resume={spec.resume_session}"] if spec.resume_session else []),
            # Only the user's own settings: a repo's .claude/settings.json is agent-writable, and its hooks
            # would run commands on the host.
            "--setting-sources",
            "user",
            "--strict-mcp-config",
            "--mcp-config",
            str(config),
            "--tools",
            ",".join(native),
            "--allowedTools",
            ",".join([f"{MCP_PREFIX}{server.name}" for server in spec.mcp_servers] + native),
            "--disallowedTools",
            ",".join(dict.fromkeys(removed)),
        ]
        if spec.model:
            argv.append(f"--model={spec.model}")  # one word: a value starting with "-" stays a value
        if spec.fallback_models:
            argv.append(f"--fallback-model={','.join(spec.fallback_models)}")
        return [*argv, *spec.extra_args]

    def environment(self, spec: CliAgentSpec) -> Mapping[str, str]:
        # MCP tools are otherwise deferred behind a ToolSearch tool the model must call first.
        return {"ENABLE_TOOL_SEARCH": "false"}

    def parser(self) -> ClaudeStreamParser:
        return ClaudeStreamParser()

    def state_paths(self, env: Mapping[str, str]) -> AgentStatePaths:
        configured = env.get("CLAUDE_CONFIG_DIR")
        directory = Path(configured) if configured else home(env) / ".claude"
        return AgentStatePaths(directories=(directory,), files=(home(env) / ".claude.json",))


def mcp_config(spec: CliAgentSpec) -> dict[str, Any]:
    """The `--mcp-config` document naming the spec's stdio servers."""
    servers = {
        server.name: {
            "type": "stdio",
            "command": server.command,
            "args": list(server.args),
            "env": dict(server.env),
        }
        for server in spec.mcp_servers
    }
    return {"mcpServers": servers}


class ClaudeStreamParser:
    """Reads `--output-format stream-json --verbose` lines.

    Claude Code prints one `assistant` line per content block of a response, all with the response's
    message id, then one `user` line per tool result; `result` ends the run.
    """

    def parse(self, line: str) -> Iterator[AgentEvent]:
        record = json_object(line)
        if record is None:
            return
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "init":
            yield _started(record)
        elif kind == "system" and record.get("subtype") == "model_fallback":
            yield ModelSwitched(str(record.get("content") or ""))
        elif kind == "assistant":
            yield from _assistant(mapping(record.get("message")))
        elif kind == "user":
            yield from _tool_results(mapping(record.get("message")))
        elif kind == "result":
            yield _result(record)


def _started(record: Mapping[str, Any]) -> AgentStarted:
    servers = {
        str(server.get("name")): str(server.get("status"))
        for server in items(record.get("mcp_servers"))
        if isinstance(server, Mapping)
    }
    return AgentStarted(str(record.get("session_id") or ""), str(record.get("model") or ""), servers)


def _assistant(message: Mapping[str, Any]) -> Iterator[AgentEvent]:
    yield ModelCall(str(message.get("id") or ""), str(message.get("model") or ""))
    for block in items(message.get("content")):
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            yield TextOutput(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            name = str(block.get("name") or "")
            arguments = block.get("input")
            yield ToolStarted(
                str(block.get("id") or ""),
                name,
                arguments if isinstance(arguments, Mapping) else {},
                native=not name.startswith(MCP_PREFIX),
            )
    usage = message.get("usage")
    if isinstance(usage, Mapping):
        yield UsageReport(_tokens(usage))


def _tool_results(message: Mapping[str, Any]) -> Iterator[AgentEvent]:
    for block in items(message.get("content")):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            yield ToolFinished(
                str(block.get("tool_use_id") or ""),
                result_text(block.get("content")),
                bool(block.get("is_error")),
            )


def _result(record: Mapping[str, Any]) -> AgentResult:
    is_error = bool(record.get("is_error")) or record.get("subtype") not in (None, "success")
    errors = record.get("errors")
    detail = "; ".join(str(error) for error in errors) if isinstance(errors, list) else ""
    usage = record.get("usage")
    cost = record.get("total_cost_usd")
    return AgentResult(
        text=str(record.get("result") or ""),
        is_error=is_error,
        detail=detail or str(record.get("subtype") or ""),
        usage=_tokens(usage) if isinstance(usage, Mapping) else None,
        cost_usd=float(cost) if isinstance(cost, int | float) and _is_amount(cost) else None,
    )


def _tokens(usage: Mapping[str, Any]) -> TokenUsage:
    """Prompt tokens include the cached ones (Anthropic reports them apart); the cache reads and writes are kept
    apart too (they are billed at other prices)."""
    read, written = _int(usage.get("cache_read_input_tokens")), _int(usage.get("cache_creation_input_tokens"))
    return TokenUsage(_int(usage.get("input_tokens")) + read + written, _int(usage.get("output_tokens")), read, written)


def _is_amount(value: Any) -> bool:
    """A cost an agent could have run up (the stream is the agent's: anything else is ignored)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value < 1e9


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
