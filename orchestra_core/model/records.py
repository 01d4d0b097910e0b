"""The dev.orchestra.* turn records a session holds (seed 003, "Turn Type Registry"), as frozen attrs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import TokenUsage


class LifecycleEvent(StrEnum):
    """What happened to the pipeline run."""

    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    RESUMED = "resumed"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"  # `orchestra cancel`: stopped for good, not to be resumed by the fleet
    BUDGET_EXCEEDED = "budget_exceeded"  # a budget of the session was reached; `resume` continues it


class NodeEvent(StrEnum):
    """What happened to a node."""

    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    RETRYING = "retrying"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"  # recorded by a resume: the run stopped (died) while the node ran


class InteractionMode(StrEnum):
    """A `wait.human` gate, or a turn of an interactive codergen conversation."""

    GATE = "gate"
    INTERACTIVE = "interactive"


class ParallelEvent(StrEnum):
    """A step of a parallel fan-out/fan-in."""

    FAN_OUT = "fan_out"
    BRANCH_STARTED = "branch_started"
    BRANCH_COMPLETED = "branch_completed"
    FAN_IN = "fan_in"


@frozen
class PipelineLifecycle:
    """`dev.orchestra.PipelineLifecycle`: the run started, finished, failed, was resumed or interrupted.

    `dot_blob` is the BLAKE3 hash of the pipeline source put in the store's blobs, so a resume on
    another machine can load exactly the graph that ran. A run's start (`started`, or `resumed` for a run
    started again from its beginning) is recorded as soon as the runner holds the session, with the values it
    was started with (`initial_context`, the `--set` values; v2), so a run stopped before its first
    checkpoint can be started again as it was.
    """

    event: LifecycleEvent
    pipeline_name: str
    goal: str = ""
    status: StageStatus | None = None
    duration_s: float | None = None
    error: str | None = None
    dot_path: str | None = None
    dot_blob: str | None = None
    logs_root: str | None = None
    initial_context: Mapping[str, Any] = field(factory=dict, converter=frozen_map)


@frozen
class NodeExecution:
    """`dev.orchestra.NodeExecution`: a node started, completed, failed, is retried, was skipped, or was
    interrupted (the run stopped while it ran; recorded by the resume that runs it again)."""

    node_id: str
    event: NodeEvent
    handler_type: str = ""
    attempt: int = 1
    outcome: Outcome | None = None
    duration_s: float | None = None
    total_token_usage: TokenUsage | None = None
    agent_turn_count: int | None = None


@frozen
class RepoSnapshot:
    """One repo's state: the session branch and the SHA it points at."""

    repo_name: str
    git_sha: str
    branch: str = ""
    base_sha: str | None = None


def _repo_snapshots(items: Iterable[RepoSnapshot]) -> tuple[RepoSnapshot, ...]:
    return tuple(items)


@frozen
class WorkspaceSnapshot:
    """`dev.orchestra.WorkspaceSnapshot`: the HEAD SHA of every workspace repo (also nested in v3 Checkpoints)."""

    repo_snapshots: tuple[RepoSnapshot, ...] = field(default=(), converter=_repo_snapshots)
    node_id: str | None = None

    def sha_by_repo(self) -> dict[str, str]:
        return {snapshot.repo_name: snapshot.git_sha for snapshot in self.repo_snapshots}


@frozen
class CheckpointRecord:
    """`dev.orchestra.Checkpoint` v4, the stored form of a `Checkpoint`: a delta over an earlier record,
    plus each workspace repo's branch and the pipeline source (`session.checkpoints` converts both ways).

    Only the session layer reads and writes these; everything else works with the model's `Checkpoint`.
    It holds everything the engine's checkpoint holds, so a resume needs nothing but the store: v1 had
    the first five fields; v2 added full node outcomes (for exact routing after a resume), logs, the next
    node, the run status and loop counters; v3 added `workspace_snapshot` (every workspace repo's head;
    None without a workspace) and the pipeline's path and DOT source blob, so a resume or replay needs
    nothing but the store; v4 made most checkpoints deltas over the previous one (`base_turn_id`), so a long
    run does not store its whole history again after every node. The checkpoint's time is its turn's
    `created_at`.
    """

    current_node: str
    completed_nodes: tuple[str, ...] = field(default=(), converter=str_tuple)
    context_snapshot: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    retry_counters: Mapping[str, int] = field(factory=dict, converter=frozen_map)
    agent_turn_number: int | None = None
    node_outcomes: Mapping[str, Outcome] = field(factory=dict, converter=frozen_map)
    logs: tuple[str, ...] = field(default=(), converter=str_tuple)
    next_node: str | None = None
    run_status: str = "running"
    failure_reason: str = ""
    node_visits: int = 0
    loop_restarts: int = 0
    workspace_snapshot: WorkspaceSnapshot | None = None
    pipeline_path: str | None = None
    pipeline_blob: str | None = None
    base_turn_id: str | None = None
    context_removed: tuple[str, ...] = field(default=(), converter=str_tuple)
    chain_length: int = 0

    @property
    def is_delta(self) -> bool:
        """A v4 delta: only what changed since the checkpoint in `base_turn_id` (see session/checkpoints.py)."""
        return self.base_turn_id is not None


@frozen
class HumanInteraction:
    """`dev.orchestra.HumanInteraction`: a question put to a human and the answer given."""

    node_id: str
    mode: InteractionMode
    question: str
    options: tuple[str, ...] = field(default=(), converter=str_tuple)
    answer: str | None = None
    selected_option: str | None = None
    interviewer: str | None = None


@frozen
class ParallelExecution:
    """`dev.orchestra.ParallelExecution`: fan-out, a branch starting or ending, fan-in.

    Branches run in forked sessions: `branch_session_id` names a branch's session and
    `branch_session_ids` all of them at fan-in.
    """

    node_id: str
    event: ParallelEvent
    branch_count: int | None = None
    branch_id: str | None = None
    join_policy: str | None = None
    success_count: int | None = None
    failure_count: int | None = None
    branch_session_id: str | None = None
    status: StageStatus | None = None
    branch_session_ids: tuple[str, ...] = field(default=(), converter=str_tuple)


@frozen
class NotificationFailed:
    """`dev.orchestra.NotificationFailed`: a notification (`notify:` in orchestra.yaml) that could not be delivered.

    Attributes:
        target: The target as it may be shown: `webhook https://hooks.example.com/services/…` (no secret part
            of its address) or `command notify-send`.
        event: The notification's event (`finished`, `needs_input`, ...).
        attempts: How many times it was tried.
        reason: Why the last attempt failed (`HTTP 500`, `timed out after 10s`, `exit status 1`, ...).
    """

    target: str
    event: str
    attempts: int = 1
    reason: str = ""

    def text(self) -> str:
        """`webhook https://host/hooks/… failed 3 times: HTTP 500 (finished)`; one never tried says `not sent`."""
        if self.attempts <= 0:
            return f"{self.target} not sent: {self.reason} ({self.event})"
        times = "once" if self.attempts == 1 else f"{self.attempts} times"
        return f"{self.target} failed {times}: {self.reason} ({self.event})"


@frozen
class BudgetWarning:
    """`dev.orchestra.BudgetWarning`: 80% of a budget is spent (`node_id` "" for the session's budget)."""

    budget: str
    spent: str
    limit: str
    message: str
    node_id: str = ""


@frozen
class ModelPriceUnknown:
    """`dev.orchestra.ModelPriceUnknown`: a model has no price, so its turns' cost is unknown (once per run and
    model)."""

    model: str
    provider: str = ""
    node_id: str = ""
    message: str = ""
