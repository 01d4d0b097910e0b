"""Delivery: retries with backoff (bounded), what is not retried, the bounded flush at the end of a run, webhook
headers and signatures, commands that get the JSON on stdin (and nothing a pipeline wrote in their argv), and
failure reasons without secrets. Webhooks go to a receiver on loopback."""

from __future__ import annotations

import json
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from orchestra_adapters.notify.delivery import BackgroundNotifier, RetryPolicy
from orchestra_adapters.notify.targets import CommandTarget, WebhookTarget
from orchestra_core.model.notifications import Notification, NotifyEvent, WaitingQuestion
from orchestra_core.model.records import NotificationFailed
from tests.support.webhook_receiver import webhook_receiver

QUICK = RetryPolicy(attempts=3, first_delay_s=0.02)
HOSTILE = "$(touch /tmp/pwned) `id` ; rm -rf ~ --help"


def notification(event: NotifyEvent = NotifyEvent.FINISHED) -> Notification:
    question = WaitingQuestion(node_id="ship", text=HOSTILE, type="freeform") if event is NotifyEvent.NEEDS_INPUT else None
    return Notification(
        event=event, session_id="7", pipeline="feature", status="success", question=question,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def deliver(notifier: BackgroundNotifier, event: NotifyEvent = NotifyEvent.FINISHED, flush_s: float = 10.0) -> list[NotificationFailed]:
    failures: list[NotificationFailed] = []
    notifier.notify(notification(event), failures.append)
    notifier.flush(flush_s)
    notifier.close()
    return failures


def test_the_backoff_grows_and_is_bounded() -> None:
    assert RetryPolicy().delays() == [0.5, 1.0]
    assert RetryPolicy(attempts=6, first_delay_s=1, factor=3, max_delay_s=20).delays() == [1, 3, 9, 20, 20]


def test_a_receiver_that_fails_then_recovers_gets_it_on_a_retry_with_the_same_delivery_id() -> None:
    with webhook_receiver([500, 200]) as receiver:
        failures = deliver(BackgroundNotifier([WebhookTarget(receiver.url, secret="s3cret")], QUICK))
        first, second = receiver.received
    assert failures == []
    assert first.body == second.body and second.signed_with("s3cret")
    assert first.headers["x-orchestra-delivery"] == second.headers["x-orchestra-delivery"]
    assert second.headers["x-orchestra-event"] == "finished"
    assert second.headers["content-type"].startswith("application/json")


def test_a_receiver_that_always_fails_is_tried_three_times_and_reported() -> None:
    with webhook_receiver([500]) as receiver:
        failures = deliver(BackgroundNotifier([WebhookTarget(receiver.url + "/T0/secret?token=abc")], QUICK))
        tried = len(receiver.received)
    assert tried == 3
    (failure,) = failures
    assert (failure.event, failure.attempts, failure.reason) == ("finished", 3, "HTTP 500")
    assert failure.target.startswith("webhook http://127.0.0.1:") and failure.target.endswith("/hooks/…")
    assert "secret" not in failure.target and "abc" not in failure.target


def test_an_answer_that_will_not_change_is_not_retried() -> None:
    with webhook_receiver([404]) as receiver:
        failures = deliver(BackgroundNotifier([WebhookTarget(receiver.url)], QUICK))
        tried = len(receiver.received)
    assert tried == 1
    assert [(failure.attempts, failure.reason) for failure in failures] == [(1, "HTTP 404")]


def test_a_refused_connection_is_reported_without_the_address() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/hooks/T0/B0/secretpath?token=abc"
    (failure,) = deliver(BackgroundNotifier([WebhookTarget(url, timeout_s=2)], QUICK))
    assert failure.attempts == 3 and failure.reason.startswith("could not connect")
    assert "secretpath" not in failure.reason + failure.target and "abc" not in failure.reason + failure.target


def test_the_flush_at_the_end_is_bounded_and_reports_what_it_gave_up() -> None:
    with webhook_receiver([200], delay_s=3.0) as receiver:
        notifier = BackgroundNotifier([WebhookTarget(receiver.url, timeout_s=1.0)], QUICK)
        started = time.monotonic()
        failures = deliver(notifier, flush_s=0.5)
        took = time.monotonic() - started
    assert took < 2.0
    (failure,) = failures
    assert failure.reason.startswith("given up 0.5s after the run ended")


def test_a_flush_waits_for_what_was_handed_over_before_it_only() -> None:
    with webhook_receiver([200]) as receiver:
        notifier = BackgroundNotifier([WebhookTarget(receiver.url)], QUICK)
        failures: list[NotificationFailed] = []
        notifier.notify(notification(NotifyEvent.NEEDS_INPUT), failures.append)
        notifier.notify(notification(NotifyEvent.FINISHED), failures.append)
        notifier.flush(10.0)
        assert [request.json()["event"] for request in receiver.received] == ["needs_input", "finished"]
        notifier.flush(10.0)  # nothing new: returns at once
        notifier.close()
    assert failures == []


def test_a_command_gets_the_json_on_stdin_and_nothing_a_pipeline_wrote_in_its_argv(tmp_path: Path) -> None:
    script = (
        "import json, os, sys; body = sys.stdin.read(); "
        "json.dump({'argv': sys.argv, 'env': {k: v for k, v in os.environ.items() if k.startswith('ORCHESTRA_')}, "
        "'body': json.loads(body)}, open('seen.json', 'w'))"
    )
    target = CommandTarget([sys.executable, "-c", script], cwd=str(tmp_path), timeout_s=20)
    assert deliver(BackgroundNotifier([target], QUICK), NotifyEvent.NEEDS_INPUT) == []
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["body"]["event"] == "needs_input" and seen["body"]["question"]["text"] == HOSTILE
    assert seen["argv"] == ["-c"]
    assert seen["env"]["ORCHESTRA_EVENT"] == "needs_input" and seen["env"]["ORCHESTRA_SESSION_ID"] == "7"
    assert seen["env"]["ORCHESTRA_PIPELINE"] == "feature" and seen["env"]["ORCHESTRA_DELIVERY"]
    assert not any(HOSTILE in value for value in seen["env"].values())
    assert not Path("/tmp/pwned").exists()


def test_a_command_that_fails_is_retried_and_one_that_is_missing_is_not(tmp_path: Path) -> None:
    counter = tmp_path / "tries"
    flaky = f"import sys; open({str(counter)!r}, 'a').write('x'); sys.exit(0 if len(open({str(counter)!r}).read()) > 1 else 3)"
    assert deliver(BackgroundNotifier([CommandTarget([sys.executable, "-c", flaky], cwd=str(tmp_path))], QUICK)) == []
    assert counter.read_text() == "xx"
    (missing,) = deliver(BackgroundNotifier([CommandTarget(["no-such-program-xyz"], cwd=str(tmp_path))], QUICK))
    assert missing.attempts == 1 and missing.reason.startswith("exit status 127")
    assert missing.target == "command no-such-program-xyz"


def test_a_command_that_hangs_is_killed_at_its_timeout(tmp_path: Path) -> None:
    target = CommandTarget([sys.executable, "-c", "import time; time.sleep(60)"], cwd=str(tmp_path), timeout_s=0.3)
    started = time.monotonic()
    (failure,) = deliver(BackgroundNotifier([target], RetryPolicy(attempts=2, first_delay_s=0.01)))
    assert time.monotonic() - started < 10
    assert (failure.attempts, failure.reason) == (2, "timed out after 0.3s")


def test_targets_get_only_the_events_they_asked_for(tmp_path: Path) -> None:
    with webhook_receiver([200]) as receiver:
        notifier = BackgroundNotifier([WebhookTarget(receiver.url, events=["failed"])], QUICK)
        assert notifier.wants(NotifyEvent.FAILED) and not notifier.wants(NotifyEvent.FINISHED)
        assert deliver(notifier) == []
        assert receiver.received == []
