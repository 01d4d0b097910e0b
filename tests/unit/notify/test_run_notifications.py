"""What a run tells its notifier: the event of its end (by session status, `budget_exceeded` included), the
questions that wait for a human past a grace period, the cost of its agent turns, and failed deliveries."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from orchestra_core.model.events import InterviewCompleted, InterviewStarted
from orchestra_core.model.interview import Answer, Option, Question, QuestionType
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.notifications import NOTIFY_EVENTS, AnswerRoutes, NotifyEvent, event_at_end
from orchestra_core.model.records import NotificationFailed
from orchestra_core.model.settings import NOTIFY_EVENT_NAMES
from orchestra_core.runs.notifications import RunNotifications
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.notifier import RecordingNotifier

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GATE = Question("Ship it?", options=(Option("Y", "[Y] Yes"), Option("N", "[N] No")), stage="ship")


def notifications(notifier: RecordingNotifier, **options: object) -> RunNotifications:
    return RunNotifications(
        notifier, session_id="7", pipeline="feature", clock=ManualClock(NOW), grace_s=0.05, **options  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("status", "event"),
    [
        ("success", "finished"),
        ("fail", "failed"),
        ("budget_exceeded", "budget_exceeded"),
        ("cancelled", "cancelled"),
        ("interrupted", "interrupted"),
        ("running", None),
        ("new", None),
    ],
)
def test_the_status_a_run_ends_with_names_its_event(status: str, event: str | None) -> None:
    found = event_at_end(status)
    assert (found.value if found is not None else None) == event


def test_the_config_knows_every_event() -> None:
    assert NOTIFY_EVENT_NAMES == NOTIFY_EVENTS


def test_a_run_stopped_by_its_budget_sends_budget_exceeded_with_how_to_continue() -> None:
    notifier = RecordingNotifier()
    run = notifications(notifier)
    run.ended("budget_exceeded", "budget max_cost_usd=5.0 reached: spent $5.02")
    (sent,) = notifier.notifications
    assert sent.event is NotifyEvent.BUDGET_EXCEEDED and sent.status == "budget_exceeded"
    assert sent.failure_reason == "budget max_cost_usd=5.0 reached: spent $5.02"
    assert sent.resume_command == "orchestra resume 7"


def test_the_end_is_sent_once_and_only_when_asked_for() -> None:
    notifier = RecordingNotifier(["failed"])
    run = notifications(notifier)
    run.ended("success")
    run.ended("fail", "boom")
    assert notifier.events() == []  # finished was not asked for, and the run had ended already
    other = RecordingNotifier()
    run = notifications(other)
    run.ended("fail", "node implement failed: tests")
    run.ended("success")
    assert other.events() == ["failed"]
    assert other.notifications[0].failure_reason == "node implement failed: tests"
    assert other.notifications[0].session_id == "7" and other.notifications[0].pipeline == "feature"
    assert other.notifications[0].timestamp == NOW


def test_each_notification_carries_what_the_session_has_cost_when_it_is_sent() -> None:
    notifier = RecordingNotifier()
    spent = [CostTally(Money.usd(0.25))]
    run = notifications(notifier, spent=lambda: spent[-1])
    spent.append(CostTally(Money.usd(0.75), 1))  # the meter's total moved on before the end
    run.ended("success")
    assert notifier.notifications[0].cost == CostTally(Money.usd(0.75), 1)
    assert notifier.notifications[0].failure_reason is None and notifier.notifications[0].resume_command is None
    silent = RecordingNotifier()
    notifications(silent).ended("success")
    assert silent.notifications[0].cost == CostTally()  # no meter: nothing known, nothing invented


def test_a_question_still_waiting_after_the_grace_sends_needs_input_with_how_to_answer() -> None:
    notifier = RecordingNotifier()
    run = notifications(notifier, routes=AnswerRoutes(attach=True, server_url="http://127.0.0.1:8765/"))
    run.on_event(InterviewStarted(session_id="7", timestamp=NOW, question=GATE, stage="ship"))
    assert _eventually(lambda: notifier.events() == ["needs_input"])
    sent = notifier.notifications[0]
    assert sent.status == "running" and sent.question is not None
    assert sent.question.text == "Ship it?" and sent.question.node_id == "ship"
    assert [option.key for option in sent.question.options] == ["Y", "N"]
    assert sent.question.answer_command == "orchestra attach 7"
    assert sent.question.answer_url == "http://127.0.0.1:8765/view/7"


def test_a_question_answered_within_the_grace_sends_nothing() -> None:
    notifier = RecordingNotifier()
    run = notifications(notifier)
    run.on_event(InterviewStarted(session_id="7", timestamp=NOW, question=GATE, stage="ship"))
    run.on_event(InterviewCompleted(session_id="7", timestamp=NOW, question=GATE, answer=Answer("Y"), duration_s=0.0))
    time.sleep(0.2)
    assert notifier.events() == []


def test_an_interactive_node_waiting_is_a_chat_question() -> None:
    notifier = RecordingNotifier(["needs_input"])
    run = notifications(notifier)
    reply = Question("Draft one: ...", type=QuestionType.FREEFORM, stage="synth", metadata={"mode": "interactive"})
    run.on_event(InterviewStarted(session_id="7", timestamp=NOW, question=reply, stage="synth"))
    assert _eventually(lambda: notifier.events() == ["needs_input"])
    question = notifier.notifications[0].question
    assert question is not None and question.type == "chat" and question.text == "Draft one: ..."
    assert [option.key for option in question.options] == ["/done", "/approve", "/reject"]
    assert question.answer_command is None and question.answer_url is None  # no route was named


def test_a_run_that_ends_while_a_question_waits_sends_no_late_needs_input() -> None:
    notifier = RecordingNotifier()
    run = notifications(notifier)
    run.on_event(InterviewStarted(session_id="7", timestamp=NOW, question=GATE, stage="ship"))
    run.ended("interrupted", "interrupted")
    time.sleep(0.2)
    assert notifier.events() == ["interrupted"]


def test_a_failed_delivery_is_handed_on_and_close_flushes() -> None:
    failures: list[NotificationFailed] = []
    notifier = RecordingNotifier(fail_with="HTTP 500", target="webhook https://hooks.example.com/services/…")
    run = notifications(notifier, on_failure=failures.append, flush_timeout_s=3.0)
    run.ended("success")
    run.close()
    assert failures == [NotificationFailed("webhook https://hooks.example.com/services/…", "finished", 1, "HTTP 500")]
    assert notifier.flushes == [3.0]


def test_the_failure_line_says_how_often_it_was_tried() -> None:
    assert NotificationFailed("webhook https://h/x/…", "finished", 3, "HTTP 500").text() == (
        "webhook https://h/x/… failed 3 times: HTTP 500 (finished)"
    )
    assert NotificationFailed("command notify", "failed", 1, "exit status 1").text() == (
        "command notify failed once: exit status 1 (failed)"
    )
    assert NotificationFailed("webhook https://h", "finished", 0, "given up").text() == (
        "webhook https://h not sent: given up (finished)"
    )


def _eventually(condition: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_ctrl_c_while_the_end_waits_gives_the_deliveries_up_at_once() -> None:
    class Slow(RecordingNotifier):
        def flush(self, timeout_s: float) -> None:
            super().flush(timeout_s)
            if timeout_s:
                raise KeyboardInterrupt

    notifier = Slow()
    notifications(notifier, flush_timeout_s=10.0).close()  # no KeyboardInterrupt escapes: locks are released after it
    assert notifier.flushes == [10.0, 0.0]
