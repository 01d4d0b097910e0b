"""psycopg errors as StoreError subclasses that name the database (never its password, never a raw traceback)."""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors

from orchestra_core.model.store_errors import (
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
)


def store_error(error: psycopg.Error, location: str, action: str) -> StoreError:
    """The StoreError for a psycopg error raised while doing `action` on the database at `location`."""
    detail = _one_line(error)
    if isinstance(error, psycopg.OperationalError) and not isinstance(error, pg_errors.QueryCanceled):
        return StoreUnavailableError(f"session store {location}: cannot {action}: the database is unreachable ({detail})")
    if isinstance(error, pg_errors.ReadOnlySqlTransaction | pg_errors.InsufficientPrivilege):
        return StoreReadOnlyError(f"session store {location}: cannot {action}: {detail}")
    if isinstance(error, pg_errors.LockNotAvailable | pg_errors.QueryCanceled | pg_errors.DeadlockDetected):
        return StoreLockedError(f"session store {location}: cannot {action}: {detail}")
    return StoreError(f"session store {location}: cannot {action}: {detail}")


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__
