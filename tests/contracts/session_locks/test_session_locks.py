"""The SessionLocks contract run against the in-memory fake and FileSessionLocks (a real process dies)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestra_adapters.locks import FileSessionLocks
from orchestra_core.ports.session_locks import SessionLease, SessionLocks
from orchestra_core.testing.contracts.session_locks import HolderKiller, SessionLocksContract
from orchestra_core.testing.session_locks import InMemorySessionLocks

ROOT = Path(__file__).resolve().parents[3]
_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from orchestra_adapters.locks import FileSessionLocks
    locks = FileSessionLocks(Path(sys.argv[1]))
    lease = locks.acquire(sys.argv[2]) if len(sys.argv) == 3 else locks.acquire_checkout(sys.argv[3], sys.argv[2])
    print("locked", flush=True)
    time.sleep(120)
    """
)


class TestInMemorySessionLocks(SessionLocksContract):
    capabilities = frozenset({"holder_death", "checkout_locks"})

    def make_locks(self) -> InMemorySessionLocks:
        return InMemorySessionLocks()

    def hold_elsewhere(self, locks: SessionLocks, session_id: str) -> HolderKiller:
        assert isinstance(locks, InMemorySessionLocks)
        other = locks.runner("doomed runner")
        other.acquire(session_id)
        return other.crash

    def hold_checkout_elsewhere(self, locks: SessionLocks, checkout: str, session_id: str) -> HolderKiller:
        assert isinstance(locks, InMemorySessionLocks)
        other = locks.runner("doomed runner")
        other.acquire_checkout(checkout, session_id)
        return other.crash


class TestFileSessionLocks(SessionLocksContract):
    capabilities = frozenset({"holder_death", "checkout_locks"})

    def make_locks(self) -> FileSessionLocks:
        (self.tmp / "locks").mkdir()
        return FileSessionLocks(self.tmp / "locks")

    def hold_elsewhere(self, locks: SessionLocks, session_id: str) -> HolderKiller:
        return self._hold(session_id)

    def hold_checkout_elsewhere(self, locks: SessionLocks, checkout: str, session_id: str) -> HolderKiller:
        return self._hold(session_id, checkout)

    def _hold(self, *names: str) -> HolderKiller:
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(self.tmp / "locks"), *names],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.add_cleanup(holder.wait)
        self.add_cleanup(holder.kill)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        holder.stdout.close()

        def kill() -> None:
            holder.kill()
            holder.wait(timeout=30)

        return kill


_PG_HOLDER = textwrap.dedent(
    """
    import sys, time
    from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks
    lease = PostgresSessionLocks(sys.argv[1], holder="doomed worker").acquire(sys.argv[2])
    print("locked", flush=True)
    time.sleep(120)
    """
)


class TestPostgresSessionLocks(SessionLocksContract):
    """Advisory locks held by the holder's connection: a killed holder's lock is freed by the database."""

    capabilities = frozenset({"holder_death"})

    @pytest.fixture(autouse=True)
    def _database(self, postgres_dsn: str) -> None:
        self.dsn = postgres_dsn

    def make_locks(self) -> SessionLocks:
        from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks

        return _LazyLocks(lambda: PostgresSessionLocks(self.dsn))

    def hold_elsewhere(self, locks: SessionLocks, session_id: str) -> HolderKiller:
        holder = subprocess.Popen(
            [sys.executable, "-c", _PG_HOLDER, self.dsn, session_id], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        self.add_cleanup(holder.wait)
        self.add_cleanup(holder.kill)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        holder.stdout.close()
        assert locks.holder(session_id) == "doomed worker"

        def kill() -> None:
            holder.kill()
            holder.wait(timeout=30)
            deadline = time.monotonic() + 10  # the server ends the dead client's backend (and its locks) at once
            while locks.holder(session_id) is not None and time.monotonic() < deadline:
                time.sleep(0.01)

        return kill


class _LazyLocks:
    """Builds the locks on first use: the contract makes them in setup_method, before the database fixture."""

    def __init__(self, make: Callable[[], SessionLocks]) -> None:
        self._make = make
        self._locks: SessionLocks | None = None

    def _get(self) -> SessionLocks:
        if self._locks is None:
            self._locks = self._make()
        return self._locks

    def acquire(self, session_id: str) -> SessionLease:
        return self._get().acquire(session_id)

    def holder(self, session_id: str) -> str | None:
        return self._get().holder(session_id)
