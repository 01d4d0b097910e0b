"""A manual clock for tests: sleeping advances time instantly and is recorded."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class ManualClock:
    """Clock whose time only moves when slept or advanced."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._elapsed = 0.0
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        with self._lock:
            return self._start + timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        with self._lock:
            return self._elapsed

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self._elapsed += max(seconds, 0.0)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._elapsed += seconds
