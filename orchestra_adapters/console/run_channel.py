"""The local channel `orchestra attach` answers a running session through: files under `.orchestra/attach/<id>/`.

The run writes `waiting.json` (atomically) while a human gate or an interactive node waits for a human, and
removes it once answered; `orchestra attach` (another process, another terminal) reads it, shows it and
drops its answer into `inbox/` as a file of its own (written aside, then renamed in). The run polls the inbox
while it waits and takes the oldest well-formed answer to the wait it published (older waits' answers and
malformed files are deleted). Files, not a socket: nothing to serve, no path-length limit, nothing stale
that blocks a resumed run (a new wait has a new id), and the directory is the project's own (0700).
Everything read is bounded and checked: an answer is data (a line of text), never a path or a command.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import time
import uuid
from pathlib import Path
from typing import Any

CHANNEL_DIR = "attach"
MAX_FILE_BYTES = 64 * 1024
CANCEL_FILE = "cancel.json"
MAX_ORIGIN_CHARS = 80
_ORIGIN = re.compile(r"^[A-Za-z0-9 ()._:/@-]{1,80}$")
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


class ChannelError(ValueError):
    """The session id cannot name a channel directory."""


def channel_dir(state_dir: Path, session_id: str) -> Path:
    """`<state_dir>/attach/<session_id>` (the id checked, so the path stays under the state directory).

    Raises:
        ChannelError: The id has characters a session id never has.
    """
    if not _SESSION_ID.match(session_id):
        raise ChannelError(f"session id {session_id!r} cannot have an attach channel")
    return state_dir / CHANNEL_DIR / session_id


class RunChannel:
    """One session's channel, for both sides: the run (`publish`, `take`, `clear`) and attach (`waiting`,
    `send`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.inbox = directory / "inbox"
        self.waiting_file = directory / "waiting.json"

    # The run's side ------------------------------------------------------------------------------------
    def publish(self, waiting: dict[str, Any]) -> str:
        """Say what waits for a human (`kind`, `node_id`, `text`, ...); returns the wait's id."""
        wait_id = uuid.uuid4().hex
        _private_dirs(self.inbox)
        _write_atomically(self.waiting_file, json.dumps({**waiting, "id": wait_id}, ensure_ascii=False))
        return wait_id

    def take(self, wait_id: str) -> str | None:
        """The first answer to this wait in the inbox (it and every answer to an older wait are removed)."""
        try:
            names = sorted(os.listdir(self.inbox))
        except OSError:
            return None
        for name in names:
            if not name.endswith(".json"):
                continue
            path = self.inbox / name
            document = _read_json(path)
            _remove(path)
            if (
                document is not None
                and document.get("id") == wait_id
                and isinstance(document.get("reply"), str)
            ):
                return str(document["reply"])
        return None

    def clear(self) -> None:
        """Nothing waits any more."""
        _remove(self.waiting_file)

    def cancel_request(self, since: float) -> str | None:
        """Where a cancel of this run was asked from (`cancelled from ...`), when one was asked at or after `since`
        (wall-clock seconds: a request left over from an earlier run of the session is not this run's); None
        otherwise. A malformed, foreign or stale request file is removed and ignored."""
        path = self.directory / CANCEL_FILE
        document = _read_json(path)
        if document is None:
            if os.path.lexists(path):  # a link, a FIFO, too large, not a JSON object: dropped (a directory stays)
                _remove(path)
            return None
        origin, at = document.get("origin"), document.get("requested_at")
        if (
            not isinstance(origin, str)
            or not _ORIGIN.match(origin)
            or not isinstance(at, (int, float))
            or isinstance(at, bool)
            or at < since
        ):
            _remove(path)
            return None
        return origin

    def remove(self) -> None:
        """The run is over: the channel's directory goes (answers sent too late with it)."""
        shutil.rmtree(self.directory, ignore_errors=True)

    # Attach's side -------------------------------------------------------------------------------------
    def waiting(self) -> dict[str, Any] | None:
        """What waits for a human now (None when nothing does, or the file is not what the run writes)."""
        document = _read_json(self.waiting_file)
        if (
            document is None
            or not isinstance(document.get("id"), str)
            or not isinstance(document.get("text"), str)
        ):
            return None
        return document

    def send(self, wait_id: str, reply: str) -> None:
        """Answer the wait `wait_id` with `reply`."""
        _private_dirs(self.inbox)
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex}.json"  # the oldest sorts first
        text = json.dumps({"id": wait_id, "reply": reply[: MAX_FILE_BYTES // 2]}, ensure_ascii=False)
        _write_atomically(self.inbox / name, text)

    def request_cancel(self, origin: str) -> None:
        """Ask the run to stop, saying where from (`orchestra cancel`, `the control MCP server`, ...)."""
        _private_dirs(self.inbox)
        document = {"origin": origin[:MAX_ORIGIN_CHARS], "requested_at": time.time()}
        _write_atomically(self.directory / CANCEL_FILE, json.dumps(document))


def _private_dirs(inbox: Path) -> None:
    """`attach/`, `attach/<session>/` and its `inbox/`, each created 0700 (mkdir's `mode` applies to the last
    one only): a wait carries the conversation, for the project's owner only."""
    channel = inbox.parent
    for directory in (channel.parent, channel, inbox):
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)


def _write_atomically(path: Path, text: str) -> None:
    aside = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.replace(aside, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    """The file's JSON object; None when it is missing, not a regular file, too large or not an object."""
    # Opened without following a link or blocking on a FIFO, then checked and read through the same descriptor:
    # a file swapped in after a check cannot make the run read a link's target, hang or read without bound.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return None
            data = stream.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None
        document = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
