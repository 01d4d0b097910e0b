"""One process at a time per session on this machine: an advisory file lock held while a run records into it."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from orchestra_core.model.errors import OrchestraError

LOCKS_DIR = Path(".orchestra") / "locks"


class SessionBusyError(OrchestraError):
    """Another orchestra process is running the session."""


class SessionLock:
    """`flock` on `.orchestra/locks/<session>.lock`, holding the owner's pid.

    The kernel drops the lock when its process ends, however it ends (SIGKILL included), so a crashed run
    never blocks its resume. The file descriptor is not inherited by tool subprocesses. It guards one
    machine; processes on other machines sharing a CXDB server are not seen.
    """

    def __init__(self, project_root: Path, session_id: str) -> None:
        self.session_id = session_id
        self.path = project_root / LOCKS_DIR / f"{session_id}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock.

        Raises:
            SessionBusyError: Another process holds it (the message names its pid).
            OrchestraError: The lock file cannot be created.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise OrchestraError(f"{self.path}: cannot create the session lock: {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise SessionBusyError(
                f"session {self.session_id} is being run by another orchestra process (pid {owner}); "
                "wait for it to end or stop it, then resume"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        """Let go of the lock (the file stays: removing it would race with the next owner)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
