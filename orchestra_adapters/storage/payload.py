"""Turn payload bytes shared by the SQLite and CXDB stores: msgpack with integer tags, BLAKE3, zstd."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import blake3
import msgpack
import zstandard

from orchestra_core.model.store_errors import TurnDataError

MSGPACK_ENCODING = 1  # CXDB's `encoding` value for msgpack payloads
NO_COMPRESSION = 0
ZSTD = 1
ZSTD_LEVEL = 3


def encode_payload(data: Mapping[Any, Any]) -> bytes:
    """Msgpack bytes of a tag map (keys in the given order, bytes as bin, floats as float64).

    Raises:
        TurnDataError: A value msgpack cannot encode (callers normalize data first, so this is a bug guard).
    """
    try:
        return msgpack.packb(data, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as error:
        raise TurnDataError(f"turn data cannot be encoded: {error}") from None


def decode_payload(payload: bytes) -> dict[Any, Any]:
    """The map msgpack bytes hold (integer and string keys kept as they are).

    Raises:
        ValueError: Not a msgpack map.
    """
    try:
        value = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as error:  # msgpack raises several unrelated exception types on bad input
        raise ValueError(f"not msgpack: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"payload is a msgpack {type(value).__name__}, not a map")
    return value


def tag_keys(data: Mapping[Any, Any]) -> dict[Any, Any]:
    """Top-level string keys that spell integers become integer tags (as CXDB's projection reads them).

    Other clients (the Go and Rust CXDB clients) write `"1"` where Orchestra writes `1`.
    """
    return {int(key) if isinstance(key, str) and key.isdigit() else key: value for key, value in data.items()}


def content_hash(payload: bytes) -> bytes:
    """BLAKE3-256 of the uncompressed bytes (32 bytes)."""
    return blake3.blake3(payload).digest()


def compress(payload: bytes, *, threshold: int) -> tuple[int, bytes]:
    """`(ZSTD, frame)` when the payload is at least `threshold` bytes and zstd makes it smaller."""
    if len(payload) >= threshold:
        frame = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(payload)
        if len(frame) < len(payload):
            return ZSTD, frame
    return NO_COMPRESSION, payload


def decompress(compression: int, data: bytes) -> bytes:
    """The original bytes of `compress`'s output.

    Raises:
        ValueError: Unknown compression or a damaged frame.
    """
    if compression == NO_COMPRESSION:
        return bytes(data)
    if compression == ZSTD:
        try:
            return zstandard.ZstdDecompressor().decompress(data)
        except zstandard.ZstdError as error:
            raise ValueError(f"damaged zstd frame: {error}") from None
    raise ValueError(f"unknown compression {compression}")
