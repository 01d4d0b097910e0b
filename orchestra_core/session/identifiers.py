"""Parsing the ids and hashes users and stores pass around (strings at the port, u64 inside)."""

from __future__ import annotations

import re

from orchestra_core.model.store_errors import BlobNotFoundError

_U64_MAX = 2**64 - 1
_HASH = re.compile(r"[0-9a-f]{64}")


def parse_id(value: str | int | None) -> int | None:
    """The u64 behind an id given as `"42"`, `42` or `" 42 "`; None when it is not one (or is 0)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        if not text.isdigit() or not text.isascii():
            return None
        number = int(text)
    return number if 0 < number <= _U64_MAX else None


def format_id(number: int | None) -> str | None:
    """The port's string form of a stored id (None and 0 mean "none")."""
    return str(number) if number else None


def normalize_blob_hash(blob_hash: str) -> str:
    """A BLAKE3 hash in lower-case hex.

    Raises:
        BlobNotFoundError: Not 64 hex digits, so nothing can be stored under it.
    """
    text = str(blob_hash).strip().lower()
    if not _HASH.fullmatch(text):
        raise BlobNotFoundError(f"{blob_hash!r} is not a BLAKE3 hash (64 hex digits)")
    return text
