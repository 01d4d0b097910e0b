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


# What Python raises when a damaged page decodes to a value of the wrong type or shape, or when SQLite
# reads a damaged record length and answers SQLITE_NOMEM (MemoryError in Python).
DAMAGE_SYMPTOMS: tuple[type[Exception], ...] = (
    TypeError,
    ValueError,
    OverflowError,
    KeyError,
    IndexError,
    MemoryError,
)


def damage_found(connection: sqlite3.Connection, path: str, action: str) -> StoreCorruptError | None:
    """A StoreCorruptError when SQLite's own check finds the file damaged, else None.

    Called after a value read from the store failed to decode: a damaged file explains it, and then the user
    gets a clear error; an intact one means a bug of ours, which the caller lets surface unchanged.
    """
    try:
        problems = [row[0] for row in connection.execute("PRAGMA quick_check(3)").fetchall()]
    except (sqlite3.Error, UnicodeDecodeError) as error:
        # SQLite's own message can quote a damaged schema, which then fails to decode as well.
        reason = error if isinstance(error, sqlite3.Error) else "its schema does not decode"
        return StoreCorruptError(f"session store {path}: cannot {action}: the file is damaged ({reason})")
    if problems == ["ok"]:
        return None
    detail = "; ".join(str(problem) for problem in problems)
    return StoreCorruptError(
        f"session store {path}: cannot {action}: the file is damaged; restore it from a backup ({detail})"
    )
