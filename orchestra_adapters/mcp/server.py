"""The stdio MCP server (on the `mcp` package's low-level 2.x `Server`) and where its tools come from.

A `ToolSource` lists tools and runs calls: `LocalToolSource` runs a Toolbox in this process (`orchestra mcp
serve` by hand); `RemoteToolSource` forwards to a `ToolHost` in the orchestrating process over a Unix socket
(the proxy an agent starts). This module imports only the standard library at module level, so the proxy
pays for nothing but `mcp`; the wire format (one JSON object per line) is shared with `tool_host`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from orchestra_adapters.tools.toolbox import ExecutedCall, Toolbox
    from orchestra_core.model.outcome import Outcome

log = logging.getLogger(__name__)

REPORT_OUTCOME = "report_outcome"  # the Toolbox's built-in tool (not imported: it pulls in langchain)
REPORT_OUTCOME_DESCRIPTION = (
    "Report this stage's outcome to the pipeline. Call it when the outcome is not plain success, or to "
    "choose where the pipeline goes next; then finish with a short summary of what you did."
)
TOKEN_ENV = "ORCHESTRA_MCP_TOKEN"  # how the proxy gets the tool host's token
CALL_TIMEOUT_ENV = "ORCHESTRA_MCP_CALL_TIMEOUT"
DEFAULT_CALL_TIMEOUT_S = 30 * 60.0  # a tool call may run a long command; commands have their own timeouts
CONNECT_TIMEOUT_S = 10.0
LIST_TIMEOUT_S = 60.0
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
HOST_GONE = "Orchestra's tool host is gone"


class ToolSourceError(Exception):
    """The tools cannot be reached (the tool host is gone, timed out or answered nonsense)."""


class ToolSource(Protocol):
    """Where an MCP server's tools come from."""

    def list_tools(self) -> list[dict[str, Any]]:
        """The tools as MCP describes them: `{"name", "description", "inputSchema"}` each.

        Raises:
            ToolSourceError: The tools cannot be reached.
        """
        ...

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        """Run one call; returns the text the agent sees and whether it is an error. Never raises."""
        ...


def encode_message(message: Mapping[str, Any]) -> bytes:
    """One wire message: a JSON object on one line."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode_message(line: bytes) -> dict[str, Any] | None:
    """The JSON object on a wire line, or None when the line is not one (or is over-long)."""
    if len(line) > MAX_MESSAGE_BYTES or not line.endswith(b"\n"):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def call_timeout_from_env() -> float:
    """Seconds a tool call may take: ORCHESTRA_MCP_CALL_TIMEOUT, else 30 minutes."""
    raw = os.environ.get(CALL_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_CALL_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        log.warning("%s=%r is not a positive number of seconds; using %g", CALL_TIMEOUT_ENV, raw,
                    DEFAULT_CALL_TIMEOUT_S)
        return DEFAULT_CALL_TIMEOUT_S
    return value


def mcp_tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI-format function definition (what `Toolbox.schemas()` gives) as an MCP tool."""
    function = definition["function"]
    name = function["name"]
    description = REPORT_OUTCOME_DESCRIPTION if name == REPORT_OUTCOME else function.get("description", "")
    schema = dict(function.get("parameters") or {})
    schema.setdefault("type", "object")
    return {"name": name, "description": description, "inputSchema": schema}


