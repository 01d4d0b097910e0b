"""FileSessionLocks: one runner per session, and one in-place run per checkout, on this machine, by filelock
lock files."""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.session_locks import CheckoutBusyError, SessionBusyError

# filelock frees a lock whose instance is garbage-collected; a lease must hold until released or its process ends.
_HELD: set[BaseFileLock] = set()
_CHECKOUT_PREFIX = "checkout-"


class FileSessionLease:
    """A held lock; `release` lets go of it (the files stay: removing them would race the next owner)."""

    def __init__(self, lock: BaseFileLock) -> None:
        self._lock = lock
        _HELD.add(lock)

    def release(self) -> None:
        """Let go of the lock (idempotent)."""
        if self._lock.is_locked:
            self._lock.release(force=True)
        _HELD.discard(self._lock)


class FileSessionLocks:
    """`flock` on `<locks_dir>/<session>.lock`, the holder's pid in `<session>.pid`; checkouts likewise under
    `checkout-<hash of the path>`, whose `.pid` file also names the holder's session.

    The kernel drops the lock when its process ends, however it ends (SIGKILL included), so a crashed run
    never blocks its resume. The descriptor is not inherited by subprocesses. The pid lives in a sibling
    file, written once the lock is held, because a contender opening the lock file may truncate it. It
    guards one machine; processes on other machines sharing a store are not seen, and checkouts are locked
    per project (two projects working in place in one repository do not see each other).
    """

    def __init__(self, locks_dir: Path) -> None:
        self._dir = locks_dir

    def lock_path(self, session_id: str) -> Path:
        """The lock file of a session."""
        return self._dir / f"{session_id}.lock"

    def acquire(self, session_id: str) -> FileSessionLease:
        """Take the session's lock without waiting.

        Raises:
            SessionBusyError: Another holder has it; the message names its pid.
            OrchestraError: The lock file (or the pid file) cannot be created; the message names it.
        """
        lock = self._file_lock(session_id)
        if not self._try(lock, session_id):
            raise SessionBusyError(
                f"session {session_id} is being run by another orchestra process (pid {self._pid(session_id)}); "
                "wait for it to end or stop it, then resume"
            )
        return self._hold(lock, session_id, [str(os.getpid())])

    def holder(self, session_id: str) -> str | None:
        """The pid of the process holding the session's lock, or None when it is free."""
        if not self._held(session_id):
            return None
        return self._pid(session_id)

    def ever_held(self, session_id: str) -> bool:
        """Whether a runner on this machine ever took the session's lock (its files stay after it ends)."""
        return self.lock_path(session_id).exists() or self._pid_path(session_id).exists()

    def acquire_checkout(self, checkout: str, session_id: str) -> FileSessionLease:
        """Take the lock of the checkout at the real path `checkout` for `session_id`, without waiting.

        Raises:
            CheckoutBusyError: Another run holds it; the message names the checkout, its session and pid.
            OrchestraError: The lock file (or the pid file) cannot be created; the message names it.
        """
        name = _checkout_name(checkout)
        lock = self._file_lock(name)
        if not self._try(lock, name):
            raise CheckoutBusyError(
                f"{checkout} is in use: {self._checkout_holder(name)} works in place there; wait for it to end "
                "or stop it, or use isolation: worktree"
            )
        return self._hold(lock, name, [str(os.getpid()), session_id])

    def checkout_holder(self, checkout: str) -> str | None:
        """`session <id> (pid <pid>)` of the run holding the checkout's lock, or None when it is free."""
        name = _checkout_name(checkout)
        return self._checkout_holder(name) if self._held(name) else None

    def _checkout_holder(self, name: str) -> str:
        lines = self._holder_lines(name)
        session = lines[1] if len(lines) > 1 and lines[1] else "unknown"
        return f"session {session} (pid {lines[0] if lines and lines[0] else 'unknown'})"

    def _hold(self, lock: BaseFileLock, name: str, lines: list[str]) -> FileSessionLease:
        lease = FileSessionLease(lock)
        try:
            self._write_holder(name, lines)
        except BaseException:
            lease.release()
            raise
        return lease

    def _held(self, name: str) -> bool:
        if not self.lock_path(name).exists():
            return False
        lock = self._file_lock(name)
        if self._try(lock, name):
            lock.release(force=True)
            return False
        return True

    def _file_lock(self, name: str) -> BaseFileLock:
        # A fresh instance per call: a second acquire in this process is refused like any other holder's.
        return FileLock(self.lock_path(name), mode=0o644, thread_local=False)

    def _try(self, lock: BaseFileLock, name: str) -> bool:
        path = self.lock_path(name)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return False
        except OSError as error:
            what = "checkout" if name.startswith(_CHECKOUT_PREFIX) else "session"
            raise OrchestraError(f"{path}: cannot create the {what} lock: {error.strerror}") from None
        return True

    def _pid(self, name: str) -> str:
        lines = self._holder_lines(name)
        return lines[0] if lines and lines[0] else "unknown"

    def _holder_lines(self, name: str) -> list[str]:
        try:
            text = self._pid_path(name).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        return [line.strip() for line in text.splitlines()]

    def _write_holder(self, name: str, lines: list[str]) -> None:
        path, staging = self._pid_path(name), self._dir / f".{name}.pid.{os.getpid()}"
        try:
            staging.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            os.replace(staging, path)  # whole or absent: a contender never reads half a pid
        except OSError as error:
            with contextlib.suppress(OSError):
                staging.unlink()
            raise OrchestraError(f"{path}: cannot write the lock's pid: {error.strerror}") from None

    def _pid_path(self, name: str) -> Path:
        return self._dir / f"{name}.pid"


def _checkout_name(checkout: str) -> str:
    """The lock name of a checkout: a hash of its path (any path fits in a file name)."""
    return _CHECKOUT_PREFIX + hashlib.sha256(os.fsencode(checkout)).hexdigest()[:32]
