"""The SessionLocks contract: one runner per session, the holder named, locks freed by release or death; and the
optional CheckoutLocks: one in-place run per checkout, its session named."""

from __future__ import annotations

import threading
from collections.abc import Callable

from orchestra_core.ports.session_locks import (
    CheckoutBusyError,
    CheckoutLocks,
    SessionBusyError,
    SessionLease,
    SessionLocks,
)
from orchestra_core.testing.contracts._base import PortContract, raises, requires

HolderKiller = Callable[[], None]
"""Kills a runner that holds a lock, without letting it release."""


class SessionLocksContract(PortContract):
    """A runner implements `make_locks()`; for the optional `holder_death` (a lock whose holder dies
    however it dies is free again), also `hold_elsewhere`; for `checkout_locks` (the adapter is also a
    CheckoutLocks) with `holder_death`, also `hold_checkout_elsewhere`."""

    OPTIONAL_CAPABILITIES = frozenset({"holder_death", "checkout_locks"})
    locks: SessionLocks

    def make_locks(self) -> SessionLocks:
        """The locks under test (files under `self.tmp`, say)."""
        raise NotImplementedError

    def hold_elsewhere(self, locks: SessionLocks, session_id: str) -> HolderKiller:
        """For `holder_death`: make another runner (another process, for a real adapter) take the
        session's lock in the same place as `locks`; return what kills that runner."""
        raise NotImplementedError

    def hold_checkout_elsewhere(self, locks: SessionLocks, checkout: str, session_id: str) -> HolderKiller:
        """For `checkout_locks` with `holder_death`: as `hold_elsewhere`, for a checkout's lock."""
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

    # CheckoutLocks -----------------------------------------------------------------------------------------
    def _checkouts(self) -> CheckoutLocks:
        assert isinstance(self.locks, CheckoutLocks)
        return self.locks

    @requires("checkout_locks")
    def test_a_free_checkout_has_no_holder(self) -> None:
        assert self._checkouts().checkout_holder("/src/app") is None

    @requires("checkout_locks")
    def test_a_held_checkout_refuses_another_session_naming_the_holder(self) -> None:
        locks = self._checkouts()
        lease = locks.acquire_checkout("/src/app", "s1")
        assert isinstance(lease, SessionLease)
        holder = locks.checkout_holder("/src/app")
        assert holder is not None and "s1" in holder
        with raises(CheckoutBusyError) as caught:
            locks.acquire_checkout("/src/app", "s2")
        assert "/src/app" in str(caught.value) and "session s1" in str(caught.value)
        assert isinstance(caught.value, SessionBusyError)
        lease.release()
        lease.release()
        assert locks.checkout_holder("/src/app") is None
        locks.acquire_checkout("/src/app", "s2").release()

    @requires("checkout_locks")
    def test_checkouts_and_sessions_are_locked_apart(self) -> None:
        locks = self._checkouts()
        session = self.locks.acquire("s1")
        one, two = locks.acquire_checkout("/src/app", "s1"), locks.acquire_checkout("/src/lib", "s3")
        one.release()
        assert locks.checkout_holder("/src/app") is None and locks.checkout_holder("/src/lib") is not None
        assert self.locks.holder("s1") is not None
        two.release()
        session.release()

    @requires("checkout_locks")
    def test_a_checkout_lock_whose_holder_died_is_free(self) -> None:
        self.require("holder_death")
        kill = self.hold_checkout_elsewhere(self.locks, "/src/app", "s9")
        holder = self._checkouts().checkout_holder("/src/app")
        assert holder is not None and "s9" in holder
        with raises(CheckoutBusyError):
            self._checkouts().acquire_checkout("/src/app", "s1")
        kill()
        assert self._checkouts().checkout_holder("/src/app") is None
        self._checkouts().acquire_checkout("/src/app", "s1").release()
