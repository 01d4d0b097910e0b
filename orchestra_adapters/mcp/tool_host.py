"""ToolHost: one node execution's Toolbox served on a private Unix socket to the MCP proxy its agent starts.

The tools run here, in the orchestrating process, so every write goes through the node's WriteTracker (and
its hooks) exactly as with the LangGraph backend. Wire protocol (private): one JSON object per line;
`{"token", "op": "list"}` -> `{"tools": [...]}`, `{"token", "op": "call", "name", "arguments"}` ->
`{"text", "is_error"}`. A message without the right token closes the connection unanswered.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import secrets
import shutil
import socket
import socketserver
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra_adapters.mcp.server import (
    MAX_MESSAGE_BYTES,
    TOKEN_ENV,
    LocalToolSource,
    decode_message,
    encode_message,
)
from orchestra_adapters.mcp.spec import McpServerSpec

if TYPE_CHECKING:
    from orchestra_adapters.tools.toolbox import ExecutedCall, Toolbox
    from orchestra_core.model.outcome import Outcome

log = logging.getLogger(__name__)

_SOCKET_NAME = "tools.sock"
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
_IDLE_TIMEOUT_S = 600.0  # a connection that sends nothing for this long is dropped


class ToolHost:
    """Serves a Toolbox on a Unix socket (in a fresh 0700 directory) while the context is open.

    Calls run one at a time: the tools share the tracker and the worktree. The host never raises into its
    threads; a tool's failure is an error result.
    """

    def __init__(
        self,
        toolbox: Toolbox,
        *,
        server_name: str = "orchestra",
        on_call: Callable[[ExecutedCall], None] | None = None,
    ) -> None:
        """Describe the toolbox's tools (raises ToolSchemaError now, not in the agent's first call); `on_call`
        is called after each call, before the next one starts."""
        self.server_name = server_name
        self.token = secrets.token_urlsafe(32)
        self.address = ""
        self._source = LocalToolSource(toolbox, on_call=on_call)
        self._directory: str | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def __enter__(self) -> ToolHost:
        self._directory = _private_directory()
        self.address = os.path.join(self._directory, _SOCKET_NAME)
        try:
            self._server = _Server(self.address, self)
        except BaseException:
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="orchestra-mcp-host", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._connections_lock:
            for connection in self._connections:  # a proxy waiting on an answer learns the host is gone
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
        self._server = self._thread = self._directory = None

    @property
    def reported_outcome(self) -> Outcome | None:
        """The outcome of the last successful `report_outcome` call, if any."""
        return self._source.reported_outcome

    def paused(self) -> contextlib.AbstractContextManager[None]:
        """A block during which no tool call runs or is half done (what the agent wrote is all recorded)."""
        return self._source.paused()

    def call(self, name: str, arguments: Any) -> ExecutedCall:
        """Run one call of the toolbox (by its provider-safe name) here, as the agent's MCP proxy would: kept with
        the others, `on_call` told."""
        return self._source.execute(name, arguments)

    def calls(self) -> list[ExecutedCall]:
        """Every call executed so far, in order (a copy)."""
        return self._source.calls()

    def server_spec(self) -> McpServerSpec:
        """How an agent starts the stdio proxy of this host (the token goes in its environment, not argv).

        `-P` keeps the agent's working directory (a worktree it may write) off the proxy's import path.
        """
        return McpServerSpec(
            name=self.server_name,
            command=sys.executable,
            args=("-P", "-m", "orchestra_adapters.mcp", "--connect", self.address),
            env={TOKEN_ENV: self.token},
        )

    # Called from the server's threads ---------------------------------------------------------------
    def authorised(self, token: Any) -> bool:
        return isinstance(token, str) and hmac.compare_digest(token.encode("utf-8"), self.token.encode("utf-8"))

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message.get("op")
        if op == "list":
            return {"tools": self._source.list_tools()}
        if op == "call":
            name = message.get("name")
            if not isinstance(name, str):
                return {"text": "Error: the call names no tool", "is_error": True}
            try:
                executed = self._source.execute(name, message.get("arguments"))
            except Exception as error:  # the toolbox already turns tool failures into results
                log.exception("tool %s failed", name)
                return {"text": f"Error: {type(error).__name__}: {error}", "is_error": True}
            return {"text": executed.text, "is_error": executed.failed}
        return {"error": f"unknown op {op!r}"}

    def track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._connections_lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


def _private_directory() -> str:
    """A fresh directory only this user can enter, short enough for a socket path inside it."""
    directory = tempfile.mkdtemp(prefix="orchestra-mcp-")
    if len(os.path.join(directory, _SOCKET_NAME)) > _MAX_SOCKET_PATH and Path("/tmp").is_dir():
        shutil.rmtree(directory, ignore_errors=True)
        directory = tempfile.mkdtemp(prefix="omcp-", dir="/tmp")
    os.chmod(directory, 0o700)
    return directory


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 64  # an agent may send many calls at once; each is a connection

    def __init__(self, address: str, host: ToolHost) -> None:
        self.host = host
        super().__init__(address, _Handler)


class _Handler(socketserver.StreamRequestHandler):
    timeout = _IDLE_TIMEOUT_S
    server: _Server

    def handle(self) -> None:
        host = self.server.host
        host.track(self.connection, open_=True)
        try:
            self._serve(host)
        except OSError:
            pass  # the proxy went away (or the host is closing)
        except Exception:
            log.exception("MCP tool host: unexpected error on a connection")
        finally:
            host.track(self.connection, open_=False)

    def _serve(self, host: ToolHost) -> None:
        while True:
            line = self.rfile.readline(MAX_MESSAGE_BYTES + 1)
            if not line:
                return
            message = decode_message(line)
            if message is None or not host.authorised(message.get("token")):
                log.warning("MCP tool host: refused a connection (bad token or unreadable message)")
                return
            self.wfile.write(encode_message(host.answer(message)))
