"""The Dispatcher contract: a task submitted reaches a runner and its result comes back; a cancelled queued task
never runs; a failing task is an error naming it; and, for dispatchers with queues, work goes only to the runners of
its queue and waits while there is none."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestra_core.ports.dispatcher import Dispatcher as DispatcherPort
from orchestra_core.ports.dispatcher import DispatchError, DispatchTimeoutError, Task, TaskHandle, TaskRunner
from orchestra_core.testing.contracts._base import PortContract, raises, requires

Stop = Callable[[], None]
QUEUES = "queues"
RESULT_TIMEOUT_S = 60.0


class DispatcherContract(PortContract):
    """A runner implements `make_dispatcher()` and `serve(dispatcher, queues, runner)`, which starts something that
    runs the tasks of `queues` (empty: the dispatcher's default queue) with `runner` and returns what stops it.

    Optional capability `queues`: tasks go only to runners serving their queue, and wait (no result) while none
    does (an in-process dispatcher serves every queue itself, so it does not claim it).
    """

    OPTIONAL_CAPABILITIES = frozenset({QUEUES})
    dispatcher: DispatcherPort

    def make_dispatcher(self) -> DispatcherPort:
        """The dispatcher under test (its default queue: whatever it is configured with)."""
        raise NotImplementedError

    def serve(self, dispatcher: DispatcherPort, queues: Sequence[str], runner: TaskRunner) -> Stop:
        """Start running the tasks of `queues` with `runner`; return what stops it."""
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.dispatcher = self.make_dispatcher()
        self.add_cleanup(self.dispatcher.close)
        self.ran: list[Task] = []
        self._ran_lock = threading.Lock()

    def _serve(self, queues: Sequence[str] = (), runner: TaskRunner | None = None) -> None:
        self.add_cleanup(self.serve(self.dispatcher, queues, runner or self.echo))

    def echo(self, task: Task) -> Mapping[str, Any]:
        """A runner that answers with what it was given."""
        with self._ran_lock:
            self.ran.append(task)
        return {"kind": task.kind, "session_id": task.session_id, "queue": task.queue, "payload": dict(task.payload)}

    def test_is_a_dispatcher(self) -> None:
        assert isinstance(self.dispatcher, DispatcherPort)

    def test_a_task_runs_and_its_result_comes_back(self) -> None:
        self._serve()
        handle = self.dispatcher.submit(Task("session", "s1", payload={"n": 1, "names": ["a", "b"]}, task_id="t-1"))
        assert isinstance(handle, TaskHandle)
        assert (handle.task_id, handle.kind, handle.session_id) == ("t-1", "session", "s1")
        assert handle.queue  # the default queue, named
        result = self.dispatcher.result(handle, timeout=RESULT_TIMEOUT_S)
        assert result == {"kind": "session", "session_id": "s1", "queue": handle.queue, "payload": {"n": 1, "names": ["a", "b"]}}

    def test_a_branch_task_runs_too(self) -> None:
        self._serve()
        handle = self.dispatcher.submit(Task("branch", "s1", payload={"branch": "fan:a"}))
        assert handle.task_id and handle.kind == "branch"
        assert self.dispatcher.result(handle, timeout=RESULT_TIMEOUT_S)["payload"] == {"branch": "fan:a"}

    def test_many_tasks_each_get_their_own_result(self) -> None:
        self._serve()
        handles = [self.dispatcher.submit(Task("session", f"s{n}", payload={"n": n})) for n in range(8)]
        assert len({handle.task_id for handle in handles}) == 8
        for n, handle in enumerate(handles):
            assert self.dispatcher.result(handle, timeout=RESULT_TIMEOUT_S)["payload"] == {"n": n}

    def test_a_failing_task_is_an_error_naming_it(self) -> None:
        def fails(task: Task) -> Mapping[str, Any]:
            raise RuntimeError("the runner broke")

        self._serve(runner=fails)
        handle = self.dispatcher.submit(Task("session", "s1", task_id="t-broken"))
        with raises(DispatchError, match="t-broken"):
            self.dispatcher.result(handle, timeout=RESULT_TIMEOUT_S)

    def test_a_cancelled_task_that_has_not_started_never_runs(self) -> None:
        started = threading.Event()
        release = threading.Event()

        def blocks(task: Task) -> Mapping[str, Any]:
            if task.session_id.startswith("busy"):
                started.set()
                release.wait(RESULT_TIMEOUT_S)
            return self.echo(task)

        self._serve(runner=blocks)
        busy = [self.dispatcher.submit(Task("session", f"busy-{n}")) for n in range(8)]  # more than any pool runs
        assert started.wait(RESULT_TIMEOUT_S)
        doomed = self.dispatcher.submit(Task("session", "doomed"))
        self.dispatcher.cancel(doomed)
        release.set()
        for handle in busy:
            self.dispatcher.result(handle, timeout=RESULT_TIMEOUT_S)
        after = self.dispatcher.submit(Task("session", "after"))
        self.dispatcher.result(after, timeout=RESULT_TIMEOUT_S)
        assert "doomed" not in {task.session_id for task in self.ran}

    @requires(QUEUES)
    def test_a_task_waits_while_no_runner_serves_its_queue(self) -> None:
        self._serve(queues=("other",))
        handle = self.dispatcher.submit(Task("session", "s1", queue="nobody-serves-this"))
        with raises(DispatchTimeoutError):
            self.dispatcher.result(handle, timeout=0.5)
        assert self.ran == []

    @requires(QUEUES)
    def test_a_task_goes_only_to_the_runners_of_its_queue(self) -> None:
        def marks(name: str) -> TaskRunner:
            def run(task: Task) -> Mapping[str, Any]:
                return {**self.echo(task), "runner": name}

            return run

        self._serve(queues=("cpu",), runner=marks("cpu"))
        gpu_task = self.dispatcher.submit(Task("session", "s1", queue="gpu"))
        cpu_task = self.dispatcher.submit(Task("session", "s2", queue="cpu"))
        assert self.dispatcher.result(cpu_task, timeout=RESULT_TIMEOUT_S)["runner"] == "cpu"
        time.sleep(0.2)
        assert [task.session_id for task in self.ran] == ["s2"]
        self._serve(queues=("gpu",), runner=marks("gpu"))
        assert self.dispatcher.result(gpu_task, timeout=RESULT_TIMEOUT_S)["runner"] == "gpu"


__all__ = ["DispatcherContract"]
