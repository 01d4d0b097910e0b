"""Budgets through the public run functions: a run stops once its session's budget is reached (the turn in flight
recorded, nothing new started) and a resume with more goes on; what counts is the session's whole spending, over
resumes, a replay's history, retries and parallel branches; a node's own budget fails it; 80% warns once."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import orchestra_core as oc
from orchestra_core.model import events as ev
from orchestra_core.model import records as r
from orchestra_core.model.budget import Budget
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.money import Money
from orchestra_core.model.pricing import ModelPrice
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.session_store import InMemorySessionStore

# $1,000 per million input tokens: a turn of 1,000 prompt tokens costs $1.00
SETTINGS = OrchestraSettings(pricing={"m": ModelPrice("1000", "0")})
DOLLAR = oc.TokenUsage(1000, 0)
STEPS = """
digraph steps {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt="A"]; b [prompt="B"]
    start -> a -> b -> done
}
"""


class TurnsBackend:
    """An agent loop scripted per node: before each turn it asks whether it may make another model call (as a real
    loop does), then reports the turn; `clock` (when given) moves `seconds_per_turn` per turn."""

    def __init__(
        self,
        turns: Mapping[str, int],
        *,
        outcome: Mapping[str, oc.Outcome] | None = None,
        clock: ManualClock | None = None,
        seconds_per_turn: float = 0.0,
        gate: threading.Barrier | None = None,
    ) -> None:
        self.turns = dict(turns)
        self.outcome = dict(outcome or {})
        self.clock, self.seconds_per_turn, self.gate = clock, seconds_per_turn, gate
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def run(self, node: oc.Node, prompt: str, context: Any, on_turn: Any = None, *, cancel: Cancellation | None = None) -> Any:
        for number in range(self.turns.get(node.id, 0)):
            if cancel is not None:
                cancel.raise_if_stopped()
            if self.gate is not None and number == 0:
                self.gate.wait(timeout=10)
            with self._lock:
                self.calls.append((node.id, number))
            if self.clock is not None:
                self.clock.advance(self.seconds_per_turn)
            on_turn(oc.AgentTurn(node_id=node.id, turn_number=number, model="m", provider="p", token_usage=DOLLAR))
        return self.outcome.get(node.id, f"done {node.id}")


def _run(dot: str, store: InMemorySessionStore, backend: TurnsBackend, budget: Budget | None, **kwargs: Any) -> oc.RunResult:
    return oc.run_pipeline(oc.parse_pipeline(dot), store=store, backend=backend, settings=SETTINGS, budget=budget, **kwargs)


def _agent_turns(store: InMemorySessionStore, session_id: str) -> list[tuple[str, int]]:
    return [
        (view.record.node_id, view.record.turn_number)
        for view in oc.read_session(store, session_id)
        if isinstance(view.record, oc.AgentTurn)
    ]


def _records(store: InMemorySessionStore, session_id: str, kind: type) -> list[Any]:
    return [view.record for view in oc.read_session(store, session_id) if isinstance(view.record, kind)]


def test_the_run_stops_after_the_turn_that_reaches_the_budget_and_a_resume_with_more_finishes() -> None:
    store = InMemorySessionStore()
    seen: list[Any] = []
    backend = TurnsBackend({"a": 3, "b": 1})
    result = _run(STEPS, store, backend, Budget(max_cost=Money.usd("1.5")), on_event=seen.append)

    assert result.status is oc.RunStatus.BUDGET_EXCEEDED and not result.succeeded
    session = result.session_id
    assert result.failure_reason == (
        f"the session's budget max_cost_usd is reached: $2.00 spent of $1.50; continue with: orchestra resume {session} "
        "--max-cost 3"
    )
    # the turn that reached it was recorded; the node's loop made no further model call; b never started
    assert backend.calls == [("a", 0), ("a", 1)] and _agent_turns(store, session) == [("a", 0), ("a", 1)]
    assert store.get_session(session).status is oc.SessionStatus.BUDGET_EXCEEDED
    assert result.checkpoint is not None and result.checkpoint.next_node == "a"  # a runs again on resume
    [stopped] = [event for event in seen if isinstance(event, ev.BudgetExceeded)]
    assert (stopped.budget, stopped.spent, stopped.limit) == ("max_cost_usd", "$2.00", "$1.50")
    [ending] = [rec for rec in _records(store, session, r.PipelineLifecycle) if rec.event.value == "budget_exceeded"]
    assert ending.error == result.failure_reason

    again = oc.resume_session(session, store=store, backend=TurnsBackend({"a": 3, "b": 1}), settings=SETTINGS,
                              budget=Budget(max_cost=Money.usd(10)))  # fmt: skip
    assert again.succeeded and store.get_session(session).status is oc.SessionStatus.SUCCESS
    spent = oc.session_spending(store, session)
    assert (spent.cost.known, spent.cost.complete, spent.tokens) == (Money.usd(6), True, 6000)


def test_a_resume_counts_what_the_session_spent_before() -> None:
    store = InMemorySessionStore()
    first = _run(STEPS, store, TurnsBackend({"a": 2, "b": 2}), Budget(max_cost=Money.usd(3)))
    assert first.status is oc.RunStatus.BUDGET_EXCEEDED and _agent_turns(store, first.session_id)[-1] == ("b", 0)
    backend = TurnsBackend({"a": 2, "b": 2})
    again = oc.resume_session(first.session_id, store=store, backend=backend, settings=SETTINGS,
                              budget=Budget(max_cost=Money.usd("3.5")))  # fmt: skip
    assert again.status is oc.RunStatus.BUDGET_EXCEEDED and backend.calls == [("b", 0)]  # $3 before, $4 now
    assert "$4.00 spent of $3.50" in again.failure_reason


def test_a_replay_starts_from_what_the_session_had_spent_up_to_its_fork() -> None:
    store = InMemorySessionStore()
    first = _run(STEPS, store, TurnsBackend({"a": 2, "b": 2}), Budget(max_cost=Money.usd(3)))  # $2 in a, $1 in b
    after_a = [v for v in oc.read_session(store, first.session_id) if isinstance(v.record, r.CheckpointRecord)][-1]
    backend = TurnsBackend({"a": 2, "b": 2})
    replay = oc.replay_session(first.session_id, after_a.turn_id, store=store, backend=backend, settings=SETTINGS,
                               budget=Budget(max_cost=Money.usd("2.5")))  # fmt: skip
    # the fork inherited $2 (not the origin's $3, whose b turn came after the fork): one turn of b reaches $3
    assert replay.status is oc.RunStatus.BUDGET_EXCEEDED and backend.calls == [("b", 0)]
    assert "$3.00 spent of $2.50" in replay.failure_reason
    assert oc.session_spending(store, replay.session_id).cost.known == Money.usd(3)


def test_a_failed_attempt_is_not_retried_once_the_budget_is_reached() -> None:
    dot = STEPS.replace('a [prompt="A"]', 'a [prompt="A", max_retries=3]')
    store = InMemorySessionStore()
    backend = TurnsBackend({"a": 2}, outcome={"a": oc.Outcome.fail("tests fail")})
    result = _run(dot, store, backend, Budget(max_cost=Money.usd("1.5")))
    assert result.status is oc.RunStatus.BUDGET_EXCEEDED and backend.calls == [("a", 0), ("a", 1)]


def test_a_nodes_own_budget_fails_that_node_and_its_edges_route_the_run_on() -> None:
    dot = """
    digraph node_budget {
        start [shape=Mdiamond]; done [shape=Msquare]
        a [prompt="A", max_cost_usd=1.5]; cheaper [prompt="C"]
        start -> a
        a -> done [condition="outcome=success"]
        a -> cheaper [condition="outcome=fail"]
        cheaper -> done
    }
    """
    store = InMemorySessionStore()
    backend = TurnsBackend({"a": 5, "cheaper": 1})
    result = _run(dot, store, backend, None)
    assert result.succeeded and result.completed_nodes == ("start", "a", "cheaper", "done")
    assert result.node_outcomes["a"].failure_reason == (
        "node a stopped: node a's budget max_cost_usd is reached: $2.00 spent of $1.50 (its max_cost_usd attribute)"
    )
    assert backend.calls == [("a", 0), ("a", 1), ("cheaper", 0)]


def test_80_percent_of_a_budget_warns_once_as_an_event_recorded_in_the_session() -> None:
    store = InMemorySessionStore()
    seen: list[Any] = []
    result = _run(STEPS, store, TurnsBackend({"a": 3, "b": 3}), Budget(max_cost=Money.usd(5), max_tokens=100_000),
                  on_event=seen.append)  # fmt: skip
    assert result.status is oc.RunStatus.BUDGET_EXCEEDED  # at $5, after b's second turn
    warnings = [event for event in seen if isinstance(event, ev.BudgetWarning)]
    assert [(w.budget, w.spent, w.limit, w.node_id) for w in warnings] == [("max_cost_usd", "$4.00", "$5.00", None)]
    [recorded] = _records(store, result.session_id, r.BudgetWarning)
    assert recorded.message == "80% of the session's budget max_cost_usd is spent: $4.00 of $5.00"


def test_wall_time_counts_the_runs_of_the_session_and_not_the_time_between_them() -> None:
    clock = ManualClock()
    store = InMemorySessionStore(clock=clock)
    backend = TurnsBackend({"a": 2, "b": 1}, clock=clock, seconds_per_turn=60)
    first = _run(STEPS, store, backend, Budget(max_wall_time_s=90), clock=clock)
    assert first.status is oc.RunStatus.BUDGET_EXCEEDED and backend.calls == [("a", 0), ("a", 1)]
    assert "the session's budget max_wall_time is reached: 2m 00s spent of 1m 30s" in first.failure_reason
    clock.advance(86_400)  # a day passes before the resume: it does not count, the first run's 2 minutes do
    backend = TurnsBackend({"a": 2, "b": 1}, clock=clock, seconds_per_turn=60)
    again = oc.resume_session(first.session_id, store=store, backend=backend, settings=SETTINGS, clock=clock,
                              budget=Budget(max_wall_time_s=110))  # fmt: skip
    assert again.status is oc.RunStatus.BUDGET_EXCEEDED and backend.calls == []
    assert "max_wall_time is reached: 2m 00s spent of 1m 50s" in again.failure_reason


def test_a_run_whose_last_node_reached_the_budget_still_ends_at_its_exit() -> None:
    result = _run(STEPS, InMemorySessionStore(), TurnsBackend({"a": 1, "b": 1}), Budget(max_cost=Money.usd(2)))
    assert result.succeeded  # b's turn reached $2, b finished, nothing new was left to start


def test_parallel_branches_stop_at_their_next_turn_boundary_and_the_run_ends() -> None:
    dot = """
    digraph fan {
        start [shape=Mdiamond]; done [shape=Msquare]
        fan [shape=component]; join [shape=tripleoctagon]
        left [prompt="L"]; right [prompt="R"]
        start -> fan; fan -> left; fan -> right; left -> join; right -> join; join -> done
    }
    """
    store = InMemorySessionStore()
    backend = TurnsBackend({"left": 10, "right": 10}, gate=threading.Barrier(2))
    result = _run(dot, store, backend, Budget(max_cost=Money.usd(3)))
    assert result.status is oc.RunStatus.BUDGET_EXCEEDED
    assert "fan" not in result.completed_nodes and result.checkpoint is not None and result.checkpoint.next_node == "fan"
    spent = oc.session_spending(store, result.session_id)  # the branches' sessions counted
    assert Money.usd(3) <= spent.cost.known <= Money.usd(4)  # each branch stops after its turn in flight
    assert {node for node, _ in backend.calls} == {"left", "right"} and len(backend.calls) == spent.tokens // 1000
