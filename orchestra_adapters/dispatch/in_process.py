"""InProcessDispatcher: the default dispatch adapter; tasks run in threads of this process, nothing queued
anywhere else."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from attrs import evolve

from orchestra_core.ports.dispatcher import (
    DEFAULT_QUEUE,
    DispatchError,
    DispatchTimeoutError,
    Task,
    TaskHandle,
    TaskRunner,
)


class InProcessDispatcher:
    """Runs each task with `runner` in a pool of `max_workers` threads; a cancelled task that has not started never
    does. Queues are ignored: this process serves them all."""

    def __init__(self, runner: TaskRunner, *, max_workers: int = 4) -> None:
        self._runner = runner
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="orchestra-dispatch")
        self._futures: dict[str, Future[Mapping[str, Any]]] = {}
        self._lock = threading.Lock()

    def submit(self, task: Task) -> TaskHandle:
        task_id = task.task_id or uuid.uuid4().hex
        queue = task.queue or DEFAULT_QUEUE
        future = self._pool.submit(self._runner, evolve(task, task_id=task_id, queue=queue))
        with self._lock:
            self._futures[task_id] = future
        return TaskHandle(task_id, task.kind, task.session_id, queue)

    def result(self, handle: TaskHandle, timeout: float | None = None) -> Mapping[str, Any]:
        with self._lock:
            future = self._futures.get(handle.task_id)
        if future is None:
            raise DispatchError(f"no task {handle.task_id} was submitted here")
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            raise DispatchTimeoutError(f"task {handle.task_id} gave no result within {timeout}s") from None
        except CancelledError:
            raise DispatchError(f"task {handle.task_id} was cancelled") from None
        except Exception as error:  # the runner raised: the task failed
            raise DispatchError(f"task {handle.task_id} failed: {type(error).__name__}: {error}") from None

    def cancel(self, handle: TaskHandle) -> None:
        with self._lock:
            future = self._futures.get(handle.task_id)
        if future is not None:
            future.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
