"""CXDB's binary protocol (PROTOCOL.md section 2): request payloads, frames and response decoding.

All integers are little-endian. A frame is a 16-byte header (`len u32, msg_type u16, flags u16,
req_id u64`) and the payload. These functions are pure, so the fixtures can check them byte for byte.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from attrs import frozen

from orchestra_adapters.storage.payload import MSGPACK_ENCODING, NO_COMPRESSION, compress, content_hash

HEADER = struct.Struct("<IHHQ")
MAX_FRAME = 64 * 1024 * 1024
PROTOCOL_VERSION = 1
FLAG_FS_ROOT = 1
_U64 = struct.Struct("<Q")
_HEAD = struct.Struct("<QQI")
_APPEND_RESULT = struct.Struct("<QQI32s")
_TURN_META = struct.Struct("<QQI")
_TURN_TYPE = struct.Struct("<IIII")


class MsgType(IntEnum):
    """Message types the server handles (7 and 8 are declared upstream but answered with ERROR)."""

    HELLO = 1
    CTX_CREATE = 2
    CTX_FORK = 3
    GET_HEAD = 4
    APPEND_TURN = 5
    GET_LAST = 6
    GET_BLOB = 9
    ATTACH_FS = 10
    PUT_BLOB = 11
    ERROR = 255


class ProtocolError(ValueError):
    """A response that does not have the layout its message type requires."""


@frozen
class Request:
    """A request before framing."""

    msg_type: MsgType
    payload: bytes
    flags: int = 0


@frozen
class Head:
    """A context's head: CTX_CREATE, CTX_FORK and GET_HEAD all answer with it."""

    context_id: int
    head_turn_id: int
    head_depth: int


@frozen
class Appended:
    """APPEND_TURN's answer."""

    context_id: int
    turn_id: int
    depth: int
    content_hash: bytes


@frozen
class TurnRecord:
    """One turn of a GET_LAST answer; `payload` is None when it was not asked for."""

    turn_id: int
    parent_turn_id: int
    depth: int
    type_id: str
    type_version: int
    encoding: int
    compression: int
    uncompressed_len: int
    content_hash: bytes
    payload: bytes | None


def frame(request: Request, req_id: int) -> bytes:
    """Header plus payload."""
    return HEADER.pack(len(request.payload), request.msg_type, request.flags, req_id) + request.payload


def hello(tag: str = "", meta_json: bytes = b"") -> Request:
    """HELLO in the current layout: version u16, tag_len u16, tag, meta_len u32, meta JSON."""
    encoded = tag.encode("utf-8")
    body = struct.pack("<HH", PROTOCOL_VERSION, len(encoded)) + encoded + struct.pack("<I", len(meta_json))
    return Request(MsgType.HELLO, body + meta_json)


def ctx_create(base_turn_id: int = 0) -> Request:
    """CTX_CREATE: a new context whose head is `base_turn_id` (0: empty)."""
    return Request(MsgType.CTX_CREATE, _U64.pack(base_turn_id))


def ctx_fork(base_turn_id: int) -> Request:
    """CTX_FORK: the same operation as CTX_CREATE, for an existing turn."""
    return Request(MsgType.CTX_FORK, _U64.pack(base_turn_id))


def get_head(context_id: int) -> Request:
    """GET_HEAD of a context."""
    return Request(MsgType.GET_HEAD, _U64.pack(context_id))


def append_turn(
    context_id: int,
    parent_turn_id: int,
    type_id: str,
    type_version: int,
    payload: bytes,
    *,
    compress_from: int | None = None,
    idempotency_key: bytes = b"",
    fs_root_hash: bytes | None = None,
) -> Request:
    """APPEND_TURN for uncompressed `payload` (BLAKE3 of it; zstd on the wire from `compress_from` bytes).

    The server ignores the idempotency key, so a retry would append twice; callers check GET_HEAD instead.
    """
    compression, wire = (
        (NO_COMPRESSION, payload) if compress_from is None else compress(payload, threshold=compress_from)
    )
    type_bytes = type_id.encode("utf-8")
    body = b"".join(
        (
            struct.pack("<QQI", context_id, parent_turn_id, len(type_bytes)),
            type_bytes,
            struct.pack("<IIII", type_version, MSGPACK_ENCODING, compression, len(payload)),
            content_hash(payload),
            struct.pack("<I", len(wire)),
            wire,
            struct.pack("<I", len(idempotency_key)),
            idempotency_key,
            fs_root_hash or b"",
        )
    )
    return Request(MsgType.APPEND_TURN, body, FLAG_FS_ROOT if fs_root_hash is not None else 0)


