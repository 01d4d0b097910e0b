"""How a cancel over HTTP reaches the work a run is doing: agent attempts of its backend and its commands."""

from __future__ import annotations

import threading
from typing import Any

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.server.runs import CancellableRunner, cancellable_backend
from orchestra_core.model.cancellation import Cancellation


class _WaitingAgent:
    """A backend whose attempt runs until it is cancelled."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancel_reason: str | None = None

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None, *, cancel: Cancellation | None = None) -> str:
        assert cancel is not None
        self.started.set()
        cancel.wait()
        self.cancel_reason = cancel.reason
        return "stopped"


class _OldAgent:
    """A backend written before the `cancel` keyword existed."""

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> str:
        return f"ran {node}"

    def close(self) -> None:
        return None


def test_cancelling_the_run_cancels_the_running_agent_attempt() -> None:
    stop = Cancellation()
    agent = _WaitingAgent()
    backend = cancellable_backend(agent, stop)(None)
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.append(backend.run("plan", "p", None, cancel=Cancellation())))
    worker.start()
    agent.started.wait()
    stop.cancel("the run was cancelled over HTTP")
    worker.join()
    assert results == ["stopped"]
    assert agent.cancel_reason == "the run was cancelled over HTTP"


def test_an_agent_started_after_the_cancel_is_cancelled_at_once() -> None:
    stop = Cancellation()
    stop.cancel()
    agent = _WaitingAgent()
    assert cancellable_backend(agent, stop)(None).run("plan", "p", None) == "stopped"


def test_a_backend_factory_and_a_backend_without_cancel_still_work() -> None:
    stop = Cancellation()
    built = cancellable_backend(lambda runtime: _OldAgent(), stop)(object())
    assert built.run("plan", "p", None) == "ran plan"
    assert built.close() is None  # other methods are the backend's own
    assert cancellable_backend(lambda runtime: None, stop)(object()) is None  # the factory chose simulation
    assert cancellable_backend(None, stop) is None


def test_cancelling_the_run_kills_the_running_command(tmp_path: Any) -> None:
    stop = Cancellation()
    runner = CancellableRunner(SubprocessCommandRunner(), stop)
    results: list[Any] = []
    marker = tmp_path / "started"
    worker = threading.Thread(
        target=lambda: results.append(runner.run(f"touch {marker}; exec sleep 600", cwd=str(tmp_path)))
    )
    worker.start()
    while not marker.exists():
        threading.Event().wait(0.01)
    stop.cancel()
    worker.join()
    assert results[0].cancelled
