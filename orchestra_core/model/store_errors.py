"""Errors raised by session stores and the turn codec; each names the store or the field at fault."""

from __future__ import annotations

from orchestra_core.model.errors import OrchestraError


class StoreError(OrchestraError):
    """A session store cannot do what was asked; the message names the store (file path or address)."""


class StoreUnavailableError(StoreError):
    """The store cannot be opened or reached (missing directory, refused connection, timeout)."""


class StoreLockedError(StoreError):
    """Another process held the store's write lock for longer than the busy timeout."""


class StoreReadOnlyError(StoreError):
    """The store's file (or its directory) cannot be written."""


class StoreCorruptError(StoreError):
    """The store's file is not a valid store (damaged, truncated, or not a database at all)."""


class StoreVersionError(StoreError):
    """The store was written by a newer Orchestra whose schema this one does not know."""


class SessionNotFoundError(StoreError):
    """No session (context) with the given id exists in the store."""


class TurnNotFoundError(StoreError):
    """No turn with the given id exists (or it is not in the session's history)."""


class BlobNotFoundError(StoreError):
    """No blob with the given BLAKE3 hash is stored."""


class BundleConflictError(StoreError):
    """A type bundle was rejected: same bundle id with other content, or conflicting type definitions."""


class TurnDataError(StoreError):
    """Turn data cannot be stored or read back as the declared type; the message names the field."""
