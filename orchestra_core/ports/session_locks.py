"""SessionLocks port: one runner per session at a time; a lock whose runner died is free again."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.errors import OrchestraError


class SessionBusyError(OrchestraError):
    """Another runner holds the session's lock; the message names it (a pid on one machine)."""


@runtime_checkable
class SessionLease(Protocol):
    """A held session lock."""

    def release(self) -> None:
        """Let go of the lock (idempotent)."""
        ...


@runtime_checkable
class SessionLocks(Protocol):
    """Locks that keep two runners from recording into one session at once.

    A lock must be freed by the death of its holder, however it dies (SIGKILL, a lost machine), so a crashed
    run never blocks its resume and a session whose lock is free is known not to be running.
    """

    def acquire(self, session_id: str) -> SessionLease:
        """Take the session's lock without waiting.

        Raises:
            SessionBusyError: Another runner holds it (the message names the holder).
            OrchestraError: The lock cannot be created (the message names where).
        """
        ...

    def holder(self, session_id: str) -> str | None:
        """Who holds the session's lock (for messages), or None when it is free."""
        ...
