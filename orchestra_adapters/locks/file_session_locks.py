"""FileSessionLocks: one runner per session on this machine, by a filelock lock file per session."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.session_locks import SessionBusyError

# filelock frees a lock whose instance is garbage-collected; a lease must hold until released or its process ends.
_HELD: set[BaseFileLock] = set()


class FileSessionLease:
    """A held session lock; `release` lets go of it (the files stay: removing them would race the next owner)."""

    def __init__(self, lock: BaseFileLock) -> None:
        self._lock = lock
        _HELD.add(lock)

    def release(self) -> None:
        """Let go of the lock (idempotent)."""
        if self._lock.is_locked:
            self._lock.release(force=True)
        _HELD.discard(self._lock)


class FileSessionLocks:
    """`flock` on `<locks_dir>/<session>.lock`; the holder's pid in `<session>.pid`.

    The kernel drops the lock when its process ends, however it ends (SIGKILL included), so a crashed run
    never blocks its resume. The descriptor is not inherited by subprocesses. The pid lives in a sibling
    file, written once the lock is held, because a contender opening the lock file may truncate it. It
    guards one machine; processes on other machines sharing a store are not seen.
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
        lease = FileSessionLease(lock)
        try:
            self._write_pid(session_id)
        except BaseException:
            lease.release()
            raise
        return lease

    def holder(self, session_id: str) -> str | None:
        """The pid of the process holding the session's lock, or None when it is free."""
        if not self.lock_path(session_id).exists():
            return None
        lock = self._file_lock(session_id)
        if self._try(lock, session_id):
            lock.release(force=True)
            return None
        return self._pid(session_id)

    def _file_lock(self, session_id: str) -> BaseFileLock:
        # A fresh instance per call: a second acquire in this process is refused like any other holder's.
        return FileLock(self.lock_path(session_id), mode=0o644, thread_local=False)

    def _try(self, lock: BaseFileLock, session_id: str) -> bool:
        path = self.lock_path(session_id)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return False
        except OSError as error:
            raise OrchestraError(f"{path}: cannot create the session lock: {error.strerror}") from None
        return True

    def _pid(self, session_id: str) -> str:
        try:
            text = self._pid_path(session_id).read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            text = ""
        return text or "unknown"

    def _write_pid(self, session_id: str) -> None:
        path, staging = self._pid_path(session_id), self._dir / f".{session_id}.pid.{os.getpid()}"
        try:
            staging.write_text(f"{os.getpid()}\n", encoding="ascii")
            os.replace(staging, path)  # whole or absent: a contender never reads half a pid
        except OSError as error:
            with contextlib.suppress(OSError):
                staging.unlink()
            raise OrchestraError(f"{path}: cannot write the session lock's pid: {error.strerror}") from None

    def _pid_path(self, session_id: str) -> Path:
        return self._dir / f"{session_id}.pid"
