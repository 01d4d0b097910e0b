"""A run's events as JSON, numbered in order, for SSE streams that replay them and then follow live."""

from __future__ import annotations

import enum
import threading
from collections import deque
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import Any

import attrs

CHECKPOINT_KEYS = ("current_node", "next_node", "status", "completed_nodes", "failure_reason", "workspace_snapshot")
MAX_TEXT = 4000  # longer strings in an event (agent output, tool stdout) are cut for the stream
ACTIVITY = "AgentActivity"
LIVE_BYTES = 64 * 1024  # the live activity kept per running node (and branch); older activity is dropped
KEEP_ENDED = 8  # the nodes that ended whose live activity is still kept (for the streams that lag behind)
STAGE_ENDS = ("StageCompleted", "StageFailed")
# What a dropped activity's place in the log holds: its id stays (reconnections count on them), its text goes.
DROPPED: dict[str, Any] = {"kind": ACTIVITY, "dropped": True}


def event_json(event: Any) -> dict[str, Any]:
    """An engine or workspace event as a JSON object: `kind` (the event's type name) and its fields."""
    fields = plain(event)
    if not isinstance(fields, dict):
        fields = {"value": fields}
    checkpoint = fields.get("checkpoint")
    if isinstance(checkpoint, dict):  # the whole context with every checkpoint would grow the stream quadratically
        fields["checkpoint"] = {key: checkpoint.get(key) for key in CHECKPOINT_KEYS}
    return {"kind": type(event).__name__, **fields}


def plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON data: attrs classes as objects, enums as their values, times as ISO text."""
    if depth > 8:
        return str(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "..."
    if isinstance(value, enum.Enum):
        return plain(value.value, depth + 1)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if attrs.has(type(value)):
        return {
            field.name: plain(getattr(value, field.name), depth + 1)
            for field in attrs.fields(type(value))
            if not field.name.startswith("_")
        }
    if isinstance(value, Mapping):
        return {str(key): plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(item, depth + 1) for item in value]
    return str(value)


def is_dropped(event: dict[str, Any]) -> bool:
    """Whether this place of the log held live activity that is gone (streams skip it)."""
    return event is DROPPED


class EventLog:
    """The events of one run in the order they happened; event `n` has id `n` (1, 2, ...).

    Readers wait for events after the last id they saw (`after`); `close()` says no more will come. Agents' live
    activity (`AgentActivity`) is transient: a node keeps its latest `live_bytes` of it while it runs, and the last
    `keep_ended` nodes whose stage ended keep theirs (a stream reading behind still shows it); older activity is
    dropped (the agent turns say what was done), its place keeping its id as `DROPPED`.
    """

    def __init__(self, live_bytes: int = LIVE_BYTES, keep_ended: int = KEEP_ENDED) -> None:
        self._events: list[dict[str, Any]] = []
        self._closed = False
        self._changed = threading.Condition()
        self._live_bytes = live_bytes
        self._live: dict[tuple[Any, Any], deque[tuple[int, int]]] = {}  # (node, branch) -> (index, size), oldest first
        self._live_size: dict[tuple[Any, Any], int] = {}
        self._keep_ended = keep_ended
        self._ended: deque[deque[tuple[int, int]]] = deque()  # the activity of nodes that ended, oldest first

    def append(self, event: dict[str, Any]) -> None:
        with self._changed:
            self._events.append(event)
            kind = event.get("kind")
            if kind == ACTIVITY:
                self._keep_live(event)
            elif kind in STAGE_ENDS:
                self._end_live((event.get("node_id"), event.get("branch")))
            self._changed.notify_all()

    def _keep_live(self, event: dict[str, Any]) -> None:
        key = (event.get("node_id"), event.get("branch"))
        size = len(str(event.get("text") or "")) + 200
        self._live.setdefault(key, deque()).append((len(self._events) - 1, size))
        self._live_size[key] = self._live_size.get(key, 0) + size
        self._drop_live(key, keep=self._live_bytes)

    def _end_live(self, key: tuple[Any, Any]) -> None:
        """The node's stage ended: its activity joins the ended nodes', the oldest of which is dropped."""
        queue = self._live.pop(key, None)
        self._live_size.pop(key, None)
        if queue:
            self._ended.append(queue)
        while len(self._ended) > self._keep_ended:
            for index, _size in self._ended.popleft():
                self._events[index] = DROPPED

    def _drop_live(self, key: tuple[Any, Any], keep: int) -> None:
        """Drop the oldest activity of `key` until at most `keep` bytes of it remain."""
        queue = self._live.get(key)
        while queue and self._live_size[key] > keep:
            index, size = queue.popleft()
            self._events[index] = DROPPED
            self._live_size[key] -= size
        if not queue:
            self._live.pop(key, None)
            self._live_size.pop(key, None)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def after(
        self, last_id: int, wait_s: float = 0.0, *, limit: int | None = None
    ) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
        """The events after `last_id` with their ids (at most `limit`), waiting up to `wait_s` for one; and whether
        the log is closed with nothing more to read."""
        with self._changed:
            if len(self._events) <= last_id and not self._closed and wait_s > 0:
                self._changed.wait(wait_s)
            end = len(self._events) if limit is None else min(len(self._events), last_id + limit)
            new = [(number, self._events[number - 1]) for number in range(last_id + 1, end + 1)]
            return new, self._closed and end == len(self._events) and not new
