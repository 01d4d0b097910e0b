"""Run state snapshots: Checkpoint (Attractor 5.3, with a workspace snapshot), RunManifest and RunResult."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.outcome_map import OutcomeMap as OutcomeMap  # where it was defined before


class RunStatus(StrEnum):
    """Where a run stands; `running` in a checkpoint means there is more to do."""

    RUNNING = "running"
    SUCCESS = "success"
    FAIL = "fail"
    BUDGET_EXCEEDED = "budget_exceeded"  # a run's result only: its checkpoint stays `running` (resumable)


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
