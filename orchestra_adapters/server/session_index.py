"""What the web view reads of a whole session, kept up to date a page at a time: per node its runs (duration,
status, the Gantt's bars), tokens, cost and the commits of its agent turns.

A session is read once from its first turn, in pages of the store's turn ranges (`TurnRangeReader`); later
requests read only the turns appended since. An answer's size depends on the pipeline's nodes (and at most
MAX_BARS bars), never on how many turns the session has.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from attrs import define, field

from orchestra_core.model.money import CostTally
from orchestra_core.model.turn import TokenUsage

PAGE = 500
MAX_BARS = 400  # the Gantt shows the last node runs; the table adds up all of them
MAX_SESSIONS = 64  # sessions whose index is kept between requests
T = TypeVar("T")


@define
class NodeRun:
    """One run of a node (an attempt), a bar of the Gantt."""

    node_id: str
    branch: str | None
    attempt: int
    started_at: datetime | None
    ended_at: datetime | None = None
    status: str = "running"
    duration_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "branch": self.branch,
            "attempt": self.attempt,
            "started_at": _iso(self.started_at),
            "ended_at": _iso(self.ended_at),
            "status": self.status,
            "duration_s": self.duration_s,
        }


@define
class NodeTotals:
    """A node's totals over the session: its runs, time, tokens, cost and its agent turns' commits."""

    node_id: str
    runs: int = 0
    duration_s: float = 0.0
    agent_turns: int = 0
    tokens: TokenUsage = field(factory=TokenUsage)
    cost: CostTally = field(factory=CostTally)
    status: str | None = None
    first_started: datetime | None = None
    commits: list[tuple[str, str, str]] = field(factory=list)  # (turn id, repo, sha), in append order

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "runs": self.runs,
            "duration_s": self.duration_s,
            "agent_turns": self.agent_turns,
            "tokens": _tokens(self.tokens),
            "cost_usd": self.cost.json_value(counted=self.agent_turns),
            "cost_complete": self.cost.complete,
            "status": self.status,
            "commits": len(self.commits),
        }


@define
class SessionIndex:
    """The index of one session (its branch sessions included), read up to turn `cursor`."""

    cursor: str | None = None
    nodes: dict[str, NodeTotals] = field(factory=dict)
    bars: list[NodeRun] = field(factory=list)
    open_runs: dict[tuple[str | None, str], NodeRun] = field(factory=dict)
    first_at: datetime | None = None
    last_at: datetime | None = None

    def node(self, node_id: str) -> NodeTotals:
        if node_id not in self.nodes:
            self.nodes[node_id] = NodeTotals(node_id)
        return self.nodes[node_id]

    def add(self, view: Any) -> None:
        """Count one turn (a TurnView) in."""
        from orchestra_core.model.records import NodeExecution
        from orchestra_core.model.turn import AgentTurn

        record, when = view.record, view.created_at
        if when is not None:
            self.first_at = self.first_at or when
            self.last_at = when
        if isinstance(record, AgentTurn):
            self._agent_turn(record, view)
        elif isinstance(record, NodeExecution):
            self._node_execution(record, view.branch, when)

    def _agent_turn(self, record: Any, view: Any) -> None:
        from orchestra_core.session.turn_view import turn_cost

        totals = self.node(record.node_id)
        totals.agent_turns += 1
        totals.tokens = totals.tokens + record.token_usage
        totals.cost = totals.cost.add(turn_cost(record))
        totals.commits.extend((view.turn_id, commit.repo, commit.sha) for commit in view.commits)

    def _node_execution(self, record: Any, branch: str | None, when: datetime | None) -> None:
        event = record.event.value
        key = (branch, record.node_id)
        totals = self.node(record.node_id)
        if event == "started":
            run = NodeRun(record.node_id, branch, record.attempt, when)
            self.open_runs[key] = run
            self.bars.append(run)
            del self.bars[:-MAX_BARS]
            totals.runs += 1
            totals.status = "running"
            totals.first_started = totals.first_started or when
            return
        ended = self.open_runs.pop(key) if key in self.open_runs else None
        status = record.outcome.status.value if record.outcome is not None else event
        if ended is not None:
            ended.ended_at, ended.status, ended.duration_s = when, status, record.duration_s
        if record.duration_s is not None:
            totals.duration_s += record.duration_s
        totals.status = status

    def to_json(self) -> dict[str, Any]:
        tokens, cost, turns = TokenUsage(), CostTally(), 0
        for totals in self.nodes.values():
            tokens, cost, turns = tokens + totals.tokens, cost + totals.cost, turns + totals.agent_turns
        order = sorted(self.nodes.values(), key=lambda n: (n.first_started is None, n.first_started or 0, n.node_id))
        return {
            "nodes": [totals.to_json() for totals in order],
            "bars": [bar.to_json() for bar in self.bars],
            "totals": {
                "agent_turns": turns,
                "tokens": _tokens(tokens),
                "cost_usd": cost.json_value(counted=turns),
                "cost_complete": cost.complete,
                "node_time_s": sum(n.duration_s for n in self.nodes.values()),
                "started_at": _iso(self.first_at),
                "last_at": _iso(self.last_at),
            },
        }


class SessionIndexes:
    """The indexes of the sessions the web view looked at, each brought up to date when asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[str, SessionIndex] = {}
        self._session_locks: dict[str, threading.Lock] = {}

    def read(self, store: Any, session_id: str, view: Callable[[SessionIndex], T]) -> T:
        """`view(index)` of the session's index with every turn appended so far (no other request changes it
        meanwhile).

        Raises:
            SessionNotFoundError: No such session.
        """
        from orchestra_core.session.pages import merged_range, run_lines

        with self._lock:
            guard = self._session_locks.setdefault(session_id, threading.Lock())
        with guard:
            with self._lock:
                index = self._indexes.get(session_id) or SessionIndex()
            lines = run_lines(store, session_id)
            while True:
                views, has_more = merged_range(store, lines, index.cursor, PAGE)
                for turn in views:
                    index.add(turn)
                if views:
                    index.cursor = views[-1].turn_id
                if not has_more:
                    break
            with self._lock:
                self._indexes.pop(session_id, None)
                self._indexes[session_id] = index  # the newest last: the oldest is forgotten first
                while len(self._indexes) > MAX_SESSIONS:
                    forgotten = next(iter(self._indexes))
                    del self._indexes[forgotten]
                    self._session_locks.pop(forgotten, None)
            return view(index)


def _tokens(usage: TokenUsage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None
