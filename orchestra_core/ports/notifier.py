"""Notifier port: tells people outside the run about its events (webhooks, commands), in the background."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from orchestra_core.model.notifications import Notification, NotifyEvent
from orchestra_core.model.records import NotificationFailed

OnDeliveryFailure = Callable[[NotificationFailed], None]
"""Called once for each notification a target could not take (after its retries), from any thread."""


@runtime_checkable
class Notifier(Protocol):
    """Delivers notifications to their targets; a run never waits for it, nor fails because of it.

    A run without notifications has no notifier at all (None in `RunPorts`): nothing is built or sent.
    """

    def wants(self, event: NotifyEvent) -> bool:
        """Whether some target asked for this event (the run builds no notification nobody wants)."""
        ...

    def notify(self, notification: Notification, on_failure: OnDeliveryFailure | None = None) -> None:
        """Hand a notification over for delivery to every target that asked for its event, and return at once.

        Never raises. A target that cannot take it after its retries is reported to `on_failure`, once per
        target, from whatever thread delivers it.
        """
        ...

    def flush(self, timeout_s: float) -> None:
        """Wait until every notification handed over so far is delivered or given up, at most `timeout_s`
        seconds; what is still undelivered then is given up and reported to its `on_failure` before this
        returns (so a run that ends can record it)."""
        ...
