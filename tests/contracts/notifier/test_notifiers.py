"""The Notifier contract run against the recording fake and the background notifier with a webhook (a receiver on
loopback) and with a command."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from orchestra_adapters.notify.delivery import BackgroundNotifier, RetryPolicy
from orchestra_adapters.notify.targets import CommandTarget, WebhookTarget
from orchestra_core.testing.contracts.notifier import NotifierContract
from orchestra_core.testing.notifier import RecordingNotifier
from tests.support.webhook_receiver import WebhookReceiver

QUICK_RETRIES = RetryPolicy(attempts=3, first_delay_s=0.01)
# A command that appends the event of the JSON on its standard input to a file (an argument: ours, not the event's).
APPEND_EVENT = "import json, sys; open(sys.argv[1], 'a').write(json.load(sys.stdin)['event'] + '\\n')"


class TestRecordingNotifier(NotifierContract):
    def make_notifier(self, *, events: Sequence[str] = (), failing: bool = False) -> RecordingNotifier:
        self.notifier = RecordingNotifier(events, fail_with="refused" if failing else None)
        return self.notifier

    def delivered(self) -> list[str]:
        return self.notifier.events()


class TestWebhookNotifier(NotifierContract):
    def make_notifier(self, *, events: Sequence[str] = (), failing: bool = False) -> BackgroundNotifier:
        self.failing = failing
        self.receiver = WebhookReceiver([500] if failing else [200]).start()
        self.add_cleanup(self.receiver.stop)
        notifier = BackgroundNotifier([WebhookTarget(self.receiver.url, events=events, timeout_s=5)], QUICK_RETRIES)
        self.add_cleanup(notifier.close)
        return notifier

    def delivered(self) -> list[str]:
        """What the receiver took (it answers 500 to everything when failing)."""
        return [] if self.failing else [json.loads(request.body)["event"] for request in self.receiver.received]


class TestCommandNotifier(NotifierContract):
    def make_notifier(self, *, events: Sequence[str] = (), failing: bool = False) -> BackgroundNotifier:
        self.log = self.tmp / f"events-{id(events)}-{failing}.txt"
        argv = ["false"] if failing else [sys.executable, "-c", APPEND_EVENT, str(self.log)]
        notifier = BackgroundNotifier([CommandTarget(argv, events=events, cwd=str(self.tmp), timeout_s=10)], QUICK_RETRIES)
        self.add_cleanup(notifier.close)
        return notifier

    def delivered(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []
