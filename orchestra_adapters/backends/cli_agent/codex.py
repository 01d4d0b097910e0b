"""OpenAI's Codex CLI in non-interactive mode (`codex exec --json`): flags and stream."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from orchestra_adapters.backends.cli_agent.adapter import AgentStatePaths, home
from orchestra_adapters.backends.cli_agent.events import (
    AgentEvent,
    AgentResult,
    AgentStarted,
    ModelCall,
    TextOutput,
    ToolFinished,
    ToolStarted,
)
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.cli_agent.streams import json_object, result_text
from orchestra_adapters.mcp.spec import McpServerSpec
from orchestra_core.model.turn import TokenUsage

# Items of Codex's own tools: its shell, its patch tool, web search. They may change files outside ours.
NATIVE_ITEMS = ("command_execution", "file_change", "web_search")


class Codex:
    """The Codex adapter.

    Orchestra's MCP server is configured with `-c mcp_servers.<name>=...` and its tools approved in advance
    (exec mode cannot ask); Codex's own shell runs in its read-only sandbox, or `workspace-write` when
    `allowed_tools` names `shell`, unless `extra_args` choose the sandbox; whatever it changes anyway is
    caught by the untracked-writes safety net.
    """

    name = "codex"
    default_command = "codex"
    resumes_sessions = False  # `codex exec resume` exists (0.169.0) but is not wired yet: the prompt replays
    provider = "openai"

    def command(self, spec: CliAgentSpec, workdir: Path) -> list[str]:
        argv = [*spec.executable, "exec", "--json", "--skip-git-repo-check", f"--cd={spec.cwd}"]
        for server in spec.mcp_servers:
            argv += ["-c", f"mcp_servers.{server.name}={_server_table(server)}"]
            argv += ["-c", f'mcp_servers.{server.name}.default_tools_approval_mode="approve"']
            # Wait for the server's tools before the first model request (else the first call can miss them).
            argv += ["-c", f"mcp_servers.{server.name}.required=true"]
        if not _chooses_sandbox(spec.extra_args):
            argv += ["--sandbox", "workspace-write" if "shell" in spec.allowed_tools else "read-only"]
        if spec.model:
            argv.append(f"--model={spec.model}")  # one word: a value starting with "-" stays a value
        return [*argv, *spec.extra_args, "-"]

    def environment(self, spec: CliAgentSpec) -> Mapping[str, str]:
        return {}

    def parser(self) -> CodexStreamParser:
        return CodexStreamParser()

    def state_paths(self, env: Mapping[str, str]) -> AgentStatePaths:
        configured = env.get("CODEX_HOME")
        return AgentStatePaths(directories=(Path(configured) if configured else home(env) / ".codex",))


_SANDBOX_OPTIONS = ("--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox")


def _chooses_sandbox(args: tuple[str, ...]) -> bool:
    """Whether orchestra.yaml's `codex.args` pick the sandbox themselves (Codex refuses the option twice)."""
    return any(arg in _SANDBOX_OPTIONS or arg.startswith("--sandbox=") for arg in args)


def _server_table(server: McpServerSpec) -> str:
    """The server as a TOML inline table (JSON strings and arrays of strings are valid TOML)."""
    env = ", ".join(f"{json.dumps(key)} = {json.dumps(value)}" for key, value in server.env.items())
    return (
        f"{{command = {json.dumps(server.command)}, args = {json.dumps(list(server.args))}, env = {{{env}}}}}"
    )


