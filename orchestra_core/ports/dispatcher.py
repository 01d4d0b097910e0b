"""Dispatcher port: hand a session (or a parallel branch) to whoever runs it, await its result, cancel it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map

TaskKind = Literal["session", "branch"]
DEFAULT_QUEUE = "orchestra"


class DispatchError(OrchestraError):
    """The dispatcher cannot take or track work (its broker is unreachable, say); the message names it."""


class DispatchTimeoutError(DispatchError):
    """A result did not arrive in the time given."""


@frozen
class Task:
    """One unit of work for the fleet.

    Attributes:
        kind: `session` (run or resume a recorded session to its end) or `branch` (one parallel branch).
        session_id: The session the work belongs to.
        queue: The queue whose workers may take it (None: the default queue).
        payload: Plain JSON values the runner of the task needs (a branch's start, context, workspace).
        task_id: The task's id, chosen by the caller (so it can be recorded before it is sent); "" lets the
            dispatcher choose.
    """

    kind: TaskKind
    session_id: str
    queue: str | None = None
    payload: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    task_id: str = ""


@frozen
class TaskHandle:
    """A submitted task: its id, and the queue it went to."""

    task_id: str
    kind: TaskKind
    session_id: str
    queue: str


TaskRunner = Callable[[Task], Mapping[str, Any]]
"""What a worker does with a task it takes: runs it and returns its result (a plain JSON mapping)."""


@runtime_checkable
class Dispatcher(Protocol):
    """Where work goes: an in-process pool (the default) or a fleet of workers behind a broker.

    A task's result is the plain JSON mapping its runner returned. Work is run at least once: a dispatcher may
    run a task again after its worker was lost, so runners decide by the session lock whether there is work
    left (see docs/fleet.md).
    """

    def submit(self, task: Task) -> TaskHandle:
        """Queue the task.

        Raises:
            DispatchError: The task could not be queued (the message names the broker).
        """
        ...

    def result(self, handle: TaskHandle, timeout: float | None = None) -> Mapping[str, Any]:
        """Wait for the task's result.

        Raises:
            DispatchTimeoutError: Not there within `timeout` seconds.
            DispatchError: The task failed or was cancelled, or the broker is unreachable.
        """
        ...

    def cancel(self, handle: TaskHandle) -> None:
        """Make sure a queued task never starts (a running one is stopped by its runner; see FleetLedger)."""
        ...

    def close(self) -> None:
        """Release connections and threads."""
        ...
