"""A run's spending meter: it prices each agent turn (and the commit messages written for it), adds it to what the
session had spent, warns at 80% of a budget and at a model without a price, and tells the engine and the agent
loops when a budget is reached (the `BudgetGuard`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from attrs import evolve

from orchestra_core.model.budget import (
    NODE_BUDGET_KEYS,
    WARN_AT,
    Budget,
    BudgetVerdict,
    Spending,
    budget_from_attrs,
    check_budget,
    continue_option,
)
from orchestra_core.model.builtin_prices import price_table
from orchestra_core.model.cancellation import TurnStop, takes_keyword
from orchestra_core.model.events import BudgetWarning, EngineEvent, ModelPriceUnknown
from orchestra_core.model.graph import Graph
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.pricing import ModelUsage, PriceTable, recorded_cost
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.commit_messages import CommitMessageGenerator, CommitMessageRequest
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.session.spending import node_spending, runs_wall_time, session_spending

Emit = Callable[[type[EngineEvent], str | None, dict[str, Any]], None]


class RunSpending:
    """What the session has spent, kept up to date as the run's turns are recorded (thread-safe).

    Args:
        session_id: The session (named in the message that says how to continue).
        prices: The price table (built in, with orchestra.yaml's `pricing:` over it).
        budget: The session's budget.
        node_budgets: Each node's own budget (its `max_cost_usd` / `max_tokens` attributes).
        prior: What the session had spent before this run (wall time: its earlier runs').
        prior_by_node: Each budgeted node's share of `prior`.
        clock: Measures this run's wall time.
    """

    def __init__(
        self,
        session_id: str,
        prices: PriceTable,
        budget: Budget,
        node_budgets: Mapping[str, Budget],
        clock: Clock,
        prior: Spending | None = None,
        prior_by_node: Mapping[str, Spending] | None = None,
    ) -> None:
        self.session_id = session_id
        self.prices = prices
        self.budget = budget
        self.node_budgets = dict(node_budgets)
        self._clock = clock
        self._started = clock.monotonic()
        prior = prior or Spending()
        self._prior_wall = prior.wall_time_s
        self._spent = prior.with_wall_time(0.0)
        self._by_node = {node: (prior_by_node or {}).get(node, Spending()) for node in self.node_budgets}
        self._lock = threading.Lock()
        self._warned: set[tuple[str | None, str]] = set()
        self._unpriced: set[str] = set()
        self._pending = threading.local()  # commit-message costs waiting for the turn they were written for
        self._emit: Emit | None = None
        self._stored: Callable[[], Spending] | None = None

    def read_store_between_nodes(self, stored: Callable[[], Spending]) -> None:
        """The engine's checks (between nodes, before retries) read the session's spending from the store first:
        branches a fleet runs record their turns there from other processes."""
        self._stored = stored

    def attach(self, emit: Emit) -> None:
        """Where warnings go (the run's observers: the session recorder, the console, `on_event`)."""
        self._emit = emit

    # Pricing ----------------------------------------------------------------------------------------------------
    def price(self, turn: AgentTurn, branch: str | None = None) -> AgentTurn:
        """The turn with its `cost_usd`: what the backend reported, else priced from its tokens, plus the commit
        messages written for it; None when a price is missing (a warning says so, once per model)."""
        if turn.cost_usd is not None:
            cost: Money | None = Money.usd(turn.cost_usd)
        else:
            cost = self.prices.cost(turn.model, turn.token_usage)
            if cost is None:
                self._price_unknown(turn.model, turn.provider, turn.node_id, branch)
        overhead: list[Money | None] = getattr(self._pending, "costs", [])
        self._pending.costs = []
        for extra in overhead:
            cost = None if cost is None or extra is None else cost + extra
        return evolve(turn, cost_usd=cost.to_float() if cost is not None else None)

    def commit_message_used(self, usage: ModelUsage) -> None:
        """A commit message was written by a model: its cost goes with the turn recorded next in this thread (the
        turn the commit was for)."""
        cost = self.prices.cost(usage.model, usage.tokens)
        if cost is None:
            self._price_unknown(usage.model, usage.provider, "", None)
        costs = getattr(self._pending, "costs", [])
        costs.append(cost)
        self._pending.costs = costs

    def _price_unknown(self, model: str, provider: str, node_id: str, branch: str | None) -> None:
        with self._lock:
            if model in self._unpriced:
                return
            self._unpriced.add(model)
        message = (
            f"model {model or '(unnamed)'} has no price, so the cost of its turns is unknown (never counted as "
            f"zero); add it under pricing: in orchestra.yaml"
        )
        fields = {"model": model, "provider": provider, "node_id": node_id, "message": message}
        self._send(ModelPriceUnknown, branch, fields)

    # Adding up --------------------------------------------------------------------------------------------------
    def add(self, turn: AgentTurn, branch: str | None = None) -> TurnStop | None:
        """Count a recorded (priced) turn; the stop its stage must make at this turn boundary, if a budget is now
        reached: the session's (the run ends) before the node's own (the node fails)."""
        added = Spending(CostTally().add(recorded_cost(turn.cost_usd, turn.token_usage)), turn.token_usage.total_tokens)
        node = turn.node_id
        with self._lock:
            self._spent = self._spent + added
            if node in self._by_node:
                self._by_node[node] = self._by_node[node] + added
        session = self._session_verdict(branch)
        if session is not None:
            return TurnStop(session.message)
        own = self.node_stop(node, branch)
        return TurnStop(own.message, fails_node=True) if own is not None else None

    def spending(self) -> Spending:
        """What the session has spent so far (its earlier runs' wall time plus this run's)."""
        with self._lock:
            spent = self._spent
        return spent.with_wall_time(self._prior_wall + self._clock.monotonic() - self._started)

    # The BudgetGuard ---------------------------------------------------------------------------------------------
    def session_stop(self, branch: str | None = None) -> BudgetVerdict | None:
        """The session's budget that is reached, with the message saying how to continue (None: none is)."""
        if not self.budget.limited:
            return None
        if self._stored is not None:
            stored = self._stored()  # every turn recorded so far, this process's included
            with self._lock:
                if stored.cost.known >= self._spent.cost.known and stored.tokens >= self._spent.tokens:
                    self._spent = stored.with_wall_time(0.0)
        return self._session_verdict(branch)

    def _session_verdict(self, branch: str | None) -> BudgetVerdict | None:
        if not self.budget.limited:
            return None
        spent = self.spending()
        reached = check_budget(self.budget, spent)
        self._warn(check_budget(self.budget, spent, share=WARN_AT), reached, branch)
        if not reached:
            return None
        verdict = reached[0]
        option = continue_option(verdict.key, self.budget, spent)
        return evolve(verdict, message=f"{verdict.reached()}; continue with: orchestra resume {self.session_id} {option}")

    def node_stop(self, node_id: str, branch: str | None = None) -> BudgetVerdict | None:
        """The node's own budget that is reached (None: none is, or it has none)."""
        budget = self.node_budgets.get(node_id)
        if budget is None:
            return None
        with self._lock:
            spent = self._by_node[node_id]
        reached = check_budget(budget, spent, node_id=node_id)
        self._warn(check_budget(budget, spent, share=WARN_AT, node_id=node_id), reached, branch)
        if not reached:
            return None
        verdict = reached[0]
        return evolve(verdict, message=f"node {node_id} stopped: {verdict.reached()} (its {verdict.key} attribute)")

    def continue_option(self, verdict: BudgetVerdict) -> str:
        """The option a resume needs to go on after `verdict` (`--max-cost 10`)."""
        return continue_option(verdict.key, self.budget, self.spending())

    def _warn(self, verdicts: list[BudgetVerdict], reached: list[BudgetVerdict], branch: str | None) -> None:
        """An event (recorded, shown) the first time 80% of a budget is spent (not when one step reached all of it:
        the stop says so)."""
        passed = {verdict.key for verdict in reached}
        for verdict in verdicts:
            key = (verdict.node_id, verdict.key)
            with self._lock:
                if key in self._warned:
                    continue
                self._warned.add(key)
            if verdict.key in passed:
                continue
            fields = {
                "budget": verdict.key, "spent": verdict.spent, "limit": verdict.limit, "message": verdict.warning(),
                "node_id": verdict.node_id,
            }  # fmt: skip
            self._send(BudgetWarning, branch, fields)

    def _send(self, event: type[EngineEvent], branch: str | None, fields: dict[str, Any]) -> None:
        if self._emit is not None:
            self._emit(event, branch, fields)


class MeteredCommitMessages:
    """A commit message generator whose model calls are counted: their cost goes with the turn the commit is for."""

    def __init__(self, inner: CommitMessageGenerator, meter: RunSpending) -> None:
        self._inner = inner
        self._meter = meter
        self._reports = takes_keyword(inner.generate, "on_usage")
        self._fails_over = takes_keyword(inner.generate, "on_failover")

    def generate(self, request: CommitMessageRequest, *, on_failover: Callable[..., None] | None = None) -> str:
        """The inner generator's message, its usage counted; `on_failover` goes through to a generator taking it."""
        keywords: dict[str, Any] = {}
        if self._reports:
            keywords["on_usage"] = self._meter.commit_message_used
        if on_failover is not None and self._fails_over:
            keywords["on_failover"] = on_failover
        return self._inner.generate(request, **keywords)


def run_budgets(settings: OrchestraSettings, graph: Graph, options: Budget | None) -> tuple[Budget, dict[str, Budget]]:
    """The session's budget (orchestra.yaml's `budget:`, then the graph's attributes, then the run's options, key
    by key) and each node's own (its `max_cost_usd` / `max_tokens` attributes).

    Raises:
        BudgetValueError: A budget attribute does not parse (`compile` refuses it first).
    """
    budget = settings.budget.to_budget().overridden_by(budget_from_attrs(graph.attrs))
    if options is not None:
        budget = budget.overridden_by(options)
    nodes = {
        node.id: budget_from_attrs(node.attrs, NODE_BUDGET_KEYS)
        for node in graph.nodes.values()
        if any(node.attrs.get(key, "").strip() for key in NODE_BUDGET_KEYS)
    }
    return budget, nodes


def start_meter(
    store: SessionStore | None,
    session_id: str,
    settings: OrchestraSettings,
    budget: Budget,
    node_budgets: Mapping[str, Budget],
    clock: Clock,
) -> RunSpending:
    """The run's meter, starting from what the session had spent: read from the store only when a budget is set
    (the wall time of its earlier runs only for `max_wall_time`, each node's share only for node budgets)."""
    prior, by_node = Spending(), None
    if store is not None and (budget.limited or node_budgets):
        prior = session_spending(store, session_id)
        if budget.max_wall_time_s is not None:
            prior = prior.with_wall_time(runs_wall_time(store, session_id))
        by_node = node_spending(store, session_id) if node_budgets else None
    return RunSpending(session_id, price_table(settings.pricing), budget, node_budgets, clock, prior, by_node)
