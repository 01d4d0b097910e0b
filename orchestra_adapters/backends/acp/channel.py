"""An ACP agent's process and the JSON-RPC messages on its stdio, checked before the `acp` library sees them.

The agent runs as the leader of its own process group (the supervised spawn: the group dies with Orchestra
however it ends). Each line it prints must be one JSON-RPC 2.0 message; anything else (the library would log
and skip it) is a malformed message, which ends the conversation: `fault` says what it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestra_adapters.process.supervised import SupervisedProcess, spawn_supervised

STDERR_TAIL_LINES = 20
MAX_MESSAGE_BYTES = 50 * 1024 * 1024  # the library's own limit for one message
_SHOWN_CHARS = 200  # of a malformed message, in the node's failure

OnMessage = Callable[[Mapping[str, Any]], None]


class AgentPipes:
    """The agent's process: stdin and stdout for the messages, stderr's tail kept for failures."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        self._supervised: SupervisedProcess = spawn_supervised(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._drain = threading.Thread(target=self._drain_stderr, name="orchestra-acp-stderr", daemon=True)
        self._drain.start()

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self._supervised.process

    def kill(self) -> None:
        """SIGKILL the agent's whole process group now."""
        self._supervised.kill_group()

    def close(self) -> None:
        """Kill what is left of the group, reap the agent and let go (idempotent)."""
        self.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=10)
        self._supervised.release()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
        self._drain.join(timeout=2)

    def exit_status(self) -> int | None:
        """The agent's exit status (waiting a moment for it), or None while it runs."""
        try:
            return self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return None

    def stderr_tail(self) -> str:
        """The last lines the agent wrote to stderr."""
        return "".join(self._stderr).strip()

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in stderr:
                self._stderr.append(raw.decode("utf-8", errors="replace"))


class CheckedTransport:
    """The `acp` library's message transport over the agent's stdio: every incoming line is checked to be a
    JSON-RPC 2.0 message and handed to `on_message` in the order received, before the library dispatches it.

    A malformed line, a failure of `on_message` (kept in `error`) or the end of the agent's output ends the
    stream for the library (which then fails whatever request is pending); `ended` is set either way.
    """

    def __init__(self, pipes: AgentPipes, on_message: OnMessage) -> None:
        self._pipes = pipes
        self._on_message = on_message
        self._reader: asyncio.StreamReader | None = None
        self._reading: asyncio.ReadTransport | None = None
        self._writer: asyncio.WriteTransport | None = None
        self.fault = ""  # what was malformed, when a message was
        self.error: BaseException | None = None
        self.ended: asyncio.Event | None = None

    async def open(self) -> None:
        """Connect the agent's pipes to the running loop."""
        loop = asyncio.get_running_loop()
        self.ended = asyncio.Event()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
        reading, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), self._pipes.process.stdout
        )
        writer, _ = await loop.connect_write_pipe(asyncio.Protocol, self._pipes.process.stdin)
        self._reader, self._reading, self._writer = reader, reading, writer

    async def send(self, message: dict[str, Any]) -> None:
        writer = self._writer
        if writer is None or writer.is_closing():
            raise ConnectionError("the agent's input is closed")
        writer.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        assert self._reader is not None
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as error:
                line = error.partial
                if not line.strip():
                    self._end()
                    return None
            except asyncio.LimitOverrunError:
                self._end(f"a message longer than {MAX_MESSAGE_BYTES} bytes")
                return None
            except (OSError, ValueError) as error:
                self._end(f"unreadable output ({error})")
                return None
            if not line.strip():
                continue
            message, problem = parse_message(line)
            if message is None:
                self._end(problem)
                return None
            try:
                self._on_message(message)
            except BaseException as error:  # a turn's commit failed, or the run asked to stop: the run ends
                self.error = error
                self._end()
                return None
            return message

    def fail(self, error: BaseException) -> None:
        """End the stream because of `error` raised while answering the agent (kept in `error`)."""
        if self.error is None:
            self.error = error
        self._end()

    async def close(self) -> None:
        for transport in (self._writer, self._reading):
            if transport is not None:
                transport.close()

    def _end(self, fault: str = "") -> None:
        if fault and not self.fault:
            self.fault = fault
        if self.ended is not None:
            self.ended.set()


def parse_message(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON-RPC 2.0 message on a line, or None and what is wrong with it."""
    shown = line.decode("utf-8", errors="replace").strip()
    shown = shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS] + "..."
    try:
        message = json.loads(line)
    except ValueError:
        return None, f"a line that is not JSON: {shown!r}"
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None, f"a line that is not a JSON-RPC 2.0 message: {shown!r}"
    method = message.get("method")
    if method is not None:
        params = message.get("params")
        if not isinstance(method, str) or not (params is None or isinstance(params, dict | list)):
            return None, f"a request of the wrong shape: {shown!r}"
        if method == "session/update" and not _is_update(params):
            return None, f"a session/update of the wrong shape: {shown!r}"
        return message, ""
    if "id" not in message or ("result" not in message and not isinstance(message.get("error"), dict)):
        return None, f"a message that is neither a request, a notification nor a response: {shown!r}"
    return message, ""


def _is_update(params: Any) -> bool:
    if not isinstance(params, dict) or not isinstance(params.get("sessionId"), str):
        return False
    update = params.get("update")
    return isinstance(update, dict) and isinstance(update.get("sessionUpdate"), str)
