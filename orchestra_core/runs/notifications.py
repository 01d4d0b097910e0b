"""A run's notifications: its end, and the questions it waits on, told to its notifier (built only when the run has
one: a run without `notify:` never imports this)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from orchestra_core.model.events import (
    InterviewCompleted,
    InterviewStarted,
    InterviewTimeout,
)
from orchestra_core.model.interview import Option, Question, QuestionType
from orchestra_core.model.money import CostTally
from orchestra_core.model.notifications import (
    AnswerRoutes,
    Notification,
    NotifyEvent,
    WaitingQuestion,
    event_at_end,
)
from orchestra_core.model.records import NotificationFailed
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.notifier import Notifier, OnDeliveryFailure

# A question answered within this (auto-approve, an answers file, piped input) waits for nobody: nothing is sent.
QUESTION_GRACE_S = 1.0
# How long the end of a run waits for deliveries still under way (their retries included) before it gives them up.
FLUSH_TIMEOUT_S = 10.0
RUNNING = "running"
CHAT_OPTIONS = (Option("/done", "done"), Option("/approve", "approve"), Option("/reject", "reject"))

log = logging.getLogger("orchestra.notify")
_Key = tuple[str | None, str]  # (branch, node id) of a waiting question


class RunNotifications:
    """Builds a run's notifications from its events and hands them to the notifier; never blocks the run.

    Subscribed to the run's events, it sends `needs_input` when a question is still unanswered `grace_s` after it
    was asked. `ended` sends the event of the run's end; `close` waits (at
    most `flush_timeout_s`) for what is still being delivered.

    Args:
        notifier: Delivers them.
        session_id: The run's session.
        pipeline: The pipeline's name.
        clock: Time stamps.
        spent: What the session has cost so far (the run's meter); None: nothing known.
        routes: Where waiting questions are answered; None: nowhere to name.
        on_failure: Records a notification no target could take (a NotificationFailed turn).
        grace_s: How long a question must wait before it is worth a notification.
        flush_timeout_s: The bound of `close`.
    """

    def __init__(
        self,
        notifier: Notifier,
        *,
        session_id: str,
        pipeline: str,
        clock: Clock,
        spent: Callable[[], CostTally] | None = None,
        routes: AnswerRoutes | None = None,
        on_failure: OnDeliveryFailure | None = None,
        grace_s: float = QUESTION_GRACE_S,
        flush_timeout_s: float = FLUSH_TIMEOUT_S,
    ) -> None:
        self._notifier = notifier
        self._session_id = session_id
        self._pipeline = pipeline
        self._clock = clock
        self._routes = routes or AnswerRoutes()
        self._on_failure = on_failure
        self._grace_s = grace_s
        self._flush_timeout_s = flush_timeout_s
        self._spent = spent
        self._waiting: dict[_Key, tuple[object, threading.Timer]] = {}
        self._ended = False
        self._lock = threading.Lock()
        self._asks = notifier.wants(NotifyEvent.NEEDS_INPUT)
        self._handlers: dict[type, Callable[[Any], None]] = {
            InterviewStarted: self._asked,
            InterviewCompleted: self._answered,
            InterviewTimeout: self._answered,
        }

    @property
    def cost(self) -> CostTally:
        """What the session has cost so far."""
        return self._spent() if self._spent is not None else CostTally()

    def on_event(self, event: object) -> None:
        """One event of the run (a subscriber of its EventFanout)."""
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def ended(self, status: str, reason: str = "") -> None:
        """The run ended with this session status (`success`, `fail`, `budget_exceeded`, `cancelled`,
        `interrupted`): its event is sent (once; a status that is no end sends nothing)."""
        event = event_at_end(status)
        with self._lock:
            if event is None or self._ended:
                return
            self._ended = True
        self._cancel_waits()
        if not self._notifier.wants(event):
            return
        failed = event is not NotifyEvent.FINISHED
        resume = f"orchestra resume {self._session_id}" if failed else None
        self._send(event, status, failure_reason=(reason or status) if failed else None, resume_command=resume)

    def close(self) -> None:
        """No question waits any more; wait (bounded) for the deliveries still under way. Ctrl-C while it waits
        gives them up at once (each is reported), and the end of the run goes on."""
        self._cancel_waits()
        try:
            try:
                self._notifier.flush(self._flush_timeout_s)
            except KeyboardInterrupt:
                self._notifier.flush(0.0)
        except Exception as error:  # a notifier must not fail the end of a run
            log.warning("notify: flushing the notifications failed: %s", error)

    # Events -----------------------------------------------------------------------------------------------------
    def _asked(self, event: InterviewStarted) -> None:
        if not self._asks:
            return
        key, token = (event.branch, event.stage), object()
        timer = threading.Timer(self._grace_s, self._still_waiting, args=(key, token, event.question))
        timer.daemon = True
        with self._lock:
            if self._ended:
                return
            replaced = self._waiting.get(key)
            self._waiting[key] = (token, timer)
        if replaced is not None:
            replaced[1].cancel()
        timer.start()

    def _answered(self, event: InterviewCompleted | InterviewTimeout) -> None:
        with self._lock:
            waiting = self._waiting.pop((event.branch, event.question.stage), None)
        if waiting is not None:
            waiting[1].cancel()

    def _still_waiting(self, key: _Key, token: object, question: Question) -> None:
        """The question has waited `grace_s` unanswered: `needs_input`."""
        with self._lock:
            waiting = self._waiting.get(key)
            if waiting is None or waiting[0] is not token or self._ended:
                return
        self._send(NotifyEvent.NEEDS_INPUT, RUNNING, question=self._waiting_question(question))

    def _waiting_question(self, question: Question) -> WaitingQuestion:
        chat = question.metadata.get("mode") == "interactive"
        options = CHAT_OPTIONS if chat else question.options
        if not options and question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
            options = (Option("Y", "Yes"), Option("N", "No"))
        return WaitingQuestion(
            node_id=question.stage,
            text=question.text,
            type="chat" if chat else question.type.value,
            options=options,
            answer_command=self._routes.command(self._session_id),
            answer_url=self._routes.page(self._session_id),
        )

    def _cancel_waits(self) -> None:
        with self._lock:
            waiting, self._waiting = list(self._waiting.values()), {}
        for _token, timer in waiting:
            timer.cancel()

    def _send(self, event: NotifyEvent, status: str, **details: Any) -> None:
        notification = Notification(
            event=event, session_id=self._session_id, pipeline=self._pipeline, status=status,
            timestamp=self._clock.now(), cost=self.cost, **details,
        )  # fmt: skip
        try:
            self._notifier.notify(notification, self._failed)
        except Exception as error:  # the port says it never raises; a broken one must not break the run either
            log.warning("notify: the notifier refused a %s notification: %s", event.value, error)

    def _failed(self, record: NotificationFailed) -> None:
        log.warning("notify: %s", record.text())
        if self._on_failure is not None:
            self._on_failure(record)
