"""An in-memory tracer: keeps every span it is given, for tests (and tools that want a run's spans in hand)."""

from __future__ import annotations

import threading

from orchestra_core.model.spans import Span


class InMemoryTracer:
    """The Tracer port in memory: `spans` in the order they ended; `flush` has nothing to wait for."""

    def __init__(self) -> None:
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self.closed = False
        self.flushes: list[float] = []

    @property
    def spans(self) -> list[Span]:
        """Every span exported before `close`, in order."""
        with self._lock:
            return list(self._spans)

    def export(self, span: Span) -> None:
        with self._lock:
            if not self.closed:
                self._spans.append(span)

    def flush(self, timeout_s: float) -> bool:
        with self._lock:
            self.flushes.append(timeout_s)
        return True

    def close(self) -> None:
        with self._lock:
            self.closed = True

    def named(self, prefix: str) -> list[Span]:
        """The spans whose name starts with `prefix` (`stage `, `chat `, ...)."""
        return [span for span in self.spans if span.name.startswith(prefix)]
