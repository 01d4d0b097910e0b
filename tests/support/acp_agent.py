"""A stand-in ACP agent for tests: the `acp` library's agent side, doing what a JSON script says.

`python -m tests.support.acp_agent SCRIPT.json` (or the script in `$ACP_STANDIN_SCRIPT`). The script's `steps`
run in order on `session/prompt`, then the prompt is answered with `stop_reason` (default `end_turn`):

- `{"message": text}`, `{"thought": text}`: a chunk of the response (a new response after finished tool calls).
- `{"mcp": {"id", "tool", "arguments"}}`: a tool call of Orchestra's MCP server (the session's first server,
  over the `mcp` library's stdio client): `tool_call` (titled `mcp__<server>__<tool>`), the call, its result.
- `{"fs_write": {"id", "path", "content"}}`: a `kind: edit` tool call done with `fs/write_text_file` (a relative
  path is joined to the session's cwd; `"bare": true` shows no tool call); `{"fs_read": {"id", "path", "line", "limit"}}` likewise with a read.
- `{"permission": {"id", "kind", "title", "locations"?}}`: a tool call that asks `session/request_permission`;
  allowed, it completes; rejected, it fails.
- `{"native_write": {"path", "content"}}`: writes the file itself, past Orchestra (an `edit` tool call).
- `{"shell": {"id", "command"}}`: runs `sh -c command` itself, unasked (an `execute` tool call; its output the
  result).
- `{"plan": [{"content", "status"}]}`, `{"usage": {"amount": 0.5}}` (a `usage_update` with a USD cost).
- `{"crash": status}`: exits at once. `{"garbage": text}`: prints a line that is not JSON-RPC.
- `{"hang": {"honour_cancel": bool, "note": path}}`: waits forever (or until `session/cancel`, then notes it in
  `path` and answers `cancelled`).
- `{"child": path}`: starts a `sleep` that would outlive it and writes `<own pid> <child pid>` to `path`.
- `{"record": path}`: writes what it was given (initialize's capabilities, session/new's cwd and MCP servers,
  the prompt) to `path` as JSON.

The prompt's response carries `usage` from the script's `prompt_usage`, when given. With `auth_method`, the agent
offers that authentication method and opens no session before the client authenticates with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, run_agent
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AuthMethodAgent,
    ContentToolCallContent,
    Cost,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptResponse,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


class StandIn:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.conn: Any = None
        self.cwd = Path.cwd()
        self.servers: list[Any] = []
        self.given: dict[str, Any] = {}
        self.cancelled = asyncio.Event()
        self.mcp: Any = None
        self.mcp_stack = contextlib.AsyncExitStack()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any
    ) -> InitializeResponse:
        self.given["capabilities"] = (
            client_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            if client_capabilities
            else None
        )
        self.given["client"] = client_info.name if client_info else None
        methods = (
            [AuthMethodAgent(id=self.script["auth_method"], name="key")]
            if self.script.get("auth_method")
            else []
        )
        return InitializeResponse(
            protocol_version=self.script.get("protocol_version", PROTOCOL_VERSION),
            agent_info=Implementation(name="acp-stand-in", version="1.0"),
            auth_methods=methods,
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        if self.script.get("auth_method") and self.given.get("authenticated") != self.script["auth_method"]:
            from acp import RequestError

            raise RequestError.auth_required()
        if "refuse_session" in self.script:
            from acp import RequestError

            raise RequestError(-32000, self.script["refuse_session"])
        self.cwd = Path(cwd)
        self.servers = list(mcp_servers or [])
        self.given["cwd"] = cwd
        self.given["mcp_servers"] = [s.model_dump(mode="json", by_alias=True) for s in self.servers]
        return NewSessionResponse(session_id="standin-session-1")

    async def authenticate(self, method_id: str, **_: Any) -> None:
        self.given["authenticated"] = method_id

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        self.given["prompt"] = "".join(getattr(block, "text", "") for block in prompt)
        try:
            for step in self.script.get("steps", []):
                stop = await self.step(session_id, step)
                if stop is not None:
                    return PromptResponse(stop_reason=stop)
        finally:
            await self.mcp_stack.aclose()
        usage = self.script.get("prompt_usage")
        return PromptResponse(
            stop_reason=self.script.get("stop_reason", "end_turn"),
            usage=Usage(**usage) if usage else None,
        )

    async def update(self, session_id: str, update: Any) -> None:
        await self.conn.session_update(session_id=session_id, update=update)

    async def step(self, session_id: str, step: dict[str, Any]) -> str | None:
        kind, value = next(iter(step.items()))
        if kind == "message":
            await self.update(
                session_id, AgentMessageChunk(session_update="agent_message_chunk", content=_text(value))
            )
        elif kind == "thought":
            await self.update(
                session_id, AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(value))
            )
        elif kind == "mcp":
            await self.call_mcp(session_id, value)
        elif kind == "fs_write":
            await self.fs_write(session_id, value)
        elif kind == "fs_read":
            await self.fs_read(session_id, value)
        elif kind == "permission":
            await self.ask(session_id, value)
        elif kind == "native_write":
            await self.tool_start(session_id, value.get("id", "native"), "Write", "edit", value)
            (self.cwd / value["path"]).write_text(value["content"], encoding="utf-8")
            await self.tool_end(session_id, value.get("id", "native"), "written")
        elif kind == "shell":
            await self.tool_start(session_id, value["id"], "Shell", "execute", {"command": value["command"]})
            done = subprocess.run(
                ["sh", "-c", value["command"]], capture_output=True, text=True, cwd=self.cwd
            )
            await self.tool_end(
                session_id, value["id"], done.stdout + done.stderr, failed=done.returncode != 0
            )
        elif kind == "plan":
            entries = [
                PlanEntry(content=e["content"], status=e.get("status", "pending"), priority="medium")
                for e in value
            ]
            await self.update(session_id, AgentPlanUpdate(session_update="plan", entries=entries))
        elif kind == "usage":
            cost = Cost(amount=value["amount"], currency="USD")
            await self.update(
                session_id, UsageUpdate(session_update="usage_update", used=1, size=100, cost=cost)
            )
        elif kind == "crash":
            sys.stderr.write("the stand-in falls over\n")
            sys.stderr.flush()
            os._exit(int(value))
        elif kind == "garbage":
            await asyncio.sleep(0.05)  # after the messages before it are out
            os.write(1, value.encode("utf-8") + b"\n")
        elif kind == "hang":
            sys.stderr.write("the stand-in is thinking hard\n")
            sys.stderr.flush()
            if value.get("honour_cancel"):
                await self.cancelled.wait()
                if value.get("note"):
                    Path(value["note"]).write_text("session/cancel came", encoding="utf-8")
                return "cancelled"
            await asyncio.Event().wait()
        elif kind == "child":
            child = subprocess.Popen(["sleep", "300"])
            Path(value).write_text(f"{os.getpid()} {child.pid}", encoding="utf-8")
        elif kind == "record":
            Path(value).write_text(json.dumps(self.given), encoding="utf-8")
        return None

    async def tool_start(
        self, session_id: str, call_id: str, title: str, kind: str, raw: Any, locations: list[str] = ()
    ) -> None:  # type: ignore[assignment]
        where = [ToolCallLocation(path=path) for path in locations] or None
        await self.update(
            session_id,
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=call_id,
                title=title,
                kind=kind,
                status="in_progress",
                raw_input=raw,
                locations=where,
            ),
        )

    async def tool_end(self, session_id: str, call_id: str, text: str, failed: bool = False) -> None:
        content = [ContentToolCallContent(type="content", content=_text(text))]
        await self.update(
            session_id,
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="failed" if failed else "completed",
                content=content,
            ),
        )

    async def call_mcp(self, session_id: str, value: dict[str, Any]) -> None:
        server = self.servers[0]
        await self.tool_start(
            session_id, value["id"], f"mcp__{server.name}__{value['tool']}", "other", value["arguments"]
        )
        if self.mcp is None:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client

            env = {**os.environ, **{variable.name: variable.value for variable in server.env}}
            parameters = StdioServerParameters(command=server.command, args=list(server.args), env=env)
            read, write = await self.mcp_stack.enter_async_context(stdio_client(parameters))
            self.mcp = await self.mcp_stack.enter_async_context(ClientSession(read, write))
            await self.mcp.initialize()
        result = await self.mcp.call_tool(value["tool"], value["arguments"])
        text = "".join(getattr(block, "text", "") for block in result.content)
        await self.tool_end(
            session_id,
            value["id"],
            text,
            failed=bool(getattr(result, "is_error", None) or getattr(result, "isError", False)),
        )

    def _path(self, path: str) -> str:
        return path if path.startswith("/") else str(self.cwd / path)

    async def fs_write(self, session_id: str, value: dict[str, Any]) -> None:
        path = self._path(value["path"])
        if value.get("bare"):  # no tool call shown: the write alone
            with contextlib.suppress(Exception):
                await self.conn.write_text_file(session_id=session_id, path=path, content=value["content"])
            return
        await self.tool_start(
            session_id, value["id"], f"WriteFile {value['path']}", "edit", {"file_path": path}, [path]
        )
        try:
            await self.conn.write_text_file(session_id=session_id, path=path, content=value["content"])
        except Exception as error:
            await self.tool_end(
                session_id, value["id"], f"refused ({getattr(error, 'code', '')}): {error}", failed=True
            )
            return
        await self.tool_end(session_id, value["id"], "written")

    async def fs_read(self, session_id: str, value: dict[str, Any]) -> None:
        path = self._path(value["path"])
        await self.tool_start(
            session_id, value["id"], f"ReadFile {value['path']}", "read", {"file_path": path}, [path]
        )
        try:
            response = await self.conn.read_text_file(
                session_id=session_id, path=path, line=value.get("line"), limit=value.get("limit")
            )
        except Exception as error:
            await self.tool_end(
                session_id, value["id"], f"refused ({getattr(error, 'code', '')}): {error}", failed=True
            )
            return
        await self.tool_end(session_id, value["id"], response.content)

    async def ask(self, session_id: str, value: dict[str, Any]) -> None:
        locations = [self._path(path) for path in value.get("locations", [])]
        call_id = value["id"]
        await self.tool_start(
            session_id, call_id, value["title"], value["kind"], value.get("rawInput", {}), locations
        )
        options = [
            PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        where = [ToolCallLocation(path=path) for path in locations] or None
        call = ToolCallUpdate(
            tool_call_id=call_id,
            title=value["title"],
            kind=value["kind"],
            locations=where,
            raw_input=value.get("rawInput"),
        )
        answer = await self.conn.request_permission(session_id=session_id, tool_call=call, options=options)
        chosen = getattr(answer.outcome, "option_id", None)
        if chosen == "yes":
            await self.tool_end(session_id, call_id, "allowed and done")
        else:
            await self.tool_end(session_id, call_id, f"not allowed ({chosen or 'cancelled'})", failed=True)


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else os.environ["ACP_STANDIN_SCRIPT"]
    script = json.loads(Path(source).read_text(encoding="utf-8"))
    if "stderr" in script:
        sys.stderr.write(script["stderr"] + "\n")
        sys.stderr.flush()
    asyncio.run(run_agent(StandIn(script)))


if __name__ == "__main__":
    main()