class LocalToolSource:
    """A Toolbox's tools run in this process, one call at a time (they share the tracker and the worktree).

    For a CLI agent, `report_outcome` records the outcome and tells the agent to finish with a summary (the
    call cannot end the agent's loop the way it ends a LangGraph stage).
    """

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        report_outcome: bool = True,
        on_call: Callable[[ExecutedCall], None] | None = None,
    ) -> None:
        """Describe the toolbox's tools once.

        Args:
            toolbox: The tools.
            report_outcome: Offer the built-in `report_outcome` (not without a pipeline stage to report to).
            on_call: Called after each call (under the lock), e.g. to log the files it wrote.

        Raises:
            ToolSchemaError: A tool's parameters have no JSON Schema.
        """
        self._toolbox = toolbox
        self._tools = [
            mcp_tool(definition)
            for definition in toolbox.schemas()
            if report_outcome or definition["function"]["name"] != REPORT_OUTCOME
        ]
        self._names = {tool["name"] for tool in self._tools}
        self._on_call = on_call
        self._lock = threading.Lock()
        self._calls: list[ExecutedCall] = []
        self._outcome: Outcome | None = None

    @property
    def reported_outcome(self) -> Outcome | None:
        """The outcome of the last successful `report_outcome` call, if any."""
        return self._outcome

    def calls(self) -> list[ExecutedCall]:
        """Every call executed so far, in order."""
        with self._lock:
            return list(self._calls)

    def list_tools(self) -> list[dict[str, Any]]:
        return [dict(tool) for tool in self._tools]

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No call runs (or is half done) while the block runs: a consistent view of the files."""
        with self._lock:
            yield

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        try:
            executed = self.execute(name, arguments)
        except Exception as error:  # the toolbox turns tool failures into results; this is a last resort
            log.exception("tool %s failed", name)
            return f"Error: {type(error).__name__}: {error}", True
        return executed.text, executed.failed

    def execute(self, name: str, arguments: Any) -> ExecutedCall:
        """Run one call under the lock and keep it."""
        with self._lock:
            call_id = f"mcp-{len(self._calls) + 1}"
            if name in self._names:
                executed = self._toolbox.execute(name, arguments, call_id)
            else:  # not offered here (report_outcome without a stage), or no such tool
                executed = _unknown(name, arguments, call_id, sorted(self._names))
            if executed.outcome is not None:
                executed = _finish_hint(executed)
                self._outcome = executed.outcome
            self._calls.append(executed)
            if self._on_call is not None:
                self._on_call(executed)
            return executed


def _unknown(name: str, arguments: Any, call_id: str, available: list[str]) -> ExecutedCall:
    from orchestra_adapters.tools.toolbox import ExecutedCall
    from orchestra_core.model.turn import ToolCall

    args = dict(arguments) if isinstance(arguments, Mapping) else {}
    error = f"unknown tool {name!r}; available tools: {', '.join(available) or 'none'}"
    return ExecutedCall(ToolCall(name, args, call_id, error=error))


def _finish_hint(executed: ExecutedCall) -> ExecutedCall:
    from attrs import evolve

    assert executed.outcome is not None
    text = (
        f"Outcome recorded: {executed.outcome.status.value}. Now finish: end your reply with a short summary "
        "of what you did."
    )
    return evolve(executed, record=evolve(executed.record, result=text))


class RemoteToolSource:
    """The tools of a `ToolHost` in another process, reached over its Unix socket (one connection a request).

    A host that is gone, refuses the token or does not answer in time makes each call an error result
    naming the problem; the proxy itself keeps serving.
    """

    def __init__(
        self,
        address: str,
        token: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        call_timeout: float | None = None,
    ) -> None:
        self._address = address
        self._token = token
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout if call_timeout is not None else call_timeout_from_env()
        self._tools: list[dict[str, Any]] | None = None

    def list_tools(self) -> list[dict[str, Any]]:
        if self._tools is None:
            tools = self._request({"op": "list"}, LIST_TIMEOUT_S).get("tools")
            if not isinstance(tools, list) or not all(_is_tool(tool) for tool in tools):
                raise ToolSourceError(f"{HOST_GONE}: it sent an unreadable tool list")
            self._tools = tools
        return [dict(tool) for tool in self._tools]

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        message = {"op": "call", "name": name, "arguments": dict(arguments)}
        try:
            reply = self._request(message, self._call_timeout)
        except ToolSourceError as error:
            return f"Error: {error}", True
        text, is_error = reply.get("text"), reply.get("is_error")
        if not isinstance(text, str) or not isinstance(is_error, bool):
            return f"Error: {HOST_GONE}: it sent an unreadable result", True
        return text, is_error

    def _request(self, message: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        data = encode_message({"token": self._token, **message})
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                self._connect(sock)
                sock.settimeout(timeout)
                sock.sendall(data)
                with sock.makefile("rb") as reader:
                    line = reader.readline(MAX_MESSAGE_BYTES + 1)
        except TimeoutError:
            raise ToolSourceError(f"{HOST_GONE}: no answer within {timeout:g} s") from None
        except OSError as error:
            raise ToolSourceError(f"{HOST_GONE} ({error.strerror or error})") from None
        if not line:
            raise ToolSourceError(f"{HOST_GONE}: it closed the connection without an answer")
        reply = decode_message(line)
        if reply is None:
            raise ToolSourceError(f"{HOST_GONE}: it sent an unreadable answer")
        return reply


    def _connect(self, sock: socket.socket) -> None:
        """Connect, waiting while the host's backlog is full (a Unix socket then fails at once with EAGAIN)."""
        deadline = time.monotonic() + self._connect_timeout
        sock.settimeout(self._connect_timeout)
        while True:
            try:
                sock.connect(self._address)
                return
            except (BlockingIOError, TimeoutError):
                if time.monotonic() >= deadline:
                    raise ToolSourceError(
                        f"{HOST_GONE}: no connection within {self._connect_timeout:g} s"
                    ) from None
                time.sleep(0.01)


def _is_tool(tool: Any) -> bool:
    return isinstance(tool, dict) and isinstance(tool.get("name"), str) and isinstance(tool.get("inputSchema"), dict)


async def serve_stdio(source: ToolSource, *, name: str = "orchestra") -> None:
    """Serve `source`'s tools over MCP on stdin/stdout until the client closes stdin.

    Tool failures (refused paths, unknown tools, bad arguments, a host that is gone) are tool results with
    `isError: true`; only a tool list that cannot be fetched is a protocol error. Calls run in worker
    threads, so a long command does not stall the protocol. Logs go to stderr; stdout is the protocol.
    """
    import anyio
    import anyio.to_thread
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        try:
            tools = await anyio.to_thread.run_sync(source.list_tools)
        except ToolSourceError as error:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(error)) from None
        return types.ListToolsResult(
            tools=[
                types.Tool(name=tool["name"], description=tool.get("description") or None,
                           input_schema=tool["inputSchema"])
                for tool in tools
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        try:
            text, is_error = await anyio.to_thread.run_sync(source.call_tool, params.name, arguments)
        except Exception as error:  # a ToolSource must not raise; if it does, the agent still gets a result
            log.exception("tool %s failed", params.name)
            text, is_error = f"Error: {type(error).__name__}: {error}", True
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    server: Server[Any] = Server(
        name,
        version=_version(),
        instructions="Orchestra's repo-scoped tools: paths are relative to the repo named in the tool.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("orchestra")
    except PackageNotFoundError:
        return "0"
