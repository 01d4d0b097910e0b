"""The default dispatch adapter runs tasks in this process: results come back, a queued task can be cancelled."""

from __future__ import annotations

import threading

import pytest

from orchestra_adapters.dispatch.in_process import InProcessDispatcher
from orchestra_core.ports.dispatcher import Dispatcher, DispatchError, DispatchTimeoutError, Task


def test_tasks_run_here_and_their_results_come_back() -> None:
    gate = threading.Event()

    def runner(task: Task) -> dict[str, str]:
        gate.wait(10)
        return {"ran": task.session_id, "kind": task.kind}

    dispatcher = InProcessDispatcher(runner, max_workers=1)
    assert isinstance(dispatcher, Dispatcher)
    first = dispatcher.submit(Task("session", "1"))
    second = dispatcher.submit(Task("branch", "1", "gpu", {"branch": "fan:a"}, task_id="t2"))
    assert (second.task_id, second.queue) == ("t2", "gpu")
    with pytest.raises(DispatchTimeoutError):
        dispatcher.result(first, timeout=0.05)
    dispatcher.cancel(second)  # still queued behind the first: it never starts
    gate.set()
    assert dispatcher.result(first, timeout=10) == {"ran": "1", "kind": "session"}
    with pytest.raises(DispatchError, match="cancelled"):
        dispatcher.result(second, timeout=10)
    dispatcher.close()
