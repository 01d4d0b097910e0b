"""Event delivery: best-effort observers, and forwarding from child runs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from attrs import evolve

from orchestra_core.model.events import EngineEvent, EventObserver
from orchestra_core.ports.clock import Clock

log = logging.getLogger("orchestra.engine")


class Emitter:
    """Builds events (session, time, branch filled in) and hands them to every observer in turn.

    Observers are called one at a time, even from parallel branches; one that raises is logged and skipped.
    """

    def __init__(self, session_id: str, clock: Clock, observers: Sequence[EventObserver]) -> None:
        self._session_id = session_id
        self._clock = clock
        self._observers = tuple(observers)
        self._failed: set[int] = set()
        self._lock = threading.Lock()

    def emit(self, event_type: type[EngineEvent], branch: str | None, fields: dict[str, Any]) -> None:
        """Create and deliver one event."""
        if self._observers:
            self.deliver(event_type(session_id=self._session_id, timestamp=self._clock.now(), branch=branch, **fields))

    def deliver(self, event: EngineEvent) -> None:
        """Deliver an already built event."""
        with self._lock:
            for observer in self._observers:
                try:
                    observer.on_event(event)
                except Exception as error:  # observers are best effort by contract
                    self._report(observer, event, error)

    def _report(self, observer: EventObserver, event: EngineEvent, error: Exception) -> None:
        """Warn once per observer; later failures of the same observer only at debug level."""
        first = id(observer) not in self._failed
        self._failed.add(id(observer))
        level = logging.WARNING if first else logging.DEBUG
        log.log(level, "event observer %r failed on %s: %s: %s", observer, event.kind, type(error).__name__, error)
        log.debug("observer failure", exc_info=error)


class BranchForwarder:
    """Re-emits a child run's events to the parent's observers under a branch label."""

    def __init__(self, emitter: Emitter, branch: str) -> None:
        self._emitter = emitter
        self._branch = branch

    def on_event(self, event: EngineEvent) -> None:
        inner = f"{self._branch}/{event.branch}" if event.branch else self._branch
        self._emitter.deliver(evolve(event, branch=inner))
