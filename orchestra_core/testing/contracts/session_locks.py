"""The SessionLocks contract: one runner per session, the holder named, locks freed by release or death."""

from __future__ import annotations

import threading
from collections.abc import Callable

from orchestra_core.ports.session_locks import SessionBusyError, SessionLease, SessionLocks
from orchestra_core.testing.contracts._base import PortContract, raises, requires

HolderKiller = Callable[[], None]
"""Kills a runner that holds a lock, without letting it release."""


class SessionLocksContract(PortContract):
    """A runner implements `make_locks()`; for the optional `holder_death` (a lock whose holder dies
    however it dies is free again), also `hold_elsewhere`."""

    OPTIONAL_CAPABILITIES = frozenset({"holder_death"})
    locks: SessionLocks

    def make_locks(self) -> SessionLocks:
        """The locks under test (files under `self.tmp`, say)."""
        raise NotImplementedError

    def hold_elsewhere(self, locks: SessionLocks, session_id: str) -> HolderKiller:
        """For `holder_death`: make another runner (another process, for a real adapter) take the
        session's lock in the same place as `locks`; return what kills that runner."""
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.locks = self.make_locks()

    def test_is_session_locks(self) -> None:
        assert isinstance(self.locks, SessionLocks)

    def test_a_free_session_has_no_holder(self) -> None:
        assert self.locks.holder("s1") is None

    def test_the_holder_is_named_while_the_lock_is_held(self) -> None:
        lease = self.locks.acquire("s1")
        assert isinstance(lease, SessionLease)
        assert self.locks.holder("s1")
        lease.release()
        assert self.locks.holder("s1") is None

    def test_a_held_session_refuses_another_acquire_naming_the_holder(self) -> None:
        lease = self.locks.acquire("s1")
        with raises(SessionBusyError) as caught:
            self.locks.acquire("s1")
        holder = self.locks.holder("s1")
        assert holder is not None and holder in str(caught.value)
        lease.release()

    def test_release_is_idempotent_and_frees_the_session(self) -> None:
        lease = self.locks.acquire("s1")
        lease.release()
        lease.release()
        again = self.locks.acquire("s1")
        assert self.locks.holder("s1") is not None
        again.release()

    def test_sessions_are_locked_apart(self) -> None:
        one, two = self.locks.acquire("s1"), self.locks.acquire("s2")
        one.release()
        assert self.locks.holder("s1") is None and self.locks.holder("s2") is not None
        two.release()

    def test_of_threads_racing_for_a_session_one_wins(self) -> None:
        won: list[SessionLease] = []
        busy: list[SessionBusyError] = []
        start = threading.Barrier(4)

        def race() -> None:
            start.wait()
            try:
                won.append(self.locks.acquire("s1"))
            except SessionBusyError as error:
                busy.append(error)

        threads = [threading.Thread(target=race) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (len(won), len(busy)) == (1, 3)
        won[0].release()

    @requires("holder_death")
    def test_a_lock_whose_holder_died_is_free(self) -> None:
        kill = self.hold_elsewhere(self.locks, "s1")
        assert self.locks.holder("s1") is not None
        with raises(SessionBusyError):
            self.locks.acquire("s1")
        kill()
        assert self.locks.holder("s1") is None
        self.locks.acquire("s1").release()
