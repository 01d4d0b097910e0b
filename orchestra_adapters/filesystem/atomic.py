"""Atomic file replacement: write a temporary file next to the target, optionally fsync, rename over it."""

from __future__ import annotations

import contextlib
import os
import threading

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def write_file(path: str, data: bytes) -> None:
    """Write a file in place (for logs, where a torn write after a crash does no harm)."""
    fd = os.open(path, _FLAGS, 0o644)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, *, fsync: bool = False) -> None:
    """Replace `path` with `data` so readers see the old or the new content, never a mix.

    Without `fsync` the replacement survives a crash of the process (the kernel has the data) but not
    necessarily a power loss; with it, the data and the rename are flushed to disk first.
    """
    temporary = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
    fd = os.open(temporary, _FLAGS, 0o644)
    try:
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        _remove_quietly(temporary)
        raise
    if fsync:
        _fsync_directory(os.path.dirname(path) or ".")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_directory(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
