"""A backend's live activity as AgentActivity events, text coalesced so that a model streaming tokens costs the
engine one event per interval rather than one per token."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from attrs import evolve

from orchestra_core.model.activity import MAX_ACTIVITY_TEXT, TEXT, Activity

COALESCE_S = 0.075  # text arriving within this long after the last event sent waits to go with the next


def clipped(text: str, limit: int = MAX_ACTIVITY_TEXT) -> str:
    """At most `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ActivityFeed:
    """The `on_activity` given to a backend: sends each Activity to `send`, joining text that comes faster than
    every `interval_s` (a streamed reply's tokens) into one. Pending text goes first when anything else arrives
    and when the call ends (`close`). Thread-safe: a backend may report from its tool threads.

    Args:
        send: Receives the activities (the stage's AgentActivity events).
        interval_s: Text arriving sooner than this after the last send waits for the next.
        clock: Monotonic seconds (for tests).
    """

    def __init__(
        self,
        send: Callable[[Activity], None],
        *,
        interval_s: float = COALESCE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._interval_s = interval_s
        self._clock = clock
        self._pending: list[str] = []
        self._pending_turn: int | None = None
        self._last_sent = float("-inf")
        self._lock = threading.Lock()

    def __call__(self, activity: Activity) -> None:
        with self._lock:
            if activity.kind == TEXT:
                if not activity.text:
                    return
                if self._pending and activity.turn != self._pending_turn:
                    self._flush()
                self._pending.append(activity.text)
                self._pending_turn = activity.turn
                if self._clock() - self._last_sent >= self._interval_s:
                    self._flush()
                return
            self._flush()
            self._emit(evolve(activity, text=clipped(activity.text)))

    def close(self) -> None:
        """Send the text still waiting (the backend call ended)."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            text, self._pending = "".join(self._pending), []
            for start in range(
                0, len(text), MAX_ACTIVITY_TEXT
            ):  # each event's text stays whole on the stream
                self._emit(
                    Activity(kind=TEXT, text=text[start : start + MAX_ACTIVITY_TEXT], turn=self._pending_turn)
                )

    def _emit(self, activity: Activity) -> None:
        self._last_sent = self._clock()
        self._send(activity)
