"""ScriptedCodergenBackend: a CodergenBackend fake that scripts results per node and per visit."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from attrs import frozen

from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.codergen_backend import OnTurn

Step = str | StageStatus | Outcome | BaseException | Callable[[Node, str, Context], str | Outcome]


@frozen
class BackendCall:
    """One call the backend received."""

    node_id: str
    visit: int
    prompt: str


class ScriptedCodergenBackend:
    """Plays a script: for each node id, the n-th call gets the n-th step (the last step repeats).

    A step is a StageStatus (an Outcome with that status), an Outcome, an exception (raised), a callable
    `(node, prompt, context) -> str | Outcome`, or a string: a status name (`"fail"`, `"retry"`, ...)
    gives that Outcome, `"text:..."` returns the text after the prefix. Unscripted nodes answer
    `[Scripted] <node id>`. Every call is recorded in `calls`.
    """

    def __init__(self, script: Mapping[str, Sequence[Step] | Step] | None = None) -> None:
        self._script = {node: _steps(steps) for node, steps in (script or {}).items()}
        self.calls: list[BackendCall] = []
        self._visits: dict[str, int] = {}
        self._lock = threading.Lock()

    def visits(self, node_id: str) -> int:
        """How often a node was run."""
        with self._lock:
            return self._visits.get(node_id, 0)

    def run(self, node: Node, prompt: str, context: Context, on_turn: OnTurn | None = None) -> str | Outcome:
        with self._lock:
            visit = self._visits[node.id] = self._visits.get(node.id, 0) + 1
            self.calls.append(BackendCall(node.id, visit, prompt))
        steps = self._script.get(node.id)
        if not steps:
            return f"[Scripted] {node.id}"
        return _play(steps[min(visit, len(steps)) - 1], node, prompt, context)


def _steps(steps: Sequence[Step] | Step) -> list[Step]:
    return list(cast(Sequence[Step], steps)) if isinstance(steps, list | tuple) else [cast(Step, steps)]


def _play(step: Step, node: Node, prompt: str, context: Context) -> str | Outcome:
    if isinstance(step, BaseException):
        raise step
    if isinstance(step, Outcome):
        return step
    if isinstance(step, StageStatus):
        return _status_outcome(step, node)
    if isinstance(step, str):
        if step.startswith("text:"):
            return step[len("text:") :]
        return _status_outcome(StageStatus.parse(step), node)
    return step(node, prompt, context)


def _status_outcome(status: StageStatus, node: Node) -> Outcome:
    reason = (
        f"scripted {status.value} for {node.id}" if status in (StageStatus.FAIL, StageStatus.RETRY) else ""
    )
    return Outcome(status, notes=f"scripted {status.value}", failure_reason=reason)
