"""Run state snapshots: Checkpoint (Attractor 5.3, with a workspace snapshot), RunManifest and RunResult."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.outcome import Outcome


class RunStatus(StrEnum):
    """Where a run stands; `running` in a checkpoint means there is more to do."""

    RUNNING = "running"
    SUCCESS = "success"
    FAIL = "fail"


class OutcomeMap(Mapping[str, Outcome]):
    """An immutable node -> Outcome map that remembers which map it was derived from and what changed.

    `with_outcome` copies the underlying dict (a C-level copy) and records `base` and `changed`, so a
    writer that encoded `base` can encode the new map by re-encoding one entry instead of all of them.
    `base` is a weak reference: a chain of derived maps never keeps old maps alive.
    """

    __slots__ = ("__weakref__", "_base", "_data", "changed")

    def __init__(self, data: Mapping[str, Outcome] | None = None) -> None:
        self._data: dict[str, Outcome] = dict(data or {})
        self._base: weakref.ref[OutcomeMap] | None = None
        self.changed: str | None = None

    @property
    def base(self) -> OutcomeMap | None:
        """The map this one was derived from, while something else keeps it alive."""
        return self._base() if self._base is not None else None

    def with_outcome(self, node_id: str, outcome: Outcome) -> OutcomeMap:
        """A new map with one entry set; insertion order is kept for existing keys."""
        derived = OutcomeMap.__new__(OutcomeMap)
        derived._data = self._data.copy()
        derived._data[node_id] = outcome
        derived._base = weakref.ref(self)
        derived.changed = node_id
        return derived

    def __getitem__(self, key: str) -> Outcome:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"OutcomeMap({self._data!r})"


def _outcome_map(value: Mapping[str, Outcome] | None) -> OutcomeMap:
    return value if isinstance(value, OutcomeMap) else OutcomeMap(value)


def _datetimes(items: Iterable[datetime]) -> tuple[datetime, ...]:
    return tuple(items)


@frozen
class Checkpoint:
    """The state after a node finished, enough to resume exactly.

    Attributes:
        current_node: The last node that finished ("" right after a loop restart).
        completed_nodes: Every finished node in order (a node visited twice appears twice).
        node_outcomes: The latest full Outcome per node, so routing after a resume is exact.
        node_retries: Retries used by a node's latest visit, for nodes that retried.
        context: A snapshot of the run context.
        timestamp: When the checkpoint was taken.
        next_node: Where the run continues; None once it has ended.
        status: `running`, or how the run ended.
        failure_reason: Why the run failed, when it did.
        logs: The context's run log.
        workspace_snapshot: Repo name -> HEAD SHA, filled by the workspace layer.
        node_visits: Node executions so far (all loop restarts included), for `max_node_visits`.
        loop_restarts: How many times a `loop_restart` edge started the run over.
    """

    current_node: str
    completed_nodes: tuple[str, ...] = field(converter=str_tuple)
    node_outcomes: OutcomeMap = field(converter=_outcome_map)
    node_retries: Mapping[str, int] = field(converter=frozen_map)
    context: Mapping[str, Any] = field(converter=frozen_map)
    timestamp: datetime
    next_node: str | None = None
    status: RunStatus = RunStatus.RUNNING
    failure_reason: str = ""
    logs: tuple[str, ...] = field(default=(), converter=str_tuple)
    workspace_snapshot: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    node_visits: int = 0
    loop_restarts: int = 0

    @property
    def finished(self) -> bool:
        return self.status is not RunStatus.RUNNING


@frozen
class RunManifest:
    """Pipeline metadata written once per run directory (`manifest.json`).

    Attributes:
        session_id: The run's session.
        pipeline: The graph's name.
        goal: The graph's goal.
        label: The graph's label.
        source_path: The pipeline file, when the graph came from one.
        logs_root: The run directory.
        started_at: When the run started.
        initial_context: The context the run started with besides the `graph.*` mirror (`--set`
            values); a loop restart starts over from it, also after a resume.
        resumed_at: When the run was resumed, oldest first.
    """

    session_id: str
    pipeline: str
    goal: str
    label: str
    source_path: str | None
    logs_root: str
    started_at: datetime
    initial_context: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    resumed_at: tuple[datetime, ...] = field(default=(), converter=_datetimes)


@frozen
class RunResult:
    """How a run ended.

    Attributes:
        session_id: The run's session.
        status: `success` or `fail`.
        completed_nodes: Finished nodes in order.
        node_outcomes: The latest Outcome per node.
        context: The final context values.
        logs_root: The run directory.
        failure_reason: Why it failed ("" on success).
        checkpoint: The final checkpoint.
    """

    session_id: str
    status: RunStatus
    completed_nodes: tuple[str, ...]
    node_outcomes: Mapping[str, Outcome]
    context: Mapping[str, Any]
    logs_root: str
    failure_reason: str = ""
    checkpoint: Checkpoint | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is RunStatus.SUCCESS

    @classmethod
    def from_checkpoint(cls, checkpoint: Checkpoint, *, session_id: str, logs_root: str) -> RunResult:
        """The result a finished checkpoint describes."""
        return cls(
            session_id=session_id,
            status=RunStatus.FAIL if checkpoint.status is RunStatus.FAIL else RunStatus.SUCCESS,
            completed_nodes=checkpoint.completed_nodes,
            node_outcomes=checkpoint.node_outcomes,
            context=checkpoint.context,
            logs_root=logs_root,
            failure_reason=checkpoint.failure_reason,
            checkpoint=checkpoint,
        )