def get_last(context_id: int, limit: int, include_payload: bool) -> Request:
    """GET_LAST: up to `limit` turns walking back from the head, answered oldest first."""
    return Request(MsgType.GET_LAST, struct.pack("<QII", context_id, limit, int(include_payload)))


def get_blob(blob_hash: bytes) -> Request:
    """GET_BLOB by the 32-byte BLAKE3 hash."""
    return Request(MsgType.GET_BLOB, _check_hash(blob_hash))


def put_blob(data: bytes) -> Request:
    """PUT_BLOB: hash, length, bytes (the server checks the hash)."""
    return Request(MsgType.PUT_BLOB, content_hash(data) + struct.pack("<I", len(data)) + data)


def attach_fs(turn_id: int, fs_root_hash: bytes) -> Request:
    """ATTACH_FS: attach a filesystem-tree root blob to a turn."""
    return Request(MsgType.ATTACH_FS, _U64.pack(turn_id) + _check_hash(fs_root_hash))


def decode_hello(payload: bytes) -> tuple[int, int]:
    """`(session_id, protocol_version)`."""
    _expect(payload, 10, "HELLO")
    return struct.unpack("<QH", payload)


def decode_head(payload: bytes) -> Head:
    """The 20-byte head record of CTX_CREATE, CTX_FORK and GET_HEAD."""
    _expect(payload, _HEAD.size, "head")
    return Head(*_HEAD.unpack(payload))


def decode_appended(payload: bytes) -> Appended:
    """APPEND_TURN's 52-byte answer."""
    _expect(payload, _APPEND_RESULT.size, "APPEND_TURN")
    return Appended(*_APPEND_RESULT.unpack(payload))


def decode_turns(payload: bytes, include_payload: bool) -> list[TurnRecord]:
    """GET_LAST's turns, oldest first (payload lengths are only present when payloads were asked for)."""
    reader = _Reader(payload, "GET_LAST")
    turns = []
    for _ in range(reader.u32()):
        turn_id, parent, depth = reader.unpack(_TURN_META)
        type_id = reader.take(reader.u32()).decode("utf-8")
        version, encoding, compression, uncompressed_len = reader.unpack(_TURN_TYPE)
        digest = reader.take(32)
        body = reader.take(reader.u32()) if include_payload else None
        turns.append(
            TurnRecord(
                turn_id,
                parent,
                depth,
                type_id,
                version,
                encoding,
                compression,
                uncompressed_len,
                digest,
                body,
            )
        )
    reader.finish()
    return turns


def decode_blob(payload: bytes) -> bytes:
    """GET_BLOB's answer: length and bytes."""
    reader = _Reader(payload, "GET_BLOB")
    data = reader.take(reader.u32())
    reader.finish()
    return data


def decode_put_blob(payload: bytes) -> tuple[bytes, bool]:
    """`(hash, was_new)`."""
    _expect(payload, 33, "PUT_BLOB")
    return payload[:32], payload[32] == 1


def decode_error(payload: bytes) -> tuple[int, str]:
    """`(code, detail)` of an ERROR frame."""
    reader = _Reader(payload, "ERROR")
    code = reader.u32()
    return code, reader.take(reader.u32()).decode("utf-8", "replace")


def _check_hash(value: bytes) -> bytes:
    if len(value) != 32:
        raise ValueError(f"a BLAKE3 hash has 32 bytes, not {len(value)}")
    return value


def _expect(payload: bytes, size: int, what: str) -> None:
    if len(payload) != size:
        raise ProtocolError(f"{what} response has {len(payload)} bytes, expected {size}")


class _Reader:
    """Sequential reads over a response payload, failing with the message type's name."""

    def __init__(self, payload: bytes, what: str) -> None:
        self._payload = payload
        self._offset = 0
        self._what = what

    def take(self, size: int) -> bytes:
        end = self._offset + size
        if end > len(self._payload):
            raise ProtocolError(f"{self._what} response is truncated")
        chunk = self._payload[self._offset : end]
        self._offset = end
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def unpack(self, layout: struct.Struct) -> tuple[int, ...]:
        return layout.unpack(self.take(layout.size))

    def finish(self) -> None:
        if self._offset != len(self._payload):
            raise ProtocolError(f"{self._what} response has {len(self._payload) - self._offset} extra bytes")
