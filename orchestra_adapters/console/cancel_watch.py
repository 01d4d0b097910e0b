"""Cancelling a run another process runs: `orchestra cancel`, the control MCP server's `cancel_run` and the web
view's Cancel button drop a request into the run's attach channel (`cancel.json`); the run polls for it and stops
as a fleet's cancel stops it (the node running now cancelled, command process groups killed, the agent loop
stopped), records the session `cancelled` with where the request came from, and stays resumable.

A file, not a signal to a pid: no pid reuse, nothing another user could send, and the request names its origin.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from orchestra_adapters.console.run_channel import RunChannel, channel_dir
from orchestra_core.model.cancellation import Cancellation

CANCEL_POLL_S = 0.25  # how often a run looks for a cancel request


class NotRunningError(Exception):
    """The session is not running (anywhere this project's lock can tell): nothing to cancel."""


def cancel_reason(origin: str) -> str:
    """What the session records (and the run prints) when a request from `origin` stopped it."""
    return f"cancelled from {origin}"


class CancelWatch:
    """A run's side: polls its channel for a cancel request while it runs and cancels `stop` when one comes.

    Args:
        channel: The run's attach channel.
        stop: The run's stop (the engine stops on it).
        since: Wall-clock time the run began (older requests belong to an earlier run of the session).
    """

    def __init__(self, channel: RunChannel, stop: Cancellation, since: float) -> None:
        self.channel = channel
        self.stop = stop
        self.since = since
        self.reason: str | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Begin watching (a daemon thread)."""
        self._thread = threading.Thread(target=self._poll, name="orchestra-cancel-watch", daemon=True)
        self._thread.start()

    def end(self) -> str | None:
        """Stop watching; the reason when a request cancelled the run, else None."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        return self.reason

    def _poll(self) -> None:
        while not self._done.wait(CANCEL_POLL_S):
            try:
                origin = self.channel.cancel_request(self.since)
            except Exception:
                continue
            if origin is not None:
                self.reason = cancel_reason(origin)
                self.stop.cancel(self.reason)
                return


def request_cancel(store: Any, locks: Any, state_dir: Path, session_id: str, origin: str) -> None:
    """Ask the run of `session_id` that another process of this project runs to stop (it does within a second).

    Raises:
        NotRunningError: The session is not running (ended, interrupted, new, or no runner holds its lock).
        OrchestraError: The session is unknown (the store's error).
    """
    status = store.get_session(session_id).status.value
    if status != "running":
        raise NotRunningError(f"session {session_id} is not running (it ended: {status})")
    if locks.holder(session_id) is None:  # its process died without recording how it ended
        raise NotRunningError(
            f"session {session_id} is not running (its run stopped without recording it; "
            f"orchestra resume {session_id} continues it)"
        )
    RunChannel(channel_dir(state_dir, session_id)).request_cancel(origin)


def wait_ended(store: Any, locks: Any, session_id: str, timeout: float) -> str:
    """The session's status once its runner let go of it (a runner records how its run ended before it releases
    the lock), or its status at the timeout."""
    deadline = time.monotonic() + max(timeout, 0)
    while True:
        status = str(store.get_session(session_id).status.value)
        if (status != "running" and locks.holder(session_id) is None) or time.monotonic() >= deadline:
            return status
        time.sleep(0.1)


__all__ = ["CANCEL_POLL_S", "CancelWatch", "NotRunningError", "cancel_reason", "request_cancel", "wait_ended"]
