"""What a session spent, read from its recorded turns: the cost and tokens of its agent turns, and the wall time of
its runs.

A session's spending is its whole history's (a replay's history is the session it forks up to the fork point) plus
the own turns of its parallel branches' sessions, nested ones included, wherever they ran (a fleet worker records
into the shared store); for a replay, also the branches the forked session had started before the fork point.
Stores that keep running totals (`SessionTotalsReader`) answer from them; others are read turn by turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from orchestra_core.model import records as r
from orchestra_core.model.budget import Spending
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.pricing import recorded_cost
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import (
    SessionInfo,
    SessionStore,
    SessionTotals,
    SessionTotalsReader,
    StoredTurn,
)
from orchestra_core.session.api import history
from orchestra_core.session.catalog import LIFECYCLE_EVENT, PIPELINE_LIFECYCLE
from orchestra_core.session.identifiers import parse_id
from orchestra_core.session.trace import PARALLEL_SPAWN, SessionTrace
from orchestra_core.session.turn_view import TurnView

REPLAY_SPAWN = "replay"
_RUN_STARTS = (r.LifecycleEvent.STARTED, r.LifecycleEvent.RESUMED)
_EVENT_TAG = next(field.tag for field in PIPELINE_LIFECYCLE.fields if field.name == "event")


def session_spending(store: SessionStore, session_id: str) -> Spending:
    """The cost and tokens of every agent turn of the session (wall time not included: `runs_wall_time`).

    Raises:
        SessionNotFoundError: No such session.
        StoreError: The store cannot be read.
    """
    info = store.get_session(session_id)
    if isinstance(store, SessionTotalsReader):
        every = [store.session_totals(info.session_id)]
        every += [store.session_totals(line, own=True) for line in spending_lines(store, info)]
        return spending_of_totals(every)
    return agent_turns_spending(turn.record for turn in _traced(store, info.session_id))


def spending_of_totals(every: Iterable[SessionTotals]) -> Spending:
    """The spending the running totals of some lines add up to."""
    nanos = unknown = tokens = 0
    for totals in every:
        nanos += totals.cost_nanos
        unknown += totals.unpriced_turns
        tokens += totals.prompt_tokens + totals.completion_tokens
    return Spending(CostTally(Money(nanos), unknown), tokens)


def agent_turns_spending(records: Iterable[object]) -> Spending:
    """What the agent turns among `records` spent."""
    cost, tokens = CostTally(), 0
    for record in records:
        if isinstance(record, AgentTurn):
            cost = cost.add(recorded_cost(record.cost_usd, record.token_usage))
            tokens += record.token_usage.total_tokens
    return Spending(cost, tokens)


def node_spending(store: SessionStore, session_id: str) -> dict[str, Spending]:
    """Each node's share of the session's spending (all its visits, retries and branches), read turn by turn.

    Raises:
        SessionNotFoundError: No such session.
    """
    by_node: dict[str, list[AgentTurn]] = defaultdict(list)
    for view in _traced(store, session_id):
        if isinstance(view.record, AgentTurn):
            by_node[view.record.node_id].append(view.record)
    return {node: agent_turns_spending(turns) for node, turns in by_node.items()}


def spending_lines(store: SessionTotalsReader, info: SessionInfo) -> list[str]:
    """The sessions whose own turns count toward `info`'s spending besides its history: its branches' sessions
    (nested ones too), and for a replay those the forked session had started before the fork point."""
    lines = _branch_sessions(store, info.session_id, before=None)
    current = info
    while current.metadata.spawn_reason == REPLAY_SPAWN and current.metadata.parent_session_id:
        fork = store.fork_point(current.session_id)
        assert isinstance(store, SessionStore)
        current = store.get_session(current.metadata.parent_session_id)
        lines += _branch_sessions(store, current.session_id, before=fork)
    return lines


def _branch_sessions(store: SessionTotalsReader, session_id: str, *, before: str | None) -> list[str]:
    """The parallel branches' sessions of a session (those forked at or before the turn `before`, when given),
    and theirs."""
    found: list[str] = []
    parents = [session_id]
    while parents:
        children = []
        for parent in parents:
            for child in store.child_sessions(parent):
                if child.metadata.spawn_reason != PARALLEL_SPAWN:
                    continue
                if parent == session_id and before is not None and not _at_or_before(store.fork_point(child.session_id), before):
                    continue
                children.append(child.session_id)
        found += children
        parents = children
    return found


def _at_or_before(turn_id: str | None, limit: str) -> bool:
    if turn_id is None:
        return False
    try:
        return int(str(parse_id(turn_id))) <= int(str(parse_id(limit)))
    except (TypeError, ValueError):
        return False


def _traced(store: SessionStore, session_id: str) -> list[TurnView]:
    return SessionTrace(store, session_id, brief=True).read()


def runs_wall_time(store: SessionStore, session_id: str) -> float:
    """The wall time of the session's runs, added up: each run (the first, every resume) from its start until it
    ended, or (a run that was killed) until its last recorded turn. Time between runs does not count.

    Raises:
        SessionNotFoundError: No such session.
    """
    total = 0.0
    started: datetime | None = None
    last: datetime | None = None
    for turn in reversed(list(history(store, session_id))):
        moment = turn.created_at
        if moment is None:
            continue
        event = _lifecycle_event(turn)
        if event in _RUN_STARTS:
            if started is not None and last is not None:
                total += max((last - started).total_seconds(), 0.0)
            started = moment
        elif event is not None and started is not None:
            total += max((moment - started).total_seconds(), 0.0)
            started = None
        last = moment
    if started is not None and last is not None:
        total += max((last - started).total_seconds(), 0.0)
    return total


def _lifecycle_event(turn: StoredTurn) -> r.LifecycleEvent | None:
    if turn.type_id != PIPELINE_LIFECYCLE.type_id:
        return None
    number = turn.data.get(_EVENT_TAG)
    if not isinstance(number, int):
        return None
    try:
        event = LIFECYCLE_EVENT.member(number)
    except KeyError:
        return None
    return event if isinstance(event, r.LifecycleEvent) else None
