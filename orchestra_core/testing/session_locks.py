"""InMemorySessionLocks: the SessionLocks port (and CheckoutLocks) in memory, with runners that can be told to
crash."""

from __future__ import annotations

import threading

from orchestra_core.ports.session_locks import CheckoutBusyError, SessionBusyError


class _Holders:
    """The locks every runner of one InMemorySessionLocks family sees."""

    def __init__(self) -> None:
        self.leases: dict[str, InMemorySessionLease] = {}
        self.ever: set[str] = set()
        self.checkouts: dict[str, InMemoryCheckoutLease] = {}
        self.lock = threading.Lock()


class InMemorySessionLease:
    """A held in-memory session lock."""

    def __init__(self, holders: _Holders, session_id: str, holder: str) -> None:
        self._holders = holders
        self.session_id = session_id
        self.holder = holder

    def release(self) -> None:
        """Let go of the lock (idempotent; a no-op once another runner took the session)."""
        with self._holders.lock:
            if self._holders.leases.get(self.session_id) is self:
                del self._holders.leases[self.session_id]


class InMemoryCheckoutLease:
    """A held in-memory checkout lock."""

    def __init__(self, holders: _Holders, checkout: str, session_id: str, holder: str) -> None:
        self._holders = holders
        self.checkout = checkout
        self.session_id = session_id
        self.holder = holder

    def release(self) -> None:
        """Let go of the lock (idempotent; a no-op once another run took the checkout)."""
        with self._holders.lock:
            if self._holders.checkouts.get(self.checkout) is self:
                del self._holders.checkouts[self.checkout]

    def describe(self) -> str:
        return f"session {self.session_id} ({self.holder})"


class InMemorySessionLocks:
    """Session and checkout locks of one runner (`holder` names it in messages).

    `runner(name)` is another runner's view of the same locks (another process, in real life);
    `crash()` frees every lock this runner holds without releasing them, as the death of a process
    frees its file locks.
    """

    def __init__(self, holder: str = "runner 1", *, _holders: _Holders | None = None) -> None:
        self.holder_name = holder
        self._holders = _holders or _Holders()

    def runner(self, holder: str) -> InMemorySessionLocks:
        """Another runner contending for the same sessions."""
        return InMemorySessionLocks(holder, _holders=self._holders)

    def acquire(self, session_id: str) -> InMemorySessionLease:
        with self._holders.lock:
            held = self._holders.leases.get(session_id)
            if held is not None:
                raise SessionBusyError(
                    f"session {session_id} is being run by {held.holder}; wait for it to end or stop it, then resume"
                )
            lease = self._holders.leases[session_id] = InMemorySessionLease(
                self._holders, session_id, self.holder_name
            )
            self._holders.ever.add(session_id)
            return lease

    def ever_held(self, session_id: str) -> bool:
        with self._holders.lock:
            return session_id in self._holders.ever

    def holder(self, session_id: str) -> str | None:
        with self._holders.lock:
            held = self._holders.leases.get(session_id)
            return held.holder if held is not None else None

    def acquire_checkout(self, checkout: str, session_id: str) -> InMemoryCheckoutLease:
        with self._holders.lock:
            held = self._holders.checkouts.get(checkout)
            if held is not None:
                raise CheckoutBusyError(
                    f"{checkout} is in use: {held.describe()} works in place there; wait for it to end or stop it, "
                    "or use isolation: worktree"
                )
            lease = self._holders.checkouts[checkout] = InMemoryCheckoutLease(
                self._holders, checkout, session_id, self.holder_name
            )
            return lease

    def checkout_holder(self, checkout: str) -> str | None:
        with self._holders.lock:
            held = self._holders.checkouts.get(checkout)
            return held.describe() if held is not None else None

    def crash(self) -> None:
        """This runner dies: every lock it holds is free again."""
        with self._holders.lock:
            for session_id, lease in list(self._holders.leases.items()):
                if lease.holder == self.holder_name:
                    del self._holders.leases[session_id]
            for checkout, held in list(self._holders.checkouts.items()):
                if held.holder == self.holder_name:
                    del self._holders.checkouts[checkout]
