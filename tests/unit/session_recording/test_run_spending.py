"""The run's spending meter: it prices each turn (a backend's own figure kept), adds the commit messages written for
it, warns once per model without a price, and asks the stage to stop at its turn boundary once a budget is reached;
with a fleet it reads the branches other processes recorded."""

from __future__ import annotations

import threading
from typing import Any

from orchestra_core.model import events as ev
from orchestra_core.model.budget import Budget, Spending
from orchestra_core.model.builtin_prices import price_table
from orchestra_core.model.money import CostTally, Money
from orchestra_core.model.pricing import ModelPrice, ModelUsage
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.commit_messages import CommitMessageRequest
from orchestra_core.runs.spending import MeteredCommitMessages, RunSpending
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.commit_messages import ScriptedCommitMessages

PRICES = price_table({"m": ModelPrice("1000", "0"), "cheap": ModelPrice("0", "1000")})  # $1 per 1,000 tokens


def turn(model: str = "m", tokens: int = 1000, cost: float | None = None, node: str = "a") -> AgentTurn:
    return AgentTurn(node_id=node, turn_number=0, model=model, provider="p", token_usage=TokenUsage(tokens, 0), cost_usd=cost)


def meter(budget: Budget | None = None, nodes: dict[str, Budget] | None = None) -> tuple[RunSpending, list[Any]]:
    events: list[Any] = []
    spending = RunSpending("7", PRICES, budget or Budget(), nodes or {}, ManualClock())
    spending.attach(lambda kind, branch, fields: events.append(kind(session_id="7", timestamp=None, branch=branch, **fields)))
    return spending, events


def test_a_turn_is_priced_from_its_tokens_and_a_backends_own_figure_is_kept() -> None:
    spending, _ = meter()
    assert spending.price(turn()).cost_usd == 1.0
    assert spending.price(turn(cost=0.25)).cost_usd == 0.25


def test_a_model_without_a_price_is_unknown_and_warned_about_once() -> None:
    spending, events = meter()
    assert [spending.price(turn("acme")).cost_usd for _ in range(3)] == [None, None, None]
    assert spending.price(turn("acme", tokens=0)).cost_usd == 0.0  # used nothing: cost nothing
    [warning] = events
    assert isinstance(warning, ev.ModelPriceUnknown) and warning.model == "acme" and "never counted as zero" in warning.message


def test_a_commit_message_costs_with_the_turn_recorded_next_in_its_thread() -> None:
    spending, _ = meter()
    generator = MeteredCommitMessages(
        ScriptedCommitMessages(["Add a"], repeat_last=True, usage=ModelUsage("cheap", "p", TokenUsage(0, 500))), spending
    )
    request = CommitMessageRequest("diff", "intent", ("a.py",))
    assert generator.generate(request) == "Add a"
    other: list[float | None] = []
    worker = threading.Thread(target=lambda: other.append(spending.price(turn()).cost_usd))
    worker.start()
    worker.join()
    assert other == [1.0]  # another thread's turn does not take it
    assert spending.price(turn()).cost_usd == 1.5 and spending.price(turn()).cost_usd == 1.0


def test_a_generator_that_reports_no_usage_is_called_as_before() -> None:
    class Plain:
        def generate(self, request: CommitMessageRequest) -> str:
            return "Add a"

    spending, _ = meter()
    assert MeteredCommitMessages(Plain(), spending).generate(CommitMessageRequest("d", "i", ("a",))) == "Add a"


def test_the_stage_is_asked_to_stop_when_the_session_or_its_nodes_budget_is_reached() -> None:
    spending, _ = meter(Budget(max_cost=Money.usd(4)), {"a": Budget(max_tokens=1500)})
    assert spending.add(spending.price(turn(node="b"))) is None
    node_stop = spending.add(spending.price(turn(node="a"))) or spending.add(spending.price(turn(node="a")))
    assert node_stop is not None and node_stop.fails_node and node_stop.reason.startswith("node a stopped: node a's budget max_tokens")
    session_stop = spending.add(spending.price(turn(node="b")))
    assert session_stop is not None and not session_stop.fails_node
    assert session_stop.reason.endswith("continue with: orchestra resume 7 --max-cost 8")


def test_with_a_fleet_the_checks_between_nodes_read_what_other_processes_recorded() -> None:
    spending, _ = meter(Budget(max_cost=Money.usd(5)))
    assert spending.session_stop() is None
    spending.read_store_between_nodes(lambda: Spending(CostTally(Money.usd(6)), 6000))
    verdict = spending.session_stop()
    assert verdict is not None and "$6.00 spent of $5.00" in verdict.message
