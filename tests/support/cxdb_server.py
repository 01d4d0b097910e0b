"""A protocol-faithful fake CXDB server (strongdm/cxdb c7bab7c as PROTOCOL.md describes it) on loopback.

Binary TCP (writes) and HTTP GET (reads, plus the bundle PUT), real sockets, server threads. The quirks
are kept: handler errors drop the connection without an ERROR frame (only unknown message types get one),
the first turn has depth 0, ids are JSON strings, POST routes are 404 `route`, the idempotency key is
ignored, an explicit parent may live anywhere, typed views of unregistered types are 424 for the page.
`faults` lets a test drop the connection around an append.
"""

from __future__ import annotations

import socketserver
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import blake3
import msgpack
import zstandard

from tests.support.cxdb_http import start_http

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


class HandlerError(Exception):
    """A server-side failure; the binary handler answers it by closing the connection."""


@dataclass
class Turn:
    turn_id: int
    parent_turn_id: int
    depth: int
    type_id: str
    type_version: int
    encoding: int
    compression: int
    uncompressed_len: int
    content_hash: bytes
    created_at_ms: int


@dataclass
class Context:
    context_id: int
    head_turn_id: int
    head_depth: int
    created_at_ms: int
    session_id: int | None
    hello_tag: str
    metadata: dict | None = None
    metadata_extracted: bool = False


@dataclass
class ClientSession:
    session_id: int
    tag: str = ""
    tagged: bool = False
    connected_at_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    live: bool = True


@dataclass
class Faults:
    """Connection drops a test can ask for: before applying the next append, or after applying it."""

    drop_before_append: int = 0
    drop_after_append: int = 0


class FakeCxdbState:
    """Turns, contexts, blobs and sessions behind one lock, like the server's global Mutex<Store>."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.turns: dict[int, Turn] = {}
        self.contexts: dict[int, Context] = {}
        self.blobs: dict[bytes, bytes] = {}
        self.sessions: dict[int, ClientSession] = {}
        self.fs_roots: dict[int, bytes] = {}
        self.faults = Faults()
        self.counts: Counter[str] = Counter()  # requests served: "http" and binary message type names

    def new_session(self) -> ClientSession:
        with self.lock:
            session = ClientSession(len(self.sessions) + 1)
            self.sessions[session.session_id] = session
            return session

    def create_context(self, base_turn_id: int, session: ClientSession) -> Context:
        with self.lock:
            depth = 0
            if base_turn_id:
                depth = self._turn(base_turn_id, "base turn").depth
            context = Context(
                len(self.contexts) + 1, base_turn_id, depth, _now_ms(), session.session_id, session.tag
            )
            self.contexts[context.context_id] = context
            return context

    def context(self, context_id: int) -> Context:
        with self.lock:
            if context_id not in self.contexts:
                raise HandlerError("context")
            return self.contexts[context_id]

    def append(self, context_id: int, parent_turn_id: int, turn: dict, payload: bytes) -> Turn:
        with self.lock:
            if parent_turn_id:
                parent = self._turn(parent_turn_id, "parent turn")
                context = self.contexts.get(context_id)
                if context is None:  # quirk: an explicit parent creates a head entry for an unknown context
                    context = Context(context_id, 0, 0, _now_ms(), None, "")
                    self.contexts[context_id] = context
            else:
                context = self.context(context_id)
                parent = self.turns.get(context.head_turn_id)
            self.blobs.setdefault(turn["content_hash"], payload)
            new = Turn(
                turn_id=len(self.turns) + 1,
                parent_turn_id=parent.turn_id if parent else 0,
                depth=parent.depth + 1 if parent else 0,
                created_at_ms=_now_ms(),
                **turn,
            )
            self.turns[new.turn_id] = new
            context.head_turn_id, context.head_depth = new.turn_id, new.depth
            context.created_at_ms = new.created_at_ms  # quirk: the listing's "created" is the last append
            if not context.metadata_extracted:
                context.metadata = self._first_turn_metadata(context)
                context.metadata_extracted = True
            return new

    def chain(self, start_turn_id: int, limit: int) -> list[Turn]:
        """Up to `limit` turns walking parents from `start_turn_id`, oldest first."""
        with self.lock:
            found = []
            current = self.turns.get(start_turn_id)
            while current is not None and len(found) < limit:
                found.append(current)
                current = self.turns.get(current.parent_turn_id)
            return list(reversed(found))

    def turn(self, turn_id: int) -> Turn:
        with self.lock:
            return self._turn(turn_id, "turn")

    def blob(self, content_hash: bytes) -> bytes:
        with self.lock:
            if content_hash not in self.blobs:
                raise HandlerError("blob not found")
            return self.blobs[content_hash]

    def _turn(self, turn_id: int, what: str) -> Turn:
        if turn_id not in self.turns:
            raise HandlerError(what)
        return self.turns[turn_id]

    def _first_turn_metadata(self, context: Context) -> dict | None:
        """Key 30 (integer keys only) of the first depth-0 turn walking from the head (c7bab7c)."""
        current = self.turns.get(context.head_turn_id)
        while current is not None and current.depth > 0:
            current = self.turns.get(current.parent_turn_id)
        if current is None:
            return None
        try:
            payload = msgpack.unpackb(self.blobs[current.content_hash], raw=False, strict_map_key=False)
        except Exception:
            return None
        metadata = payload.get(30) if isinstance(payload, dict) else None
        if not isinstance(metadata, dict):
            return None
        return {key: value for key, value in metadata.items() if isinstance(key, int)}


class _BinaryHandler(socketserver.BaseRequestHandler):
    """One connection: read a frame, answer it; any handler error closes the connection."""

    server: _BinaryServer

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


class _BinaryServer(socketserver.ThreadingTCPServer):
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


def _now_ms() -> int:
    return int(time.time() * 1000)


class FakeCxdbServer:
    """Both listeners on 127.0.0.1 with ephemeral ports; `addr` and `url` are what the adapter takes."""

    def __init__(self) -> None:
        self.state = FakeCxdbState()
        self._binary = _BinaryServer(self.state)
        self._http, self.registry = start_http(self.state)
        self._thread = threading.Thread(target=self._binary.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self._binary.server_address[1]}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def faults(self) -> Faults:
        return self.state.faults

    def stop(self) -> None:
        self._binary.shutdown()
        self._binary.server_close()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> FakeCxdbServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
