"""One lock per repository: a filelock lock file in the shared git dir, re-entrant per thread."""

from __future__ import annotations

from pathlib import Path

from filelock import BaseFileLock, FileLock

LOCK_FILE_NAME = "orchestra.lock"


def repo_lock(common_dir: Path) -> BaseFileLock:
    """The lock of the repository whose shared git dir is `common_dir`.

    It excludes other processes (flock) and other threads (each thread holds through its own file
    descriptor), and a thread may take it again while holding it. The instance is a process-wide
    singleton per lock file, so two adapter instances locking one repository in one thread re-enter the
    same lock instead of deadlocking on two descriptors.
    """
    return FileLock((common_dir / LOCK_FILE_NAME).resolve(), mode=0o644, thread_local=True, is_singleton=True)
