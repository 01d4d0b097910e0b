"""Notifications: what they add per agent turn (on: a webhook on loopback; off: nothing), how long a notification
takes to reach a receiver on loopback, what the end of a run waits for, and what a run imports without them.

Prints one JSON object. Exits 1 when a run without `notify:` imports anything of notifications.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.webhook_receiver import webhook_receiver  # noqa: E402

NODES = 20
TURNS_PER_NODE = 50
REPEATS = 7
DELIVERIES = 50
PIPELINE = (
    "digraph bench {\n  start [shape=Mdiamond]; done [shape=Msquare]\n"
    + "".join(f'  n{i} [prompt="step {i}"]\n' for i in range(NODES))
    + "  start -> " + " -> ".join(f"n{i}" for i in range(NODES)) + " -> done\n}\n"
)

_OFF_PROBE = """
import sys, orchestra_core as oc
from orchestra_adapters.container import build_container, run_arguments, close_container
c = build_container(config={'backend': 'simulate'}, project_root=sys.argv[1])
g = oc.parse_pipeline(sys.argv[2])
r = oc.run_pipeline(g, **run_arguments(c, graph=g))
close_container(c)
print(sorted(m for m in sys.modules if 'notif' in m or m.startswith(('orchestra_adapters.notify', 'requests'))))
"""


class TurningBackend:
    """Each node: TURNS_PER_NODE agent turns (with a cost), then done; no model, so only Orchestra's work is timed."""

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> str:
        from orchestra_core.model.turn import AgentTurn

        for number in range(TURNS_PER_NODE):
            if on_turn is not None:
                on_turn(AgentTurn(node.id, number, "scripted", "scripted", cost_usd=0.001))
        return "done"


def run_seconds(notifier: Any) -> float:
    import orchestra_core as oc
    from orchestra_core.testing.session_store import InMemorySessionStore

    graph = oc.parse_pipeline(PIPELINE)
    started = time.perf_counter()
    result = oc.run_pipeline(graph, store=InMemorySessionStore(), backend=TurningBackend(), notifier=notifier)
    took = time.perf_counter() - started
    assert result.succeeded
    return took


def per_turn_overhead(url: str) -> dict[str, float]:
    """Best-of runs with notifications off and on (a webhook on loopback): the difference per agent turn."""
    from orchestra_adapters.notify.delivery import BackgroundNotifier
    from orchestra_adapters.notify.targets import WebhookTarget

    turns = NODES * TURNS_PER_NODE
    off, on = [], []
    for _ in range(REPEATS):
        off.append(run_seconds(None))
        notifier = BackgroundNotifier([WebhookTarget(url)])
        on.append(run_seconds(notifier))  # with the end's flush: `finished` is delivered before it returns
        notifier.close()
    return {
        "turns_per_run": turns,
        "run_off_s": round(min(off), 4),
        "run_on_s": round(min(on), 4),
        "per_turn_off_us": round(min(off) / turns * 1e6, 2),
        "per_turn_on_us": round(min(on) / turns * 1e6, 2),
        "added_per_turn_us": round((statistics.median(on) - statistics.median(off)) / turns * 1e6, 2),
    }


def delivery_latency() -> dict[str, float]:
    """From `notify()` to the receiver having the request, one after another; and what `notify()` itself costs."""
    from orchestra_adapters.notify.delivery import BackgroundNotifier
    from orchestra_adapters.notify.targets import WebhookTarget
    from orchestra_core.model.notifications import Notification, NotifyEvent

    latencies, handing = [], []
    with webhook_receiver() as receiver:
        notifier = BackgroundNotifier([WebhookTarget(receiver.url)])
        for index in range(DELIVERIES):
            notification = Notification(
                event=NotifyEvent.NEEDS_INPUT, session_id="1", pipeline="bench", status="running",
                timestamp=datetime.now(UTC),
            )  # fmt: skip
            started = time.perf_counter()
            notifier.notify(notification)
            handing.append(time.perf_counter() - started)
            receiver.wait_for(index + 1, 10)
            latencies.append(time.perf_counter() - started)
        started = time.perf_counter()
        notifier.flush(10.0)
        idle_flush = time.perf_counter() - started
        notifier.close()
    return {
        "notify_call_us_median": round(statistics.median(handing) * 1e6, 1),
        "delivery_ms_median": round(statistics.median(latencies[1:]) * 1000, 2),  # the first one imports requests
        "first_delivery_ms": round(latencies[0] * 1000, 2),
        "flush_when_idle_ms": round(idle_flush * 1000, 3),
    }


def imports_when_off() -> list[str]:
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run(
            [sys.executable, "-c", _OFF_PROBE, work, PIPELINE], capture_output=True, text=True, cwd=work, check=True
        )
    loaded: list[str] = json.loads(done.stdout.strip().replace("'", '"'))
    return loaded


def import_cost_when_on() -> dict[str, float]:
    """Seconds a run with a webhook target spends importing notifications, on top of what every run imports: the
    notifier when the run starts, `requests` in the delivery thread before its first delivery."""
    code = (
        "import sys, time\n"
        "import orchestra_adapters.container, orchestra_adapters.config.orchestra_yaml, orchestra_core.runs.pipeline_run\n"
        "s = time.perf_counter()\n"
        "import orchestra_adapters.notify.factory, orchestra_core.runs.notifications\n"
        "m = time.perf_counter()\n"
        "import requests\n"
        "print(m - s, time.perf_counter() - m)\n"
    )
    timings = [
        tuple(float(value) for value in subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split())
        for _ in range(5)
    ]
    return {
        "notifier_s": round(min(timing[0] for timing in timings), 4),
        "requests_in_delivery_thread_s": round(min(timing[1] for timing in timings), 4),
    }


def subscriber_per_event_us() -> float:
    """What the run's notifications do with each agent turn's event (sum its cost), in microseconds."""
    from orchestra_core.model.events import AgentTurnCompleted
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.ports.clock import SystemClock
    from orchestra_core.runs.notifications import RunNotifications
    from orchestra_core.testing.notifier import RecordingNotifier

    notifications = RunNotifications(RecordingNotifier(), session_id="1", pipeline="bench", clock=SystemClock())
    event = AgentTurnCompleted(
        session_id="1", timestamp=datetime.now(UTC), node_id="n", turn=AgentTurn("n", 0, "m", "p", cost_usd=0.001)
    )
    count = 100_000
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(count):
            notifications.on_event(event)
        best = min(best, time.perf_counter() - started)
    return round(best / count * 1e6, 3)


def main() -> int:
    with webhook_receiver() as receiver:
        overhead = per_turn_overhead(receiver.url)
    off_imports = imports_when_off()
    overhead["subscriber_per_turn_us"] = subscriber_per_event_us()
    report = {
        "per_turn": overhead,
        "delivery": delivery_latency(),
        "import_when_on": import_cost_when_on(),
        "imported_when_off": off_imports,
    }
    print(json.dumps(report, indent=2))
    return 1 if off_imports else 0


if __name__ == "__main__":
    raise SystemExit(main())
