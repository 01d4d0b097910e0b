"""The Celery application of a fleet: Redis as broker and result backend, late acknowledgement, one message
prefetched per free slot, and the two tasks (`orchestra.session`, `orchestra.branch`) that hand work to the
process's task runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from celery import Celery

from orchestra_adapters.dispatch.broker import BROKER_TIMEOUT_S
from orchestra_core.model.settings import DispatchSettings
from orchestra_core.ports.dispatcher import Task

SESSION_TASK = "orchestra.session"
BRANCH_TASK = "orchestra.branch"
TASK_NAMES = {"session": SESSION_TASK, "branch": BRANCH_TASK}
RESULT_EXPIRES_S = 7 * 24 * 3600

_RUNNERS: dict[str, Callable[[Task], Mapping[str, Any]]] = {}


def set_task_runner(runner: Callable[[Task], Mapping[str, Any]]) -> None:
    """What this process's tasks call (`orchestra worker` sets it before the worker starts)."""
    _RUNNERS["runner"] = runner


def make_celery(broker: str, settings: DispatchSettings) -> Celery:
    """The fleet's Celery app for `broker` (also its result backend).

    Work is acknowledged only once it has run (`acks_late`), and given back to the queue when the worker process
    dies (`reject_on_worker_lost`); each worker slot reserves one message at a time. A redelivered session task
    does nothing when the session's lock says a live runner has it (docs/fleet.md), so redelivery never runs a
    session twice.
    """
    app = Celery("orchestra", broker=broker, backend=broker, set_as_current=False)
    transport = {
        "visibility_timeout": float(settings.visibility_timeout),
        "socket_connect_timeout": BROKER_TIMEOUT_S,
        "socket_keepalive": True,
    }
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=settings.queue,
        task_create_missing_queues=True,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_expires=RESULT_EXPIRES_S,
        result_extended=True,
        task_track_started=True,
        broker_transport_options=transport,
        result_backend_transport_options={"socket_connect_timeout": BROKER_TIMEOUT_S},
        redis_socket_connect_timeout=BROKER_TIMEOUT_S,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_send_task_events=False,
        enable_utc=True,
    )

    @app.task(name=SESSION_TASK, bind=True, shared=False)
    def run_session(self: Any, session_id: str, queue: str, payload: dict[str, Any]) -> Mapping[str, Any]:
        return _run(Task("session", session_id, queue, payload, self.request.id))

    @app.task(name=BRANCH_TASK, bind=True, shared=False)
    def run_branch(self: Any, session_id: str, queue: str, payload: dict[str, Any]) -> Mapping[str, Any]:
        return _run(Task("branch", session_id, queue, payload, self.request.id))

    return app


def _run(task: Task) -> Mapping[str, Any]:
    runner = _RUNNERS.get("runner")
    if runner is None:
        raise RuntimeError("this process runs no orchestra worker (no task runner was set)")
    return runner(task)
