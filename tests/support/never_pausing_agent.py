"""A stand-in CLI agent that never pauses: it makes every tool call of its script through Orchestra's MCP server
first, and only then prints its whole event stream, in Claude Code's (`-p --output-format stream-json`) or
Codex's (`exec --json`) format. So Orchestra reads each turn's end only after the agent's later turns have
written: the worst timing a real agent can reach, which the real CLIs cannot be made to show on cue.

Usage (as the `command` of the `claude_code:` or `codex:` section, through `agent_command`): the adapter's own
command line follows `--script FILE`; FILE is JSON, a list of turns, each `{"text", "calls": [[tool, args]]}` with
tools named as Orchestra names them over MCP (`project__write-file`).
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

SERVER = "orchestra"


def agent_command(directory: Path, script: list[dict[str, Any]]) -> Path:
    """Write the script and an executable that runs this stand-in with it; return the executable."""
    script_file = directory / "never-pausing-script.json"
    script_file.write_text(json.dumps(script), encoding="utf-8")
    command = directory / "never-pausing-agent"
    command.write_text(
        f"#!/bin/sh\nexec {json.dumps(sys.executable)} {json.dumps(__file__)} --script {json.dumps(str(script_file))} \"$@\"\n",
        encoding="utf-8",
    )
    command.chmod(0o755)
    return command


def _server(argv: list[str]) -> tuple[str, StdioServerParameters]:
    """Which format to print and how to start Orchestra's MCP server, from the adapter's command line."""
    if "--mcp-config" in argv:
        config = json.loads(Path(argv[argv.index("--mcp-config") + 1]).read_text(encoding="utf-8"))
        server = config["mcpServers"][SERVER]
        return "claude", StdioServerParameters(command=server["command"], args=server["args"], env=server["env"])
    prefix = f"mcp_servers.{SERVER}="
    table = next(arg.removeprefix(prefix) for arg in argv if arg.startswith(prefix))
    server = tomllib.loads(f"server = {table}")["server"]
    return "codex", StdioServerParameters(command=server["command"], args=server["args"], env=server["env"])


async def _play(params: StdioServerParameters, script: list[dict[str, Any]]) -> list[list[tuple[str, str, bool]]]:
    """Every call of every turn, made at once, one after the other: (tool, result text, is_error) per call."""
    results: list[list[tuple[str, str, bool]]] = []
    async with Client(params) as client:
        for turn in script:
            done = []
            for tool, arguments in turn["calls"]:
                result = await client.call_tool(tool, arguments)
                text = "".join(getattr(block, "text", "") for block in result.content)
                done.append((tool, text, bool(result.is_error)))
            results.append(done)
    return results


def _claude_stream(script: list[dict[str, Any]], results: list[list[tuple[str, str, bool]]]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": "never-pausing", "model": "stand-in",
         "mcp_servers": [{"name": SERVER, "status": "connected"}]},
    ]  # fmt: skip
    for number, (turn, done) in enumerate(zip(script, results, strict=True)):
        content: list[dict[str, Any]] = [{"type": "text", "text": turn["text"]}]
        for call, (tool, arguments) in enumerate(turn["calls"]):
            content.append({"type": "tool_use", "id": f"toolu_{number}_{call}", "name": f"mcp__{SERVER}__{tool}", "input": arguments})
        lines.append({"type": "assistant", "message": {"id": f"msg_{number}", "content": content}})
        for call, (_tool, text, failed) in enumerate(done):
            block = {"type": "tool_result", "tool_use_id": f"toolu_{number}_{call}", "content": text, "is_error": failed}
            lines.append({"type": "user", "message": {"content": [block]}})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "result": script[-1]["text"],
                  "usage": {"input_tokens": 10, "output_tokens": 5}})  # fmt: skip
    return lines


def _codex_stream(script: list[dict[str, Any]], results: list[list[tuple[str, str, bool]]]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{"type": "thread.started", "thread_id": "never-pausing"}]
    for number, (turn, done) in enumerate(zip(script, results, strict=True)):
        message = {"id": f"msg_{number}", "type": "agent_message", "text": turn["text"]}
        lines.append({"type": "item.completed", "item": message})
        for call, ((tool, arguments), (_tool, text, failed)) in enumerate(zip(turn["calls"], done, strict=True)):
            item = {"id": f"call_{number}_{call}", "type": "mcp_tool_call", "server": SERVER, "tool": tool,
                    "arguments": arguments, "status": "failed" if failed else "completed"}  # fmt: skip
            lines.append({"type": "item.started", "item": item})
            lines.append({"type": "item.completed", "item": {**item, "result": {"content": [{"type": "text", "text": text}]}}})
    lines.append({"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 5}})
    return lines


def main(argv: list[str]) -> int:
    script_file = argv[argv.index("--script") + 1]
    script = json.loads(Path(script_file).read_text(encoding="utf-8"))
    sys.stdin.read()  # the prompt
    kind, params = _server(argv)
    results = anyio.run(_play, params, script)
    stream = _claude_stream if kind == "claude" else _codex_stream
    for line in stream(script, results):
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
