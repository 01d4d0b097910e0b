"""sqlite3 errors as StoreError subclasses that name the store's file (never a raw driver traceback)."""

from __future__ import annotations

import sqlite3

from orchestra_core.model.store_errors import (
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
)

_BY_CODE: tuple[tuple[str, type[StoreError], str], ...] = (
    (
        "SQLITE_BUSY",
        StoreLockedError,
        "another process holds the store's write lock; try again when it is done",
    ),
    ("SQLITE_LOCKED", StoreLockedError, "the store is locked"),
    ("SQLITE_READONLY", StoreReadOnlyError, "the file (or its directory) is read-only"),
    ("SQLITE_CORRUPT", StoreCorruptError, "the file is damaged; restore it from a backup"),
    ("SQLITE_NOTADB", StoreCorruptError, "the file is not an SQLite database"),
    ("SQLITE_CANTOPEN", StoreUnavailableError, "the file cannot be opened"),
    ("SQLITE_FULL", StoreError, "the disk is full"),
    ("SQLITE_IOERR", StoreError, "an I/O error occurred"),
)


def store_error(error: sqlite3.Error, path: str, action: str) -> StoreError:
    """The StoreError for a sqlite3 error raised while doing `action` on the store at `path`."""
    name = getattr(error, "sqlite_errorname", "") or ""
    text = str(error)
    for prefix, kind, explanation in _BY_CODE:
        if name.startswith(prefix):
            return kind(f"session store {path}: cannot {action}: {explanation} ({text})")
    if "readonly" in text or "read-only" in text:
        return StoreReadOnlyError(f"session store {path}: cannot {action}: the file is read-only ({text})")
    if "malformed" in text or "not a database" in text:
        return StoreCorruptError(f"session store {path}: cannot {action}: the file is damaged ({text})")
    return StoreError(f"session store {path}: cannot {action}: {text}")
