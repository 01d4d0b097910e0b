"""A run with a notifier (the library's `notifier=` port): its end, its cost, a question that waits, a failure it
records; a run without one imports nothing of notifications."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orchestra_core as oc
from orchestra_core.interview import CallbackInterviewer
from orchestra_core.model.interview import Answer, Question
from orchestra_core.model.money import Money
from orchestra_core.model.records import NotificationFailed
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from orchestra_core.testing.notifier import RecordingNotifier
from orchestra_core.testing.session_store import InMemorySessionStore

STEPS = """
digraph steps {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt="A"]; b [prompt="B"]
    start -> a -> b -> done
}
"""
GATE = """
digraph gate {
    start [shape=Mdiamond]; done [shape=Msquare]
    ask [shape=hexagon, label="Ship it?"]
    start -> ask
    ask -> done [label="[Y] Yes"]
}
"""


class CostlyBackend:
    """Each node is two agent turns: one that cost $0.125, one whose model has no price; node `b` fails."""

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> Any:
        if on_turn is not None:
            on_turn(AgentTurn(node.id, 0, "claude-sonnet", "anthropic", cost_usd=0.125))
            on_turn(AgentTurn(node.id, 1, "mystery", "openai-compatible", token_usage=TokenUsage(100, 10)))
        return oc.Outcome.fail("tests failed") if node.id == "b" else "done"


def test_a_failed_run_notifies_with_its_cost_and_reason() -> None:
    notifier = RecordingNotifier()
    result = oc.run_pipeline(
        oc.parse_pipeline(STEPS), store=InMemorySessionStore(), backend=CostlyBackend(), notifier=notifier
    )
    assert not result.succeeded
    (sent,) = notifier.notifications
    assert sent.event.value == "failed" and sent.status == "fail" and sent.session_id == result.session_id
    assert sent.pipeline == "steps" and "tests failed" in (sent.failure_reason or "")
    assert (sent.cost.known, sent.cost.unknown) == (Money.usd(0.25), 2)
    assert notifier.flushes  # the end of the run waited for what was under way


class Priced:
    """Each node is one agent turn that cost $0.125; `b` fails while `fail_b` is set."""

    def __init__(self, fail_b: bool) -> None:
        self.fail_b = fail_b

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> Any:
        if on_turn is not None:
            on_turn(AgentTurn(node.id, 0, "claude-sonnet", "anthropic", cost_usd=0.125))
        return oc.Outcome.fail("tests failed") if node.id == "b" and self.fail_b else "done"


def test_a_resumed_run_notifies_what_the_whole_session_cost(tmp_path: Path) -> None:
    store, graph = InMemorySessionStore(), oc.parse_pipeline(STEPS)
    first = oc.run_pipeline(graph, store=store, backend=Priced(fail_b=True), notifier=RecordingNotifier())
    assert not first.succeeded
    notifier = RecordingNotifier()
    again = oc.resume_session(first.session_id, store=store, graph=graph, backend=Priced(fail_b=False), notifier=notifier)
    assert again.succeeded
    (sent,) = notifier.notifications
    assert sent.event.value == "finished" and sent.cost.known > Money.usd(0.25) and sent.cost.complete
    assert sent.cost.known == oc.session_spending(store, first.session_id).cost.known  # a, b, then b again


def test_a_delivery_that_failed_is_a_turn_of_the_session() -> None:
    store = InMemorySessionStore()
    notifier = RecordingNotifier(fail_with="HTTP 503", target="webhook https://hooks.example.com/services/…")
    result = oc.run_pipeline(oc.parse_pipeline(STEPS), store=store, notifier=notifier)  # simulated: it succeeds
    assert result.succeeded
    failures = [decode_record(turn) for turn in history(store, result.session_id)]
    failures = [record for record in failures if isinstance(record, NotificationFailed)]
    assert failures == [NotificationFailed("webhook https://hooks.example.com/services/…", "finished", 1, "HTTP 503")]


def test_a_gate_that_waits_for_a_human_sends_needs_input_before_its_answer() -> None:
    notifier = RecordingNotifier()
    asked = threading.Event()

    def human(question: Question) -> Answer:
        asked.set()
        for _ in range(500):  # the human answers once the notification went out
            if notifier.events():
                break
            time.sleep(0.01)
        return Answer.choose(question.options[0])

    result = oc.run_pipeline(
        oc.parse_pipeline(GATE), store=InMemorySessionStore(), interviewer=CallbackInterviewer(human), notifier=notifier
    )
    assert asked.is_set() and result.succeeded
    assert notifier.events() == ["needs_input", "finished"]
    question = notifier.notifications[0].question
    assert question is not None and question.text == "Ship it?" and question.node_id == "ask"


def test_a_run_without_a_notifier_imports_nothing_of_notifications(tmp_path: Path) -> None:
    code = (
        "import sys, orchestra_core as oc\n"
        "from orchestra_adapters.container import build_container, run_arguments, close_container\n"
        f"c = build_container(config={{'backend': 'simulate'}}, project_root={str(tmp_path)!r})\n"
        f"g = oc.parse_pipeline({STEPS!r})\n"
        "args = run_arguments(c, graph=g)\n"
        "assert args['notifier'] is None\n"
        "r = oc.run_pipeline(g, **args)\n"
        "close_container(c)\n"
        "assert r.succeeded\n"
        "loaded = sorted(m for m in sys.modules if 'notif' in m or m.startswith('orchestra_adapters.notify'))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
