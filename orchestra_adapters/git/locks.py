"""One lock per repository: a re-entrant thread lock plus an fcntl lock file in the shared git dir."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE_NAME = "orchestra.lock"


class _RepoLock:
    """Held by one thread of one process at a time; the same thread may take it again."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._fd = _lock_file(self._path)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None


def _lock_file(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


class RepoLocks:
    """The lock of each repository, shared by every adapter instance in the process.

    flock locks belong to open file descriptions, so two descriptors in one process would block each
    other; keeping one `_RepoLock` per lock file for the whole process avoids that.
    """

    _registry: dict[Path, _RepoLock] = {}  # noqa: RUF012 - process-wide on purpose
    _registry_lock = threading.Lock()

    @classmethod
    def for_common_dir(cls, common_dir: Path) -> _RepoLock:
        path = (common_dir / LOCK_FILE_NAME).resolve()
        with cls._registry_lock:
            lock = cls._registry.get(path)
            if lock is None:
                lock = cls._registry[path] = _RepoLock(path)
            return lock
