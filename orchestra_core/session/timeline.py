"""The node timeline of a session: each node execution with its outcome, attempts, time, tokens and agent turns."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from attrs import define, field, frozen

from orchestra_core.model import records as r
from orchestra_core.model.money import CostTally
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.session.turn_view import TurnView, tokens_json, turn_cost

RUNNING = "running"
RETRYING = "retrying"
INTERRUPTED = "interrupted"
_OPEN = (RUNNING, RETRYING)


@frozen
class NodeRun:
    """One execution of a node (all its attempts), on the main line or in a branch.

    Attributes:
        node_id: The node.
        handler_type: Its handler (`codergen`, `tool`, `parallel`, ...).
        status: The outcome (`success`, `partial_success`, `fail`, `skipped`, ...), or `running`,
            `retrying`, or `interrupted` when the run stopped while the node ran.
        attempts: Attempts made (retries + 1).
        duration_s: Wall time of all attempts, None while it runs.
        started_at: When it started.
        ended_at: When it ended, None while it runs.
        failure_reason: Why it failed ("" otherwise).
        tokens: Tokens of its agent turns.
        agent_turns: How many agent turns it took.
        session_id: The session it ran in (a branch session for branch nodes).
        branch: The branch path, None on the main line.
        cost: What its agent turns cost (with the turns of unknown cost counted apart).
    """

    node_id: str
    handler_type: str
    status: str
    attempts: int
    duration_s: float | None
    started_at: datetime | None
    ended_at: datetime | None
    failure_reason: str
    tokens: TokenUsage
    agent_turns: int
    session_id: str
    branch: str | None
    cost: CostTally = field(factory=CostTally)

    @property
    def retries(self) -> int:
        return max(self.attempts - 1, 0)

    def to_json(self) -> dict[str, Any]:
        """DESIGN.md's node entry (`id`, `status`, `attempts`, `duration_s`) and the rest of the run."""
        return {
            "id": self.node_id,
            "status": self.status,
            "attempts": self.attempts,
            "duration_s": self.duration_s,
            "handler": self.handler_type,
            "retries": self.retries,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "failure_reason": self.failure_reason or None,
            "tokens": tokens_json(self.tokens),
            "agent_turns": self.agent_turns,
            "cost_usd": self.cost.json_value(counted=self.agent_turns),
            "cost_complete": self.cost.complete,
            "session_id": self.session_id,
            "branch": self.branch,
        }


@define
class _Run:
    node_id: str
    handler_type: str
    session_id: str
    branch: str | None
    started_at: datetime | None
    status: str = RUNNING
    attempts: int = 1
    duration_s: float | None = None
    ended_at: datetime | None = None
    failure_reason: str = ""
    tokens: TokenUsage = field(factory=TokenUsage)
    agent_turns: int = 0
    cost: CostTally = field(factory=CostTally)

    def frozen(self) -> NodeRun:
        return NodeRun(
            self.node_id, self.handler_type, self.status, self.attempts,
            None if self.status in _OPEN else self.duration_s, self.started_at, self.ended_at,
            self.failure_reason, self.tokens, self.agent_turns, self.session_id, self.branch, self.cost,
        )


class Timeline:
    """Folds NodeExecution, AgentTurn and PipelineLifecycle turns into node runs, in start order.

    NodeExecution durations are measured from the node's start, so the last one of a run is its time.
    Agent turns count toward the run of their node on their line. A run still open when the pipeline was
    resumed, failed or interrupted (or when `close()` is called for a run that ended) was interrupted.
    """

    def __init__(self) -> None:
        self._runs: list[_Run] = []
        self._latest: dict[tuple[str, str], _Run] = {}

    def add(self, views: Iterable[TurnView]) -> None:
        """Fold turns in, oldest first."""
        for view in views:
            record = view.record
            if isinstance(record, r.NodeExecution):
                self._node_event(view, record)
            elif isinstance(record, AgentTurn):
                self._agent_turn(view, record)
            elif isinstance(record, r.PipelineLifecycle) and record.event is not r.LifecycleEvent.STARTED:
                self.close()

    def close(self) -> None:
        """Mark every run still open as interrupted (the run they belonged to is over)."""
        for run in self._runs:
            if run.status in _OPEN:
                run.status = INTERRUPTED

    def runs(self) -> tuple[NodeRun, ...]:
        """The node runs so far, in the order they started."""
        return tuple(run.frozen() for run in self._runs)

    def _node_event(self, view: TurnView, record: r.NodeExecution) -> None:
        key = (view.session_id, record.node_id)
        run = self._latest.get(key)
        if record.event is r.NodeEvent.STARTED or run is None:
            run = _Run(record.node_id, record.handler_type, view.session_id, view.branch, view.created_at)
            self._runs.append(run)
            self._latest[key] = run
        run.attempts = max(run.attempts, record.attempt)
        if record.event is r.NodeEvent.STARTED:
            return
        if record.event is r.NodeEvent.RETRYING:
            run.status = RETRYING
            return
        run.status = _outcome_status(record)
        run.duration_s = record.duration_s if record.duration_s is not None else run.duration_s
        run.ended_at = view.created_at
        outcome = record.outcome
        run.failure_reason = outcome.failure_reason if outcome is not None else ""

    def _agent_turn(self, view: TurnView, record: AgentTurn) -> None:
        run = self._latest.get((view.session_id, record.node_id))
        if run is None:
            return
        run.agent_turns += 1
        run.tokens = run.tokens + record.token_usage
        run.cost = run.cost.add(turn_cost(record))


def _outcome_status(record: r.NodeExecution) -> str:
    if record.outcome is not None:
        return record.outcome.status.value
    fallback = {
        r.NodeEvent.COMPLETED: "success",
        r.NodeEvent.FAILED: "fail",
        r.NodeEvent.SKIPPED: "skipped",
        r.NodeEvent.INTERRUPTED: INTERRUPTED,
    }
    return fallback.get(record.event, RUNNING)
