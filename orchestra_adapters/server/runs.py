"""One pipeline run started over HTTP: its thread, events, questions and cancellation."""

from __future__ import annotations

import threading
from typing import Any

from orchestra_adapters.server.event_log import EventLog, event_json
from orchestra_adapters.server.questions import HttpInterviewer
from orchestra_core.model.cancellation import Cancellation, current_cancellation, on_cancel

RUNNING, SUCCESS, FAIL, CANCELLED = "running", "success", "fail", "cancelled"
CANCEL_REASON = "the run was cancelled over HTTP"


class ServerRun:
    """A run this server started: it runs `run` (a core PipelineRun, already begun) in its own thread.

    Its status follows the events: `running` until the run ends, then `success`, `fail`, `budget_exceeded` (a
    budget of the session was reached; resumable) or `cancelled` (a cancel asked for while it ran; the store
    records it as failed, stopped by the cancel).
    """

    def __init__(self, session_id: str, pipeline_text: str, interviewer: HttpInterviewer | None) -> None:
        self.session_id = session_id
        self.pipeline_text = pipeline_text
        self.interviewer = interviewer
        self.events = EventLog()
        self.stop = Cancellation(CANCEL_REASON)
        self.status = RUNNING
        self.completed_nodes: list[str] = []
        self.current_node: str | None = None
        self.error: str | None = None
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def on_event(self, event: Any) -> None:
        """The run's `on_event`: note where it is, then log the event for the streams."""
        node_id = getattr(event, "node_id", None)
        if getattr(event, "branch", None) is None and isinstance(node_id, str):
            kind = type(event).__name__
            with self._lock:
                if kind == "StageStarted":
                    self.current_node = node_id
                elif kind == "StageCompleted" or (
                    kind == "StageFailed" and not getattr(event, "will_retry", False)
                ):
                    self.completed_nodes.append(node_id)
                    self.current_node = None
        self.events.append(event_json(event))

    def start(self, target: Any) -> None:
        """Run `target()` (the whole run) in a thread of its own."""
        self.thread = threading.Thread(target=target, name=f"orchestra-run-{self.session_id}", daemon=True)
        self.thread.start()

    def finish(self, status: str, error: str | None = None) -> None:
        """The run ended: its final status (`cancelled` when a cancel came first); the streams end."""
        with self._lock:
            self.status = CANCELLED if self.stop.is_set() else status
            self.error = error
            self.current_node = None
        self.events.close()

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    def cancel(self) -> bool:
        """Ask the run to stop: its running command is killed, its waiting question released, and it stops
        before its next node. False when it is not running."""
        if not self.running:
            return False
        self.stop.cancel(CANCEL_REASON)
        if self.interviewer is not None:
            self.interviewer.cancel()
        return True

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "id": self.session_id,
                "status": self.status,
                "completed_nodes": list(self.completed_nodes),
                "current_node": self.current_node,
                "error": self.error,
            }


class CancellableRunner:
    """A command runner whose running commands are cancelled when the run is (`stop` is cancelled)."""

    def __init__(self, inner: Any, stop: Cancellation) -> None:
        self._inner = inner
        self._stop = stop

    def run(self, command: str, *, cancel: Cancellation | None = None, **kwargs: Any) -> Any:
        attempt = cancel or current_cancellation() or Cancellation()
        with on_cancel(self._stop, lambda: attempt.cancel(CANCEL_REASON)):
            return self._inner.run(command, cancel=attempt, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CancellableBackend:
    """A codergen backend whose running agent attempts are cancelled when the run is (`stop` is cancelled)."""

    def __init__(self, inner: Any, stop: Cancellation) -> None:
        self._inner = inner
        self._stop = stop

    def run(
        self,
        node: Any,
        prompt: str,
        context: Any,
        on_turn: Any = None,
        *,
        cancel: Cancellation | None = None,
        on_failover: Any = None,
        on_activity: Any = None,
    ) -> Any:
        from orchestra_core.model.cancellation import takes_cancel, takes_keyword

        passed = {"on_failover": on_failover, "on_activity": on_activity}
        extra = {
            key: value
            for key, value in passed.items()
            if value is not None and takes_keyword(self._inner.run, key)
        }
        if not takes_cancel(self._inner.run):
            return self._inner.run(node, prompt, context, on_turn=on_turn, **extra)
        attempt = cancel or current_cancellation() or Cancellation()
        with on_cancel(self._stop, lambda: attempt.cancel(CANCEL_REASON)):
            return self._inner.run(node, prompt, context, on_turn=on_turn, cancel=attempt, **extra)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def cancellable_backend(backend: Any, stop: Cancellation) -> Any:
    """The run's backend port (a backend, a factory of one, or None) with its agents cancelled by `stop`."""
    if backend is None:
        return None
    from orchestra_core.ports.codergen_backend import CodergenBackend

    def build(runtime: Any) -> Any:
        built = backend if isinstance(backend, CodergenBackend) else backend(runtime)
        return None if built is None else CancellableBackend(built, stop)

    return build
