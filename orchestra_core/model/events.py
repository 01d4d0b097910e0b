"""Typed engine events (Attractor 9.6 plus what a UI needs); every event names its session and branch."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from attrs import frozen

from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.interview import Answer, Question
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn


@frozen(kw_only=True)
class EngineEvent:
    """Base of every event.

    Attributes:
        session_id: The run's session.
        timestamp: When it happened (UTC, from the engine's clock).
        branch: None on the main line; inside a parallel branch its path, e.g. `fanout:a` or
            `fanout:a/inner:x` for nested fan-outs; `manager.child` inside a supervised child run.
    """

    session_id: str
    timestamp: datetime
    branch: str | None = None

    @property
    def kind(self) -> str:
        """The event's type name, e.g. `StageCompleted`."""
        return type(self).__name__


@runtime_checkable
class EventObserver(Protocol):
    """Receives events synchronously; exceptions are logged and never break the run."""

    def on_event(self, event: EngineEvent) -> None:
        """Handle one event."""
        ...


# Pipeline lifecycle


@frozen(kw_only=True)
class PipelineStarted(EngineEvent):
    name: str
    goal: str
    logs_root: str
    start_node: str
    resumed: bool = False


@frozen(kw_only=True)
class PipelineCompleted(EngineEvent):
    duration_s: float
    artifact_count: int
    completed_nodes: tuple[str, ...]


@frozen(kw_only=True)
class PipelineFailed(EngineEvent):
    error: str
    duration_s: float
    node_id: str | None = None


@frozen(kw_only=True)
class PipelineRestarted(EngineEvent):
    """A `loop_restart` edge started the run over at `node_id` with a fresh context and stage logs."""

    node_id: str
    from_node: str
    restart_count: int


# Stage lifecycle


@frozen(kw_only=True)
class StageStarted(EngineEvent):
    node_id: str
    handler_type: str
    index: int
    attempt: int = 1


@frozen(kw_only=True)
class StageCompleted(EngineEvent):
    """A stage ended with success, partial success or skipped (after any retries)."""

    node_id: str
    handler_type: str
    index: int
    outcome: Outcome
    attempts: int
    duration_s: float


@frozen(kw_only=True)
class StageFailed(EngineEvent):
    """An attempt failed; `will_retry` tells whether another attempt follows."""

    node_id: str
    handler_type: str
    index: int
    outcome: Outcome
    attempts: int
    duration_s: float
    will_retry: bool

    @property
    def error(self) -> str:
        return self.outcome.failure_reason


@frozen(kw_only=True)
class StageRetrying(EngineEvent):
    """The engine waits `delay_s` before attempt number `attempt`."""

    node_id: str
    handler_type: str
    index: int
    attempt: int
    delay_s: float
    reason: str


@frozen(kw_only=True)
class EdgeSelected(EngineEvent):
    """Where the run goes next and why (`condition`, `preferred_label`, `suggested_next_ids`, `weight`,
    `retry_target`, `goal_gate`, `fan_in`)."""

    source: str
    target: str
    label: str
    reason: str


@frozen(kw_only=True)
class GoalGateUnsatisfied(EngineEvent):
    """A goal gate's latest outcome is not a success at the exit: the run goes back to `retry_target`;
    `reason` is the outcome's failure reason."""

    node_id: str
    status: str
    retry_target: str | None
    reason: str = ""


@frozen(kw_only=True)
class AgentTurnCompleted(EngineEvent):
    """An agent finished one turn of its loop; `turn.commits` holds the commits its writes became."""

    node_id: str
    turn: AgentTurn


@frozen(kw_only=True)
class AgentActivity(EngineEvent):
    """What a running node's agent just did (model/activity.py): `activity` is `text`, `tool_call` or
    `tool_result`; `text` the text, the call's arguments (JSON) or its result; `tool` and `call_id` name the call;
    `turn` the agent turn, when known. Transient: for live views only, never recorded in the session."""

    node_id: str
    activity: str
    text: str = ""
    tool: str = ""
    call_id: str = ""
    error: bool = False
    turn: int | None = None


@frozen(kw_only=True)
class StageWarning(EngineEvent):
    """Something in a running stage the user should know about that does not fail it (e.g. an agent's own
    conversation could not be resumed and is replayed in a new prompt)."""

    node_id: str
    message: str


@frozen(kw_only=True)
class ModelFailedOver(EngineEvent):
    """A model call of a running stage failed in a way its model cannot recover from and went on with the next
    fallback model (`failover` says which and why; recorded in the session)."""

    node_id: str
    failover: ModelFailover


@frozen(kw_only=True)
class BudgetWarning(EngineEvent):
    """80% of a budget is spent (once per run and budget); `node_id` names the node for a node's own budget."""

    budget: str
    spent: str
    limit: str
    message: str
    node_id: str | None = None


@frozen(kw_only=True)
class BudgetExceeded(EngineEvent):
    """The run ended because a budget of the session was reached: the turn in flight finished, nothing new
    started, the session is `budget_exceeded` and `resume` continues it (`message` says with which option)."""

    budget: str
    spent: str
    limit: str
    message: str
    duration_s: float
    node_id: str | None = None


@frozen(kw_only=True)
class ModelPriceUnknown(EngineEvent):
    """A model has no price (built in or in orchestra.yaml's `pricing:`): its turns' cost is unknown. Once per run
    and model."""

    model: str
    provider: str
    node_id: str
    message: str


# Parallel execution


@frozen(kw_only=True)
class ParallelStarted(EngineEvent):
    node_id: str
    branch_count: int
    branch_ids: tuple[str, ...]
    join_policy: str
    max_parallel: int
    join_node: str | None


@frozen(kw_only=True)
class ParallelBranchStarted(EngineEvent):
    node_id: str
    branch_id: str
    index: int


@frozen(kw_only=True)
class ParallelBranchCompleted(EngineEvent):
    node_id: str
    branch_id: str
    index: int
    duration_s: float
    success: bool
    status: str


@frozen(kw_only=True)
class ParallelCompleted(EngineEvent):
    node_id: str
    duration_s: float
    success_count: int
    failure_count: int


# Human interaction


@frozen(kw_only=True)
class InterviewStarted(EngineEvent):
    question: Question
    stage: str


@frozen(kw_only=True)
class InterviewCompleted(EngineEvent):
    question: Question
    answer: Answer
    duration_s: float


@frozen(kw_only=True)
class InterviewTimeout(EngineEvent):
    question: Question
    stage: str
    duration_s: float


# Checkpoints


@frozen(kw_only=True)
class CheckpointSaved(EngineEvent):
    node_id: str
    checkpoint: Checkpoint
