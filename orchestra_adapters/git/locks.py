"""Locks per repository: filelock lock files in the shared git dir, re-entrant per thread. The repository's lock
guards Orchestra's local git work; the fetch lock lets one fetch at a time write the repository's refs (git's
own ref locks refuse a second writer instead of waiting), without holding up local work for a slow network."""

from __future__ import annotations

from pathlib import Path

from filelock import BaseFileLock, FileLock

LOCK_FILE_NAME = "orchestra.lock"
FETCH_LOCK_FILE_NAME = "orchestra-fetch.lock"


def repo_lock(common_dir: Path, name: str = LOCK_FILE_NAME) -> BaseFileLock:
    """The lock (`name`: which of them) of the repository whose shared git dir is `common_dir`.

    It excludes other processes (flock) and other threads (each thread holds through its own file
    descriptor), and a thread may take it again while holding it. The instance is a process-wide
    singleton per lock file, so two adapter instances locking one repository in one thread re-enter the
    same lock instead of deadlocking on two descriptors.
    """
    return FileLock((common_dir / name).resolve(), mode=0o644, thread_local=True, is_singleton=True)


def fetch_lock(common_dir: Path) -> BaseFileLock:
    """The lock a fetch into the repository holds, and so does adding or removing one of its worktrees."""
    return repo_lock(common_dir, FETCH_LOCK_FILE_NAME)
