"""The Notifier contract: only what was asked for is delivered, in order, after a flush; `notify` returns at once and
never raises; a target that cannot take a notification is reported once, with the event it lost."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.notifications import Notification, NotifyEvent
from orchestra_core.model.records import NotificationFailed
from orchestra_core.ports.notifier import Notifier
from orchestra_core.testing.contracts._base import PortContract

FLUSH_S = 10.0
"""The bound given to `flush` (a notifier that delivers within it is never cut short)."""
QUICK_S = 0.5
"""How long `notify` may take: it hands over, it does not deliver."""


def notification(event: NotifyEvent = NotifyEvent.FINISHED, session_id: str = "7") -> Notification:
    """A notification of the contract's (a run of pipeline `feature` that cost $0.25)."""
    status = {NotifyEvent.FINISHED: "success", NotifyEvent.NEEDS_INPUT: "running"}.get(event, "fail")
    return Notification(
        event=event, session_id=session_id, pipeline="feature", status=status,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC), cost=CostTally(Money.usd(0.25)),
    )  # fmt: skip


class NotifierContract(PortContract):
    """A runner implements `make_notifier()` (one target that delivers, or fails every delivery) and `delivered()`
    (the events that target received, in order)."""

    def make_notifier(self, *, events: Sequence[str] = (), failing: bool = False) -> Notifier:
        """A notifier with one target asking for `events` (empty: every one); with `failing`, a target that
        never takes anything (its deliveries fail after whatever retries the notifier makes)."""
        raise NotImplementedError

    def delivered(self) -> list[str]:
        """The events the target of the latest `make_notifier()` received, in order."""
        raise NotImplementedError

    def test_is_a_notifier(self) -> None:
        assert isinstance(self.make_notifier(), Notifier)

    def test_wants_only_the_events_asked_for(self) -> None:
        notifier = self.make_notifier(events=["finished", "needs_input"])
        assert notifier.wants(NotifyEvent.FINISHED) and notifier.wants(NotifyEvent.NEEDS_INPUT)
        assert not notifier.wants(NotifyEvent.FAILED)
        everything = self.make_notifier()
        assert all(everything.wants(event) for event in NotifyEvent)

    def test_what_was_asked_for_is_delivered_in_order_by_a_flush(self) -> None:
        notifier = self.make_notifier(events=["needs_input", "finished"])
        for event in (NotifyEvent.NEEDS_INPUT, NotifyEvent.FAILED, NotifyEvent.FINISHED):
            notifier.notify(notification(event))
        notifier.flush(FLUSH_S)
        assert self.delivered() == ["needs_input", "finished"]

    def test_notify_hands_over_at_once(self) -> None:
        notifier = self.make_notifier(failing=True)
        started = time.monotonic()
        for _ in range(5):
            notifier.notify(notification(), lambda _failure: None)
        assert time.monotonic() - started < QUICK_S
        notifier.flush(FLUSH_S)

    def test_a_failed_delivery_is_reported_once_with_its_event(self) -> None:
        notifier = self.make_notifier(failing=True)
        failures: list[NotificationFailed] = []
        notifier.notify(notification(NotifyEvent.FAILED), failures.append)
        notifier.flush(FLUSH_S)
        assert len(failures) == 1, failures
        failure = failures[0]
        assert failure.event == "failed" and failure.target and failure.reason
        assert failure.attempts >= 1
        assert self.delivered() == []

    def test_nothing_is_reported_for_what_was_delivered_or_not_asked_for(self) -> None:
        notifier = self.make_notifier(events=["finished"])
        failures: list[NotificationFailed] = []
        notifier.notify(notification(NotifyEvent.FINISHED), failures.append)
        notifier.notify(notification(NotifyEvent.FAILED), failures.append)
        notifier.flush(FLUSH_S)
        assert failures == []
        assert self.delivered() == ["finished"]

    def test_a_failure_callback_that_raises_breaks_nothing(self) -> None:
        notifier = self.make_notifier(failing=True)

        def broken(_failure: NotificationFailed) -> None:
            raise RuntimeError("the store is gone")

        notifier.notify(notification(), broken)
        notifier.flush(FLUSH_S)
        notifier.notify(notification(), broken)
        notifier.flush(FLUSH_S)

    def test_a_flush_with_nothing_handed_over_returns(self) -> None:
        started = time.monotonic()
        self.make_notifier().flush(FLUSH_S)
        assert time.monotonic() - started < QUICK_S
