"""`orchestra attach` answering from another terminal: what a human gate or an interactive node of the run
waits for is shown, and the line typed is sent back (orchestra_adapters/console/run_channel.py)."""

from __future__ import annotations

import select
import sys
import time
from pathlib import Path
from typing import IO, Any

from orchestra_adapters.console.interviewer import option_line
from orchestra_adapters.console.run_channel import ChannelError, RunChannel, channel_dir


class AttachResponder:
    """Between polls of the store: shows a new wait once, and sends each line typed to what waits then.

    End of input (or an input that cannot be polled) leaves attach a follower only.
    """

    def __init__(
        self, channel: RunChannel, stream: IO[str] | None = None, out: IO[str] | None = None
    ) -> None:
        self._channel = channel
        self._input = stream if stream is not None else sys.stdin
        self._out = out if out is not None else sys.stdout
        self._shown: str | None = None
        self._descriptor = _fileno(self._input)

    def wait(self, seconds: float) -> None:
        """Wait up to `seconds` for a line to send, showing what waits for a human meanwhile."""
        waiting = self._channel.waiting()
        if waiting is not None and waiting["id"] != self._shown:
            self._shown = waiting["id"]
            self._show(waiting)
        if self._descriptor is None:
            time.sleep(seconds)
            return
        ready, _, _ = select.select([self._descriptor], [], [], seconds)
        if not ready:
            return
        line = self._input.readline()
        if line == "":
            self._descriptor = None  # end of input: follow only
            return
        current = self._channel.waiting()
        if current is None:
            self._say("(nothing waits for an answer now; the line was not sent)")
            return
        self._channel.send(current["id"], line.rstrip("\r\n"))
        self._say(f"(sent to {current.get('node_id') or 'the run'})")

    def _show(self, waiting: dict[str, Any]) -> None:
        node = waiting.get("node_id") or ""
        if waiting.get("kind") == "chat":
            self._say(
                f"[{node}] agent:\n{waiting['text']}\n(/done, /approve or /reject ends the conversation)\nyou> "
            )
            return
        lines = [f"[?] {waiting['text']} ({node})"]
        options = [option for option in waiting.get("options") or [] if isinstance(option, dict)]
        for number, option in enumerate(options, start=1):  # listed as the run's console lists them
            lines.append("  " + option_line(number, str(option.get("key")), str(option.get("label"))))
        self._say("\n".join(lines) + "\nanswer> ")

    def _say(self, text: str) -> None:
        print(text, file=self._out, flush=True)


def responder_for(state_dir: Path, session_id: str) -> AttachResponder | None:
    """The responder of a session's attach channel (None for an id that cannot have one)."""
    try:
        return AttachResponder(RunChannel(channel_dir(state_dir, session_id)))
    except ChannelError:
        return None


def _fileno(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None
