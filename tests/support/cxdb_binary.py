"""The fake CXDB server's binary protocol (PROTOCOL.md section 2): one thread per connection, frames in order."""

from __future__ import annotations

import socketserver
import struct

import blake3
import zstandard

from tests.support.cxdb_state import ClientSession, FakeCxdbState, HandlerError

HEADER = struct.Struct("<IHHQ")
MAX_FRAME = 64 * 1024 * 1024
_NAMES = {
    1: "HELLO",
    2: "CTX_CREATE",
    3: "CTX_FORK",
    4: "GET_HEAD",
    5: "APPEND_TURN",
    6: "GET_LAST",
    9: "GET_BLOB",
}
_NAMES.update({10: "ATTACH_FS", 11: "PUT_BLOB"})


class _BinaryHandler(socketserver.BaseRequestHandler):
    """One connection: read a frame, answer it; any handler error closes the connection."""

    server: BinaryServer

    def handle(self) -> None:
        state = self.server.state
        session = state.new_session()
        try:
            while True:
                header = _read(self.request, HEADER.size)
                if header is None:
                    return
                length, msg_type, flags, req_id = HEADER.unpack(header)
                if length > MAX_FRAME:
                    return
                payload = _read(self.request, length) or b""
                if len(payload) != length:
                    return
                state.counts[_NAMES.get(msg_type, str(msg_type))] += 1
                try:
                    answer_type, answer = _dispatch(state, session, msg_type, flags, payload)
                except (HandlerError, struct.error, UnicodeDecodeError, zstandard.ZstdError, ValueError):
                    return  # upstream's `?` inside handle_client: no ERROR frame, just EOF
                self.request.sendall(HEADER.pack(len(answer), answer_type, 0, req_id) + answer)
        except OSError:
            return
        finally:
            session.live = False


class BinaryServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: FakeCxdbState) -> None:
        super().__init__(("127.0.0.1", 0), _BinaryHandler)
        self.state = state


def _dispatch(
    state: FakeCxdbState, session: ClientSession, msg_type: int, flags: int, body: bytes
) -> tuple[int, bytes]:
    handlers = {
        1: _hello,
        2: _ctx_create,
        3: _ctx_create,
        4: _get_head,
        5: _append,
        6: _get_last,
        9: _get_blob,
        10: _attach_fs,
        11: _put_blob,
    }
    if msg_type not in handlers:
        detail = b"unknown msg_type"
        return 255, struct.pack("<II", 422, len(detail)) + detail
    return msg_type, handlers[msg_type](state, session, flags, body)


def _hello(state: FakeCxdbState, session: ClientSession, _flags: int, body: bytes) -> bytes:
    if body:
        _version, tag_len = struct.unpack_from("<HH", body)
        tag = body[4 : 4 + tag_len].decode("utf-8")
        (meta_len,) = struct.unpack_from("<I", body, 4 + tag_len)
        if len(body) < 8 + tag_len + meta_len:
            raise HandlerError("truncated hello")
        if not session.tagged:
            session.tag, session.tagged = tag, True
    return struct.pack("<QH", session.session_id, 1)


def _ctx_create(state: FakeCxdbState, session: ClientSession, _flags: int, body: bytes) -> bytes:
    (base,) = struct.unpack_from("<Q", body)
    context = state.create_context(base, session)
    return struct.pack("<QQI", context.context_id, context.head_turn_id, context.head_depth)


def _get_head(state: FakeCxdbState, _session: ClientSession, _flags: int, body: bytes) -> bytes:
    context = state.context(struct.unpack_from("<Q", body)[0])
    return struct.pack("<QQI", context.context_id, context.head_turn_id, context.head_depth)


def _append(state: FakeCxdbState, _session: ClientSession, flags: int, body: bytes) -> bytes:
    context_id, parent, type_len = struct.unpack_from("<QQI", body)
    offset = 20 + type_len
    type_id = body[20:offset].decode("utf-8")
    version, encoding, compression, uncompressed_len = struct.unpack_from("<IIII", body, offset)
    digest = body[offset + 16 : offset + 48]
    (payload_len,) = struct.unpack_from("<I", body, offset + 48)
    wire = body[offset + 52 : offset + 52 + payload_len]
    (idem_len,) = struct.unpack_from("<I", body, offset + 52 + payload_len)  # parsed, then ignored
    fs_root = body[offset + 56 + payload_len + idem_len :][:32] if flags & 1 else None
    if state.faults.drop_before_append:
        state.faults.drop_before_append -= 1
        raise HandlerError("injected drop before append")
    if compression not in (0, 1):
        raise HandlerError("unknown compression")
    payload = zstandard.ZstdDecompressor().decompress(wire) if compression == 1 else wire
    if len(payload) != uncompressed_len:
        raise HandlerError("length mismatch")
    if blake3.blake3(payload).digest() != digest:
        raise HandlerError("content hash mismatch")
    turn = {
        "type_id": type_id,
        "type_version": version,
        "encoding": encoding,
        "compression": compression,
        "uncompressed_len": uncompressed_len,
        "content_hash": digest,
    }
    new = state.append(context_id, parent, turn, payload)
    if fs_root is not None:
        state.blob(fs_root)
        state.fs_roots[new.turn_id] = fs_root
    if state.faults.drop_after_append:
        state.faults.drop_after_append -= 1
        raise HandlerError("injected drop after append")
    return struct.pack("<QQI", context_id, new.turn_id, new.depth) + digest


def _get_last(state: FakeCxdbState, _session: ClientSession, _flags: int, body: bytes) -> bytes:
    context_id, limit, include_payload = struct.unpack_from("<QII", body)
    context = state.context(context_id)
    turns = state.chain(context.head_turn_id, limit)
    parts = [struct.pack("<I", len(turns))]
    for turn in turns:
        type_bytes = turn.type_id.encode()
        compression = 0 if include_payload else turn.compression
        parts.append(struct.pack("<QQII", turn.turn_id, turn.parent_turn_id, turn.depth, len(type_bytes)))
        parts.append(type_bytes)
        parts.append(
            struct.pack("<IIII", turn.type_version, turn.encoding, compression, turn.uncompressed_len)
        )
        parts.append(turn.content_hash)
        if include_payload:
            payload = state.blob(turn.content_hash)
            parts.append(struct.pack("<I", len(payload)) + payload)
    return b"".join(parts)


def _get_blob(state: FakeCxdbState, _session: ClientSession, _flags: int, body: bytes) -> bytes:
    if len(body) != 32:
        raise HandlerError("bad hash")
    data = state.blob(body)
    return struct.pack("<I", len(data)) + data


def _attach_fs(state: FakeCxdbState, _session: ClientSession, _flags: int, body: bytes) -> bytes:
    (turn_id,) = struct.unpack_from("<Q", body)
    root = body[8:40]
    if len(root) != 32:
        raise HandlerError("short attach")
    state.turn(turn_id)
    state.blob(root)
    state.fs_roots[turn_id] = root
    return body[:40]


def _put_blob(state: FakeCxdbState, _session: ClientSession, _flags: int, body: bytes) -> bytes:
    digest = body[:32]
    (size,) = struct.unpack_from("<I", body, 32)
    data = body[36 : 36 + size]
    if len(data) != size or blake3.blake3(data).digest() != digest:
        raise HandlerError("content hash mismatch")
    with state.lock:
        was_new = digest not in state.blobs
        state.blobs.setdefault(digest, data)
    return digest + bytes([int(was_new)])


def _read(connection: object, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = connection.recv(size - len(chunks))  # type: ignore[attr-defined]
        if not chunk:
            return None
        chunks.extend(chunk)
    return bytes(chunks)
