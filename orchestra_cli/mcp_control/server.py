"""The control server's MCP side (on the `mcp` library's MCPServer): its tools and resources over RunControl,
served on stdio or on streamable HTTP on loopback with a bearer token.

It offers no tool that reads or writes the project's files: a node's repo tools (`orchestra mcp serve`
without --control) stay with the agents a pipeline runs.
"""

from __future__ import annotations

import hmac
import json
import socket
import sys
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from orchestra_cli.errors import Refusal

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

    from orchestra_cli.mcp_control.control import RunControl
    from orchestra_cli.runtime.options import RunOptions

HTTP_PATH = "/mcp"
INSTRUCTIONS = (
    "Orchestra runs software pipelines written as Graphviz DOT files. list_pipelines and compile_pipeline find "
    "and check them; start_run starts one in the background and returns its session id at once; session_status "
    "and session_turns follow it; answer_question answers a human gate it waits at; cancel_run stops it; "
    "resume_run continues a stopped or failed session. Paths are relative to the project directory."
)

SessionId = Annotated[str, Field(description="A session id (from start_run or list_sessions).")]
SetValues = Annotated[
    list[str] | None, Field(description="Context values to start with, each KEY=VALUE (as `--set`).")
]
Backend = Annotated[
    str | None, Field(description="simulate, langgraph, direct, ... (default: orchestra.yaml's, as `--backend`).")
]
MaxCost = Annotated[str | None, Field(description="Stop once the session spent this many USD (`--max-cost`).")]
MaxTokens = Annotated[str | None, Field(description="Stop once the session used this many tokens (`--max-tokens`).")]
MaxWallTime = Annotated[str | None, Field(description="Stop once its runs took this long, e.g. 90m (`--max-wall-time`).")]
AutoApprove = Annotated[bool, Field(description="Answer every human gate with its first choice.")]


def build_server(control: RunControl) -> MCPServer:
    """The MCP server: a tool for each thing RunControl does, and the sessions' events as resources."""
    from mcp.server.mcpserver import MCPServer

    from orchestra_cli.version import orchestra_version

    server: MCPServer = MCPServer(
        "orchestra-control", instructions=INSTRUCTIONS, version=orchestra_version(), log_level="WARNING"
    )
    _add_reading_tools(server, control)
    _add_run_tools(server, control)
    _add_resources(server, control)
    return server


def _add_reading_tools(server: MCPServer, control: RunControl) -> None:
    @server.tool(description="The project's pipelines (.dot files): path, goal, whether each compiles.")
    def list_pipelines() -> dict[str, Any]:
        return _answer(control.list_pipelines)

    @server.tool(description="Validate a pipeline as `orchestra compile --json` does: its graph and diagnostics.")
    def compile_pipeline(
        pipeline: Annotated[str, Field(description="The .dot file, relative to the project.")],
    ) -> dict[str, Any]:
        return _answer(lambda: control.compile(pipeline))

    @server.tool(description="Recent sessions, newest first, as `orchestra status --json` lists them (status, cost).")
    def list_sessions(
        limit: Annotated[int | None, Field(description="Most sessions to list (default 20).")] = None,
        all_sessions: Annotated[bool, Field(description="Also parallel branches and child runs.")] = False,
    ) -> dict[str, Any]:
        return _answer(lambda: control.sessions(limit, all_sessions))

    @server.tool(
        description="A session's status as `orchestra status SESSION --json` gives it (nodes, cost, repos, how it "
        "ended), without its turns; `live` shows a run of this server and the questions it waits for."
    )
    def session_status(session_id: SessionId) -> dict[str, Any]:
        return _answer(lambda: control.status(session_id))

    @server.tool(
        description="One page of a session's turns, oldest first, as `orchestra status SESSION --json --limit N "
        "--after TURN`; pass the page's `next_after` as `after` for the next page."
    )
    def session_turns(
        session_id: SessionId,
        limit: Annotated[int | None, Field(description="Most turns in the page (default 50).")] = None,
        after: Annotated[str | None, Field(description="The turn id the page starts after.")] = None,
    ) -> dict[str, Any]:
        return _answer(lambda: control.turns(session_id, limit, after))


