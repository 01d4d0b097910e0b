"""The fake CXDB server's store: turns, contexts, blobs and client sessions behind one lock."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import msgpack


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


def _now_ms() -> int:
    return int(time.time() * 1000)
