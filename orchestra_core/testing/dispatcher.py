"""InMemoryDispatcher: the Dispatcher port as a broker in memory, with worker threads a test starts per queue."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from orchestra_core.ports.dispatcher import (
    DEFAULT_QUEUE,
    DispatchError,
    DispatchTimeoutError,
    Task,
    TaskHandle,
    TaskRunner,
)


class InMemoryDispatcher:
    """Queues tasks per queue; `serve(queues, runner)` starts a worker thread that takes the tasks of those queues
    in order and runs them (`stop()` it, or `close()` the dispatcher). Like a broker: a task waits until a worker
    of its queue takes it, a cancelled task that has not started never does, and `submitted` keeps every task
    sent (in order) for a test to inspect."""

    def __init__(self, default_queue: str = DEFAULT_QUEUE) -> None:
        self.default_queue = default_queue
        self.submitted: list[Task] = []
        self._queued: list[Task] = []
        self._results: dict[str, tuple[bool, Any]] = {}
        self._workers: list[InMemoryWorker] = []
        self._changed = threading.Condition()

    def submit(self, task: Task) -> TaskHandle:
        task_id = task.task_id or uuid.uuid4().hex
        queue = task.queue or self.default_queue
        sent = Task(task.kind, task.session_id, queue, task.payload, task_id)
        with self._changed:
            self.submitted.append(sent)
            self._queued.append(sent)
            self._changed.notify_all()
        return TaskHandle(task_id, task.kind, task.session_id, queue)

    def result(self, handle: TaskHandle, timeout: float | None = None) -> Mapping[str, Any]:
        with self._changed:
            if not self._changed.wait_for(lambda: handle.task_id in self._results, timeout):
                raise DispatchTimeoutError(f"task {handle.task_id} gave no result within {timeout}s")
            ok, value = self._results[handle.task_id]
        if not ok:
            raise DispatchError(f"task {handle.task_id} {value}")
        return dict(value)

    def cancel(self, handle: TaskHandle) -> None:
        with self._changed:
            if any(task.task_id == handle.task_id for task in self._queued):
                self._queued = [task for task in self._queued if task.task_id != handle.task_id]
                self._results[handle.task_id] = (False, "was cancelled")
            self._changed.notify_all()

    def serve(self, queues: Sequence[str], runner: TaskRunner, *, name: str = "worker") -> InMemoryWorker:
        """Start a worker thread taking the tasks of `queues` (empty: the default queue) and running them."""
        worker = InMemoryWorker(self, tuple(queues) or (self.default_queue,), runner, name)
        self._workers.append(worker)
        worker.start()
        return worker

    def queued(self) -> list[Task]:
        """The tasks no worker took yet, oldest first."""
        with self._changed:
            return list(self._queued)

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers.clear()

    def _take(self, queues: Sequence[str], stopped: threading.Event) -> Task | None:
        with self._changed:
            while not stopped.is_set():
                for task in self._queued:
                    if task.queue in queues:
                        self._queued.remove(task)
                        return task
                self._changed.wait(0.05)
        return None

    def _finish(self, task_id: str, ok: bool, value: Any) -> None:
        with self._changed:
            self._results[task_id] = (ok, value)
            self._changed.notify_all()


class InMemoryWorker:
    """One worker thread of an InMemoryDispatcher."""

    def __init__(self, broker: InMemoryDispatcher, queues: tuple[str, ...], runner: TaskRunner, name: str) -> None:
        self.queues = queues
        self.name = name
        self.ran: list[Task] = []
        self._broker = broker
        self._runner = runner
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"in-memory-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Take no further task; wait for the one running now."""
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=60)

    def _loop(self) -> None:
        while True:
            task = self._broker._take(self.queues, self._stopped)
            if task is None:
                return
            self.ran.append(task)
            try:
                value = self._runner(task)
            except Exception as error:  # the task failed on its worker: its result says so
                self._broker._finish(task.task_id, False, f"failed on its worker: {type(error).__name__}: {error}")
            else:
                self._broker._finish(task.task_id, True, dict(value or {}))


__all__ = ["InMemoryDispatcher", "InMemoryWorker"]
