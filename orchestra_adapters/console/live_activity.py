"""A run's live agent activity beside its attach channel, for `orchestra serve` to show: the run (`orchestra run`
in a terminal) appends its AgentActivity events to `<state>/attach/<session>/activity.jsonl`, the server tails it.

Transient and bounded: past MAX_BYTES the file starts again (a reader notices the new file and reads it from its
start), and it goes with the channel's directory when the run ends. What is read is checked: only an
AgentActivity's known fields, of their types, texts cut (the agents' words are hostile).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from orchestra_adapters.console.run_channel import ChannelError, channel_dir

ACTIVITY_FILE = "activity.jsonl"
KIND = "AgentActivity"
MAX_BYTES = 256 * 1024  # the file's size before it starts again
MAX_READ = 256 * 1024  # what a reader takes at once
MAX_TEXT = 4000
_TEXTS = ("session_id", "timestamp", "node_id", "activity", "text", "tool", "call_id")


def activity_path(state_dir: Path, session_id: str) -> Path:
    """Where a session's run writes its live activity (raises ChannelError for an id no session has)."""
    return channel_dir(state_dir, session_id) / ACTIVITY_FILE


class ActivityWriter:
    """An observer of a run: its AgentActivity events as JSON lines in the session's activity file.

    Args:
        state_dir: The project's `.orchestra` directory.
    """

    def __init__(self, state_dir: Path) -> None:
        self._state_dir = state_dir
        self._path: Path | None = None

    def on_event(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "PipelineStarted" and event.branch is None and self._path is None:
            with contextlib.suppress(ChannelError):
                self._path = activity_path(self._state_dir, event.session_id)
        if kind != KIND or self._path is None:
            return
        line = json.dumps({"kind": KIND, **_fields(event)}, ensure_ascii=False) + "\n"
        self._append(self._path, line.encode())

    @staticmethod
    def _append(path: Path, data: bytes) -> None:
        for directory in (path.parent.parent, path.parent):
            directory.mkdir(exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_size + len(data) > MAX_BYTES:
                path.unlink()  # start again: a reader sees the new file (another inode) and reads it from its start
        descriptor = _open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        if descriptor is None:
            return  # something else stands there (a FIFO, a directory): the live view goes without, the run on
        try:
            os.write(descriptor, data)
        finally:
            os.close(descriptor)


def _open_regular(path: Path, flags: int) -> int | None:
    """A descriptor of the regular file at `path` (None for anything else: a symlink is not followed, and a FIFO
    planted there neither blocks the opening nor is read or written)."""
    try:
        descriptor = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError:
        return None
    if stat.S_ISREG(os.fstat(descriptor).st_mode):
        return descriptor
    os.close(descriptor)
    return None


def _fields(event: Any) -> dict[str, Any]:
    return {
        "session_id": event.session_id,
        "timestamp": event.timestamp.isoformat(),
        "branch": event.branch,
        "node_id": event.node_id,
        "activity": event.activity,
        "text": event.text[:MAX_TEXT],
        "tool": event.tool,
        "call_id": event.call_id,
        "error": event.error,
        "turn": event.turn,
    }


class ActivityTail:
    """A reader of a session's activity file from where it stands: `read()` gives the activities appended since.

    Args:
        path: The activity file (it may not exist yet, or any more).
        from_start: Read what the file holds already (a new page); else only what comes next (a reconnection,
            which saw the rest).
    """

    def __init__(self, path: Path, *, from_start: bool) -> None:
        self._path = path
        self._inode: int | None = None
        self._offset = 0
        if not from_start:
            with contextlib.suppress(OSError):
                status = path.stat()
                self._inode, self._offset = status.st_ino, status.st_size

    def read(self) -> list[dict[str, Any]]:
        """The well-formed activities appended since the last read (a partial last line waits for the next)."""
        descriptor = _open_regular(self._path, os.O_RDONLY)
        if descriptor is None:
            return []
        with os.fdopen(descriptor, "rb") as file:
            status = os.fstat(file.fileno())
            inode = status.st_ino
            if inode != self._inode or status.st_size < self._offset:  # the run started the file again: from its start
                self._inode, self._offset = inode, 0
            file.seek(self._offset)
            data = file.read(MAX_READ)
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        return [activity for line in complete.splitlines() if (activity := checked(line)) is not None]


def checked(line: bytes) -> dict[str, Any] | None:
    """An activity line as the server streams it: its known fields of their types, or None."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("kind") != KIND:
        return None
    activity: dict[str, Any] = {"kind": KIND}
    for key in _TEXTS:
        item = value.get(key)
        activity[key] = item[:MAX_TEXT] if isinstance(item, str) else ""
    branch, turn = value.get("branch"), value.get("turn")
    activity["branch"] = branch[:200] if isinstance(branch, str) else None
    activity["error"] = value.get("error") is True
    activity["turn"] = turn if isinstance(turn, int) and not isinstance(turn, bool) else None
    return activity
