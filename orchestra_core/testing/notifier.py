"""A Notifier that keeps every notification it is given, in memory; it can play a target that always fails."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from orchestra_core.model.notifications import Notification, NotifyEvent
from orchestra_core.model.records import NotificationFailed
from orchestra_core.ports.notifier import OnDeliveryFailure


class RecordingNotifier:
    """Delivers at once, into `notifications`; with `fail_with`, every delivery fails with that reason instead
    (reported to its `on_failure`, as a real target's would be after its retries).

    Args:
        events: The events it asked for (empty: every one).
        fail_with: The reason every delivery fails with; None: they all succeed.
        target: The target's name in failure records.
    """

    def __init__(self, events: Sequence[str] = (), *, fail_with: str | None = None, target: str = "recording") -> None:
        self._events = frozenset(events)
        self._fail_with = fail_with
        self._target = target
        self._lock = threading.Lock()
        self.notifications: list[Notification] = []
        self.flushes: list[float] = []

    def wants(self, event: NotifyEvent) -> bool:
        return not self._events or event.value in self._events

    def notify(self, notification: Notification, on_failure: OnDeliveryFailure | None = None) -> None:
        if not self.wants(notification.event):
            return
        if self._fail_with is None:
            with self._lock:
                self.notifications.append(notification)
            return
        if on_failure is not None:
            try:
                on_failure(NotificationFailed(self._target, notification.event.value, 1, self._fail_with))
            except Exception:  # as a real notifier: recording a failure is best effort
                return

    def flush(self, timeout_s: float) -> None:
        with self._lock:
            self.flushes.append(timeout_s)

    def events(self) -> list[str]:
        """The events delivered, in order."""
        with self._lock:
            return [notification.event.value for notification in self.notifications]
