"""SessionLocks port: one runner per session at a time, and (CheckoutLocks) one run working in place in a checkout
at a time; a lock whose runner died is free again."""

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


@runtime_checkable
class SessionLockHistory(Protocol):
    """An optional capability of a SessionLocks adapter: whether a runner it guards ever took a session's lock.

    A session recorded as running whose lock is free shows `interrupted` only when its runner ran where these
    locks see it (`orchestra_core.session.liveness`): a session run from another machine sharing the store,
    or from another project, stays `running`, since its lock is out of sight.
    """

    def ever_held(self, session_id: str) -> bool:
        """Whether a runner ever took the session's lock here (alive or not)."""
        ...


class CheckoutBusyError(SessionBusyError):
    """Another run works in place in the checkout; the message names its session."""


@runtime_checkable
class CheckoutLocks(Protocol):
    """Locks that keep two runs from working in place (`isolation: in_place`) in one checkout at once.

    An optional capability of a SessionLocks adapter: a run takes the lock of every checkout it works in place
    in, keyed by the checkout's real path, for as long as it runs. As with session locks, the death of the
    holder frees the lock, however it dies.
    """

    def acquire_checkout(self, checkout: str, session_id: str) -> SessionLease:
        """Take the checkout's lock for the session without waiting.

        Raises:
            CheckoutBusyError: Another run holds it (the message names the checkout and the holder's session).
            OrchestraError: The lock cannot be created (the message names where).
        """
        ...

    def checkout_holder(self, checkout: str) -> str | None:
        """The session holding the checkout's lock (and who runs it, for messages), or None when it is free."""
        ...