class CodexStreamParser:
    """Reads `codex exec --json` lines (`thread.started`, `item.*`, `turn.completed`, `turn.failed`).

    Codex does not mark where one model response ends; a response is taken to end when the tools it
    called have finished, so the next item after them starts a new turn.
    """

    def __init__(self) -> None:
        self._last_message = ""
        self._responses = 0
        self._after_tools = True
        self._started: set[str] = set()
        self._seen: set[str] = set()

    def parse(self, line: str) -> Iterator[AgentEvent]:
        record = json_object(line)
        if record is None:
            return
        kind = record.get("type")
        if kind == "thread.started":
            yield AgentStarted(session_id=str(record.get("thread_id") or ""))
        elif kind in ("item.started", "item.completed"):
            item = record.get("item")
            if isinstance(item, Mapping):
                yield from self._item(item, finished=kind == "item.completed")
        elif kind == "turn.completed":
            usage = record.get("usage")
            tokens = _tokens(usage) if isinstance(usage, Mapping) else None
            yield AgentResult(text=self._last_message, usage=tokens)
        elif kind == "turn.failed":
            error = record.get("error")
            message = str(error.get("message") if isinstance(error, Mapping) else error or "the turn failed")
            yield AgentResult(text=message, is_error=True, detail=message)

    def _item(self, item: Mapping[str, Any], *, finished: bool) -> Iterator[AgentEvent]:
        kind = item.get("type")
        item_id = str(item.get("id") or "")
        if kind not in ("agent_message", "mcp_tool_call", *NATIVE_ITEMS):
            return  # reasoning, warnings (`error` items), plans: no part of a turn's record
        first_sight = item_id not in self._seen
        self._seen.add(item_id)
        if first_sight and self._after_tools:
            self._responses += 1
            self._after_tools = False
            yield ModelCall(f"response-{self._responses}")
        if kind == "agent_message":
            if finished:
                self._last_message = str(item.get("text") or "")
                yield TextOutput(self._last_message)
        elif kind == "mcp_tool_call":
            yield from self._tool(
                item_id, f"mcp__{item.get('server')}__{item.get('tool')}", item, finished, native=False
            )
        elif kind in NATIVE_ITEMS:
            yield from self._tool(item_id, str(kind), item, finished, native=True)

    def _tool(
        self, item_id: str, name: str, item: Mapping[str, Any], finished: bool, *, native: bool
    ) -> Iterator[AgentEvent]:
        if item_id not in self._started:
            self._started.add(item_id)
            yield ToolStarted(item_id, name, _arguments(item), native=native)
        if finished:
            self._after_tools = True
            text, failed = _outcome(item)
            yield ToolFinished(item_id, text, failed)


def _arguments(item: Mapping[str, Any]) -> Mapping[str, Any]:
    kind = item.get("type")
    if kind == "mcp_tool_call":
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                return {"arguments": arguments}
        return arguments if isinstance(arguments, Mapping) else {}
    if kind == "command_execution":
        return {"command": item.get("command")}
    if kind == "file_change":
        return {"changes": item.get("changes")}
    return {key: value for key, value in item.items() if key not in ("id", "type", "status")}


def _outcome(item: Mapping[str, Any]) -> tuple[str, bool]:
    """The tool's result text and whether it failed."""
    if item.get("type") == "mcp_tool_call":
        error = item.get("error")
        if error:
            return (str(error.get("message") if isinstance(error, Mapping) else error), True)
        result = item.get("result")
        content = result.get("content") if isinstance(result, Mapping) else result
        failed = item.get("status") == "failed" or bool(
            isinstance(result, Mapping) and result.get("is_error")
        )
        return result_text(content), failed
    if item.get("type") == "command_execution":
        code = item.get("exit_code")
        return str(item.get("aggregated_output") or ""), code not in (0, None) or item.get(
            "status"
        ) == "failed"
    return "", item.get("status") == "failed"


def _tokens(usage: Mapping[str, Any]) -> TokenUsage:
    """`turn.completed`'s usage: `input_tokens` counts the cached ones too (`cached_input_tokens`, as OpenAI
    reports them)."""
    prompt, completion, cached = (usage.get(key) for key in ("input_tokens", "output_tokens", "cached_input_tokens"))
    return TokenUsage(_count(prompt), _count(completion), min(_count(cached), _count(prompt)))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
