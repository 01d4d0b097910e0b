"""The Dispatcher contract run against the in-memory fake, the in-process adapter (the default) and the Celery
adapter with a real Redis broker and an embedded Celery worker."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from orchestra_core.ports.dispatcher import Dispatcher, Task
from orchestra_core.testing.contracts.dispatcher import DispatcherContract, Stop, TaskRunner
from orchestra_core.testing.dispatcher import InMemoryDispatcher
from tests.support.fleet_servers import RedisServer

_REDIS: list[RedisServer] = []


class TestInMemoryDispatcher(DispatcherContract):
    capabilities = frozenset({"queues"})

    def make_dispatcher(self) -> Dispatcher:
        return InMemoryDispatcher()

    def serve(self, dispatcher: Dispatcher, queues: Sequence[str], runner: TaskRunner) -> Stop:
        assert isinstance(dispatcher, InMemoryDispatcher)
        return dispatcher.serve(queues, runner).stop


class TestInProcessDispatcher(DispatcherContract):
    """Runs every task in its own threads, whatever the queue (so it does not claim `queues`)."""

    def make_dispatcher(self) -> Dispatcher:
        from orchestra_adapters.dispatch.in_process import InProcessDispatcher

        self._runner: list[TaskRunner] = []
        return InProcessDispatcher(self._run, max_workers=4)

    def _run(self, task: Task) -> Mapping[str, Any]:
        return self._runner[-1](task)

    def serve(self, dispatcher: Dispatcher, queues: Sequence[str], runner: TaskRunner) -> Stop:
        self._runner.append(runner)
        return lambda: None


@pytest.fixture(scope="class")
def _redis(redis_server: RedisServer) -> Iterator[None]:
    _REDIS.append(redis_server)
    yield
    _REDIS.clear()


@pytest.mark.usefixtures("_redis")
class TestCeleryDispatcher(DispatcherContract):
    """Each test its own default queue, so a test's leftovers never reach the next one's worker."""

    capabilities = frozenset({"queues"})

    def make_dispatcher(self) -> Dispatcher:
        from orchestra_adapters.dispatch.celery_app import make_celery
        from orchestra_adapters.dispatch.celery_dispatcher import CeleryDispatcher
        from orchestra_core.model.settings import DispatchSettings

        broker = _REDIS[0].url
        self._queue = f"contract-{uuid.uuid4().hex[:8]}"
        self._app = make_celery(broker, DispatchSettings(broker=broker, queue=self._queue))
        return CeleryDispatcher(self._app, broker, self._queue)

    def serve(self, dispatcher: Dispatcher, queues: Sequence[str], runner: TaskRunner) -> Stop:
        from celery.contrib.testing.worker import start_worker

        from orchestra_adapters.dispatch.celery_app import set_task_runner

        set_task_runner(runner)
        worker = start_worker(
            self._app, concurrency=2, pool="threads", perform_ping_check=False, queues=list(queues) or [self._queue],
            shutdown_timeout=60,
        )  # fmt: skip
        worker.__enter__()

        def stop() -> None:
            # The embedded worker's thread (a daemon) sometimes outlives its shutdown timeout on a loaded machine;
            # that is Celery's test harness, not the dispatcher under test, and its queue is this test's alone.
            with contextlib.suppress(RuntimeError):
                worker.__exit__(None, None, None)

        return stop
