"""The SessionLocks contract run against the in-memory fake and FileSessionLocks (a real process dies)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from orchestra_adapters.locks import FileSessionLocks
from orchestra_core.ports.session_locks import SessionLocks
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
