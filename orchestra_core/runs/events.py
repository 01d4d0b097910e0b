"""Events in-process: what a run reports (engine events, workspace events, agent turns), to callbacks and
to iterators, as it happens."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from orchestra_core.model.events import EngineEvent
from orchestra_core.model.workspace_events import WorkspaceEvent

RunEvent = EngineEvent | WorkspaceEvent
"""Everything a run reports: engine events (AgentTurnCompleted among them) and workspace events."""

log = logging.getLogger("orchestra.runs")


class EventFanout:
    """Delivers each event of a run to its subscribers, one event at a time, in the order they happen.

    It is an engine observer (engine events arrive through `on_event`) and the workspace's event callback
    (`deliver`). A subscriber that raises is logged and skipped; it never breaks the run.
    """

    def __init__(self, *subscribers: Callable[[RunEvent], None] | None) -> None:
        self._subscribers = [subscriber for subscriber in subscribers if subscriber is not None]
        self._failed: set[int] = set()
        self._lock = threading.RLock()

    def subscribe(self, subscriber: Callable[[RunEvent], None]) -> None:
        """Add a subscriber for the events from now on."""
        with self._lock:
            self._subscribers.append(subscriber)

    def on_event(self, event: EngineEvent) -> None:
        self.deliver(event)

    def deliver(self, event: RunEvent) -> None:
        """Hand one event to every subscriber."""
        with self._lock:
            for subscriber in self._subscribers:
                try:
                    subscriber(event)
                except Exception as error:  # subscribers are best effort, like engine observers
                    level = logging.DEBUG if id(subscriber) in self._failed else logging.WARNING
                    self._failed.add(id(subscriber))
                    log.log(level, "event subscriber %r failed on %s: %s", subscriber, type(event).__name__, error)