def _add_run_tools(server: MCPServer, control: RunControl) -> None:
    @server.tool(
        description="Start a pipeline run in the background (as `orchestra run`); returns its session id at once. "
        "Human gates wait for answer_question unless auto_approve."
    )
    def start_run(
        pipeline: Annotated[str, Field(description="The .dot file, relative to the project.")],
        set_values: SetValues = None,
        backend: Backend = None,
        max_cost: MaxCost = None,
        max_tokens: MaxTokens = None,
        max_wall_time: MaxWallTime = None,
        auto_approve: AutoApprove = False,
    ) -> dict[str, Any]:
        options = _run_options(set_values, backend, (max_cost, max_tokens, max_wall_time), auto_approve)
        return _answer(lambda: control.start(pipeline, options))

    @server.tool(
        description="Continue a stopped, cancelled or failed session from its latest checkpoint in the background "
        "(as `orchestra resume SESSION`)."
    )
    def resume_run(
        session_id: SessionId,
        set_values: SetValues = None,
        backend: Backend = None,
        max_cost: MaxCost = None,
        max_tokens: MaxTokens = None,
        max_wall_time: MaxWallTime = None,
        auto_approve: AutoApprove = False,
    ) -> dict[str, Any]:
        options = _run_options(set_values, backend, (max_cost, max_tokens, max_wall_time), auto_approve)
        return _answer(lambda: control.resume(session_id, options))

    @server.tool(
        description="Answer the human gate a run of this server waits at (an option's key or label); when an "
        "interactive node waits for the human instead (`live.chat.waiting`), send it the human's message (`/done` "
        "ends the conversation)."
    )
    def answer_question(
        session_id: SessionId,
        answer: Annotated[str, Field(description="The option's key (e.g. A) or label.")],
        question_id: Annotated[
            str | None, Field(description="Which question, when it waits for several (see session_status).")
        ] = None,
    ) -> dict[str, Any]:
        return _answer(lambda: control.answer(session_id, answer, question_id))

    @server.tool(
        description="Cancel a running session (this server's or an `orchestra run` of the project); "
        "resume_run continues it later."
    )
    def cancel_run(session_id: SessionId) -> dict[str, Any]:
        return _answer(lambda: control.cancel(session_id))


def _run_options(
    set_values: list[str] | None, backend: str | None, budget: tuple[str | None, str | None, str | None],
    auto_approve: bool,
) -> RunOptions:
    """A tool call's arguments as the options of `orchestra run` / `resume` (quiet: nothing to print)."""
    from orchestra_cli.runtime.options import RunOptions

    max_cost, max_tokens, max_wall_time = budget
    return RunOptions(
        None, backend, auto_approve, set_values=tuple(set_values or ()), quiet=True,
        max_cost=max_cost, max_tokens=max_tokens, max_wall_time=max_wall_time,
    )


def _add_resources(server: MCPServer, control: RunControl) -> None:
    from mcp.server.mcpserver.exceptions import ResourceError

    def read(call: Callable[[], Any]) -> str:
        try:
            return _json(call())
        except Refusal as refusal:
            raise ResourceError(refusal.message) from None

    @server.resource(
        "orchestra://sessions/{session_id}/events",
        mime_type="application/json",
        description="A session's turns so far, as `orchestra attach --json` prints them.",
    )
    def session_events(session_id: str) -> str:
        return read(lambda: control.events(session_id))

    @server.resource(
        "orchestra://sessions/{session_id}/status",
        mime_type="application/json",
        description="A session's status (as the session_status tool).",
    )
    def session_status_resource(session_id: str) -> str:
        return read(lambda: control.status(session_id))


def _answer(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The call's JSON document (the tool's structured result, and its text); a refusal as the tool error the
    command's message says."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return json.loads(_json(call()))  # plain JSON values (paths, dates as text)
    except Refusal as refusal:
        diagnostics = getattr(refusal, "diagnostics", None)
        raise ToolError(refusal.message + (f"\n{_json(diagnostics)}" if diagnostics else "")) from None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


# Serving ---------------------------------------------------------------------------------------------------
def serve_stdio(control: RunControl) -> None:
    """Serve on stdin/stdout until the client closes stdin (stray output of runs goes to stderr)."""
    import anyio

    server = build_server(control)
    print(f"orchestra mcp: controlling {control.root} over stdio", file=sys.stderr, flush=True)
    anyio.run(server.run_stdio_async)


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: any free port); never another address.

    Raises:
        OSError: The port is taken or not allowed.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def serve_http(control: RunControl, listener: socket.socket, token: str) -> None:
    """Serve streamable HTTP at /mcp on `listener` until interrupted; every request needs the token, a loopback
    Host and (when it changes state) no other site's Origin. The address is printed on stderr first."""
    import uvicorn

    from orchestra_adapters.server.origin import SameOriginGuard

    app = BearerToken(SameOriginGuard(build_server(control).streamable_http_app(streamable_http_path=HTTP_PATH)), token)
    port = listener.getsockname()[1]
    print(
        f"orchestra mcp: controlling {control.root}; listening on http://127.0.0.1:{port}{HTTP_PATH}",
        file=sys.stderr, flush=True,
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[listener])


class BearerToken:
    """Refuses (401) every request without `Authorization: Bearer <token>`; compares in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps({"error": "missing or wrong bearer token (Authorization: Bearer <token>)"}).encode()
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
