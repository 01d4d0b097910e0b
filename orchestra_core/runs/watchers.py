"""Who hears how a run goes besides its session store: its trace (with a tracer) and its notifications (with a
notifier). Each is built only when its port is given, and only then is its module imported: a run with neither
costs nothing here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from attrs import define

if TYPE_CHECKING:
    from orchestra_core.model.money import CostTally
    from orchestra_core.model.notifications import AnswerRoutes
    from orchestra_core.model.records import NotificationFailed
    from orchestra_core.ports.clock import Clock
    from orchestra_core.ports.notifier import Notifier
    from orchestra_core.ports.session_store import SessionStore
    from orchestra_core.ports.tracer import Tracer
    from orchestra_core.runs.events import RunEvent
    from orchestra_core.runs.notifications import RunNotifications
    from orchestra_core.runs.start import SessionStart
    from orchestra_core.runs.tracing import RunTracing


@define
class WatchedRun:
    """What the watchers need to know of the run they watch.

    Attributes:
        start: The run's start (its session, kind and source).
        pipeline: The pipeline's name.
        clock: Time stamps.
        subscribe: Subscribes a listener to the run's events.
        spent: What the session has cost so far.
        record_failed_delivery: Records a notification no target took (a turn of the session).
    """

    start: SessionStart
    pipeline: str
    clock: Clock
    subscribe: Callable[[Callable[[RunEvent], None]], None]
    spent: Callable[[], CostTally]
    record_failed_delivery: Callable[[NotificationFailed], None]


class RunWatchers:
    """A run's trace and notifications, told how it ends; either may be absent (`RunWatchers()`: none)."""

    def __init__(self, tracing: RunTracing | None = None, notifications: RunNotifications | None = None) -> None:
        self.tracing = tracing
        self.notifications = notifications

    @classmethod
    def start(
        cls,
        run: WatchedRun,
        *,
        store: SessionStore | None,
        tracer: Tracer | None,
        notifier: Notifier | None,
        routes: AnswerRoutes | None,
        created: bool,
    ) -> RunWatchers:
        """The watchers the ports ask for, subscribed to the run's events (`created`: the run made its session)."""
        return cls(_tracing(run, store, tracer, created=created), _notifications(run, notifier, routes))

    @property
    def traced(self) -> bool:
        """Whether the run is traced (its turns are then stamped with the time they were handed over)."""
        return self.tracing is not None

    def notify_end(self, status: str, reason: str = "") -> None:
        """Tell the notifier how the run ended (`success`, `fail`, `interrupted`, `cancelled`, ...)."""
        if self.notifications is not None:
            self.notifications.ended(status, reason)

    def trace_end(self, status: str, reason: str = "") -> None:
        """End the trace's root span with the session's status."""
        if self.tracing is not None:
            self.tracing.end(status, reason)

    def close_notifications(self) -> None:
        """Wait (bounded) for the deliveries under way; before the recorder closes, so a failed one is recorded."""
        notifications, self.notifications = self.notifications, None
        if notifications is not None:
            notifications.close()

    def close_trace(self, flush_timeout: float) -> None:
        """Send the trace's last spans (waits at most `flush_timeout`)."""
        if self.tracing is not None:
            self.tracing.close(flush_timeout)


def _tracing(run: WatchedRun, store: SessionStore | None, tracer: Tracer | None, *, created: bool) -> RunTracing | None:
    if tracer is None:
        return None
    from orchestra_core.runs.tracing import RunTracing, trace_start

    tracing = RunTracing(tracer, trace_start(run.start, store, run.pipeline, created=created), run.clock)
    run.subscribe(tracing.on_event)
    return tracing


def _notifications(run: WatchedRun, notifier: Notifier | None, routes: AnswerRoutes | None) -> RunNotifications | None:
    if notifier is None:
        return None
    from orchestra_core.runs.notifications import RunNotifications

    notifications = RunNotifications(
        notifier, session_id=run.start.session_id, pipeline=run.pipeline, clock=run.clock, spent=run.spent,
        routes=routes, on_failure=run.record_failed_delivery,
    )  # fmt: skip
    run.subscribe(notifications.on_event)
    return notifications
