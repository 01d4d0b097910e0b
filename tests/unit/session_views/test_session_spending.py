"""A session's spending is read from the recorded turns of every store: its history, its parallel branches' own
sessions (a fleet worker records a branch into the shared store, as here), and for a replay what the session it
forks had spent up to the fork; `status` shows the same figures."""

from __future__ import annotations

from datetime import timedelta

from orchestra_core.model import records as r
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.session_store import SessionMetadata, SessionStore
from orchestra_core.session.api import append_record, fork_session
from orchestra_core.session.recent import recent_session_summary
from orchestra_core.session.spending import node_spending, runs_wall_time, session_spending
from orchestra_core.session.summary import session_summary
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.session_store import InMemorySessionStore


def turn(node: str, cost: float | None, tokens: int = 100) -> AgentTurn:
    return AgentTurn(node_id=node, turn_number=0, model="m", provider="p", token_usage=TokenUsage(tokens, 0), cost_usd=cost)


def _fan_out(store: SessionStore, session: str, branch_costs: list[float | None]) -> str:
    """A fan-out whose one branch runs elsewhere and records into its own forked session; returns its id."""
    head = append_record(store, session, r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=1)).turn_id
    branch = fork_session(store, session, head, spawn_reason="parallel", title="branch fan:x").session_id
    for cost in branch_costs:
        append_record(store, branch, turn("x", cost))
    append_record(store, session, r.ParallelExecution("fan", r.ParallelEvent.FAN_IN, branch_session_ids=(branch,)))
    return branch


def test_the_branches_a_worker_recorded_count_toward_the_session(store: SessionStore) -> None:
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    append_record(store, session, turn("a", 0.5))
    _fan_out(store, session, [1.25, None])
    append_record(store, session, turn("b", 0.25))
    append_record(store, session, turn("tool", None, tokens=0))  # used no tokens: cost nothing, known

    spent = session_spending(store, session)
    assert (spent.cost, spent.tokens) == (CostTally(Money.usd(2), 1), 400)
    assert node_spending(store, session)["x"].cost == CostTally(Money.usd("1.25"), 1)
    document = session_summary(store, session).to_json()
    assert (document["cost_usd"], document["cost_complete"]) == (2.0, False)
    assert recent_session_summary(store, session).totals.cost == spent.cost


def test_a_replay_starts_from_what_its_origin_had_spent_up_to_the_fork(store: SessionStore) -> None:
    origin = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, origin, turn("a", 1.0))
    _fan_out(store, origin, [2.0])
    fork_at = append_record(store, origin, r.CheckpointRecord("fan", ("a", "fan"))).turn_id
    append_record(store, origin, turn("b", 4.0))  # after the fork point
    _fan_out(store, origin, [8.0])  # a branch started after the fork point

    replay = fork_session(store, origin, fork_at, spawn_reason="replay").session_id
    assert session_spending(store, replay).cost == CostTally(Money.usd(3))
    assert session_spending(store, origin).cost == CostTally(Money.usd(15))
    append_record(store, replay, turn("b", 0.5))
    assert session_spending(store, replay).cost == CostTally(Money.usd("3.5"))
    assert recent_session_summary(store, replay).totals.cost == CostTally(Money.usd("3.5"))


def test_wall_time_adds_up_the_runs_but_not_the_time_between_them() -> None:
    clock = ManualClock()
    store = InMemorySessionStore(clock)
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
    clock.advance(100)
    append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.BUDGET_EXCEEDED, "p"))
    clock.advance(timedelta(days=2).total_seconds())
    append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"))
    clock.advance(30)
    append_record(store, session, turn("a", 0.1))  # the resumed run was killed after this turn: no end recorded
    clock.advance(3600)
    assert runs_wall_time(store, session) == 130.0
