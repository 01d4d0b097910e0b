"""One node's conversation with an ACP agent: `initialize`, `session/new`, `session/prompt`, and how it ends.

Orchestra is the client. It offers the file-system methods (through the node's path guard and write tracker) and
no terminal; the agent's `session/update` notifications are handed on in the order they arrive. The conversation
ends when the agent answers the prompt, or on the first of: the node's cancellation or time limit (the session is
cancelled, the agent given a moment to stop, then its process group killed), the agent's exit, a malformed
message. The `acp` library is imported here only, when an ACP node runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Literal

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.schema import (
    ClientCapabilities,
    EnvVariable,
    FileSystemCapabilities,
    Implementation,
    McpServerStdio,
    TextContentBlock,
)
from attrs import frozen
from pydantic import ValidationError

from orchestra_adapters.backends.acp.channel import AgentPipes, CheckedTransport
from orchestra_adapters.backends.acp.client import ClientMethods, OrchestraClient
from orchestra_adapters.mcp.spec import McpServerSpec
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.turn import TokenUsage

CANCEL_GRACE_S = 3.0  # after `session/cancel`, how long the agent has to answer before its group is killed
EXIT_GRACE_S = (
    2.0  # after the agent exits, how long its last messages have to arrive (its output may stay open)
)

PLACEHOLDER_MODELS = frozenset({"default", "auto"})  # what some agents report when they pick the model themselves
AUTH_REQUIRED = -32000  # ACP's error for a session the agent will not open before `authenticate`
_SHOWN_DATA = 500  # characters of an error's data, in the node's failure

How = Literal["answered", "cancelled", "timed_out", "died", "malformed", "refused"]


@frozen
class Ending:
    """How the conversation ended.

    Attributes:
        how: `answered` (the prompt's response came: `stop_reason`), `cancelled`, `timed_out`, `died` (the agent's
            output ended first), `malformed` (it sent a message that is not JSON-RPC), `refused` (it answered a
            request with an error).
        detail: What the agent said or sent, for the node's failure.
        usage: The prompt's token usage, when the agent reports it.
        session_id: The agent's session, once opened.
        model: The model the agent says it answers with, when it says.
    """

    how: How
    stop_reason: str = ""
    detail: str = ""
    usage: TokenUsage | None = None
    session_id: str = ""
    model: str = ""


class Conversation:
    """Talks to the agent in `pipes` for one node.

    Args:
        pipes: The agent's process.
        methods: Answers the agent's requests.
        on_update: Takes each `session/update`'s `update`, in order (raising ends the conversation; `run`
            raises it again).
        cwd: The session's working directory (the node's worktree).
        mcp_servers: The MCP servers the agent connects to (Orchestra's tool server).
        timeout_s: Seconds for the whole conversation; None: no limit.
        cancel: The node's cancellation.
        auth_method: The authentication method to ask the agent for before the session (`acp.auth_method`).
    """

    def __init__(
        self,
        pipes: AgentPipes,
        methods: ClientMethods,
        on_update: Callable[[Mapping[str, Any]], None],
        *,
        cwd: Path,
        mcp_servers: tuple[McpServerSpec, ...],
        timeout_s: float | None,
        cancel: Cancellation | None = None,
        auth_method: str | None = None,
    ) -> None:
        self._auth_method = auth_method
        self._auth_methods: list[str] = []
        self._pipes = pipes
        self._methods = methods
        self._on_update = on_update
        self._cwd = cwd
        self._servers = mcp_servers
        self._timeout_s = timeout_s
        self._cancel = cancel
        self._session = ""
        self._model = ""

    def run(self, prompt: str) -> Ending:
        """Hold the conversation to its end.

        Raises:
            Exception: What `on_update` raised (a turn's commit failed; the run asked to stop).
        """
        return _in_own_loop(lambda: self._run(prompt))

    async def _run(self, prompt: str) -> Ending:
        transport = CheckedTransport(self._pipes, self._message)
        await transport.open()
        connection = connect_to_agent(OrchestraClient(self._methods, transport.fail), transport)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        forget = (
            self._cancel.on_cancel(lambda: _call_soon(loop, stop.set)) if self._cancel is not None else None
        )
        talk = asyncio.ensure_future(self._talk(connection, prompt))
        ended = asyncio.ensure_future(_wait(transport.ended))
        stopped = asyncio.ensure_future(stop.wait())
        # The agent's exit, watched apart from its output: what it started may hold its stdout open.
        exited = asyncio.ensure_future(asyncio.to_thread(self._pipes.process.wait))
        try:
            done, _ = await asyncio.wait(
                {talk, ended, stopped, exited}, timeout=self._timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
            gone = ended in done or exited in done
            if (
                gone and talk not in done
            ):  # its last messages are read, and the request fails at its output's end
                await asyncio.wait({talk}, timeout=EXIT_GRACE_S)
                if not talk.done() and not transport.fault and transport.error is None:
                    return self._ending("died")  # what it started holds its output open
            if transport.error is not None:
                raise transport.error
            if transport.fault:
                return self._ending("malformed", detail=transport.fault)
            if talk.done():
                return self._answered(talk)
            how: How = "cancelled" if stopped in done else "timed_out"
            await self._stop_session(connection, talk)
            return self._ending(how)
        finally:
            if forget is not None:
                forget()
            for task in (talk, ended, stopped):
                task.cancel()
            self._pipes.kill()
            await asyncio.wait({exited}, timeout=5)  # reaped once its group is killed
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.close(), timeout=2)

    async def _talk(self, connection: Any, prompt: str) -> Any:
        started = await connection.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
            ),
            client_info=Implementation(name="orchestra", title="Orchestra", version=_version()),
        )
        if started.protocol_version != PROTOCOL_VERSION:
            raise _Refused(
                f"it speaks ACP protocol version {started.protocol_version}; Orchestra speaks {PROTOCOL_VERSION}"
            )
        self._auth_methods = [method.id for method in started.auth_methods or ()]
        if self._auth_method:
            await connection.authenticate(method_id=self._auth_method)
        session = await connection.new_session(
            cwd=str(self._cwd), mcp_servers=[_stdio(s) for s in self._servers]
        )
        self._session = session.session_id
        models = getattr(session, "models", None)
        reported = str(getattr(models, "current_model_id", "") or "") if models is not None else ""
        self._model = reported or self._model  # else what `_message` read from the answer itself
        agent = started.agent_info
        self._methods.started(self._session, self._model, agent.name if agent is not None else "")
        return await connection.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=prompt)]
        )

    def _message(self, message: Mapping[str, Any]) -> None:
        if not self._session and not self._model:
            # session/new's answer names the model in use (`models.currentModelId`, unstable in ACP), which the
            # library's schema drops: read here, before the library parses it
            self._model = _current_model(message.get("result"))
        if message.get("method") != "session/update":
            return
        params = message["params"]
        if self._session and params.get("sessionId") != self._session:
            return  # another session's (there is none): not this node's
        self._on_update(params["update"])

    def _answered(self, talk: asyncio.Future[Any]) -> Ending:
        error = talk.exception()
        if error is None:
            response = talk.result()
            usage = getattr(response, "usage", None)
            return self._ending("answered", stop_reason=str(response.stop_reason), usage=_tokens(usage))
        if isinstance(error, _Refused):
            return self._ending("refused", detail=str(error))
        if isinstance(error, RequestError):
            data = f": {str(error.data)[:_SHOWN_DATA]}" if error.data else ""
            hint = ""
            if error.code == AUTH_REQUIRED and not self._auth_method and self._auth_methods:
                hint = f"; set acp.auth_method in orchestra.yaml to one of its methods: {', '.join(self._auth_methods)}"
            return self._ending("refused", detail=f"{error}{data} (JSON-RPC error {error.code}){hint}")
        if isinstance(error, ValidationError):
            return self._ending("malformed", detail=f"a response of the wrong shape ({_first_error(error)})")
        if isinstance(error, ConnectionError):
            return self._ending("died")
        raise error

    async def _stop_session(self, connection: Any, talk: asyncio.Future[Any]) -> None:
        """`session/cancel`, a moment for the agent to answer, then its group is killed (by the caller)."""
        if self._session:
            with contextlib.suppress(Exception):
                await connection.cancel(session_id=self._session)
                await asyncio.wait({talk}, timeout=CANCEL_GRACE_S)

    def _ending(self, how: How, **fields: Any) -> Ending:
        return Ending(how, session_id=self._session, model=self._model, **fields)


class _Refused(Exception):
    """The agent cannot hold this conversation (another protocol version)."""


def _current_model(result: Any) -> str:
    """`models.currentModelId` of a session/new answer ("" when absent, not a short string, or a placeholder)."""
    if not isinstance(result, Mapping) or "sessionId" not in result:
        return ""
    models = result.get("models")
    model = models.get("currentModelId") if isinstance(models, Mapping) else None
    if not isinstance(model, str) or not 0 < len(model) <= 200 or model.strip().lower() in PLACEHOLDER_MODELS:
        return ""
    return model.strip()


def _stdio(server: McpServerSpec) -> McpServerStdio:
    env = [EnvVariable(name=name, value=value) for name, value in server.env.items()]
    return McpServerStdio(name=server.name, command=server.command, args=list(server.args), env=env)


def _tokens(usage: Any) -> TokenUsage | None:
    if usage is None:
        return None
    read, written = usage.cached_read_tokens or 0, usage.cached_write_tokens or 0
    return TokenUsage(usage.input_tokens, usage.output_tokens + (usage.thought_tokens or 0), read, written)


def _first_error(error: ValidationError) -> str:
    errors = error.errors()
    if not errors:
        return str(error)
    first = errors[0]
    return f"{'.'.join(str(part) for part in first.get('loc', ()))}: {first.get('msg', '')}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("orchestra")
    except PackageNotFoundError:
        return "unknown"


async def _wait(event: asyncio.Event | None) -> None:
    if event is not None:
        await event.wait()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    with contextlib.suppress(RuntimeError):  # the loop has closed: the conversation is over anyway
        loop.call_soon_threadsafe(callback)


def _in_own_loop(make: Callable[[], Coroutine[Any, Any, Ending]]) -> Ending:
    """Run the coroutine in an event loop of its own: this thread's, or a new thread's when one already runs
    here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: list[Ending] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            box.append(asyncio.run(make()))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, name="orchestra-acp", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return box[0]
