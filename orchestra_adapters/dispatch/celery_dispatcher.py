"""CeleryDispatcher: the dispatch port on a Celery fleet (Redis broker and result backend)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from celery import Celery
from celery.exceptions import TaskRevokedError
from celery.exceptions import TimeoutError as CeleryTimeout
from kombu.exceptions import OperationalError

from orchestra_adapters.dispatch.broker import display_url
from orchestra_adapters.dispatch.celery_app import TASK_NAMES
from orchestra_core.ports.dispatcher import DispatchError, DispatchTimeoutError, Task, TaskHandle


class CeleryDispatcher:
    """Sends tasks by name to their queue (so the sender needs no worker code), awaits results in the backend,
    revokes queued tasks."""

    def __init__(self, app: Celery, broker: str, default_queue: str) -> None:
        self._app = app
        self.location = display_url(broker)
        self._queue = default_queue

    def submit(self, task: Task) -> TaskHandle:
        task_id = task.task_id or uuid.uuid4().hex
        queue = task.queue or self._queue
        try:
            self._app.send_task(
                TASK_NAMES[task.kind],
                args=(task.session_id, queue, dict(task.payload)),
                task_id=task_id,
                queue=queue,
                retry=False,
            )
        except OperationalError as error:
            raise DispatchError(f"dispatch.broker {self.location}: cannot queue the task: {error}") from None
        return TaskHandle(task_id, task.kind, task.session_id, queue)

    def result(self, handle: TaskHandle, timeout: float | None = None) -> Mapping[str, Any]:
        found = self._app.AsyncResult(handle.task_id)
        try:
            value = found.get(timeout=timeout, propagate=True, disable_sync_subtasks=False)
        except CeleryTimeout:
            raise DispatchTimeoutError(f"task {handle.task_id} gave no result within {timeout}s") from None
        except TaskRevokedError:
            raise DispatchError(f"task {handle.task_id} was cancelled") from None
        except OperationalError as error:
            raise DispatchError(f"dispatch.broker {self.location}: cannot read the result: {error}") from None
        except Exception as error:  # the task raised on its worker: Celery re-raises it here
            raise DispatchError(f"task {handle.task_id} failed on its worker: {type(error).__name__}: {error}") from None
        return dict(value or {})

    def cancel(self, handle: TaskHandle) -> None:
        try:
            self._app.control.revoke(handle.task_id)
        except OperationalError as error:
            raise DispatchError(f"dispatch.broker {self.location}: cannot revoke the task: {error}") from None

    def close(self) -> None:
        self._app.close()
