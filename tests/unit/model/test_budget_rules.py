"""Budget rules: which limit wins, when a budget is reached or 80% spent, the values accepted, and the option that
lets a resumed run go on."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.model.budget import (
    MAX_COST,
    MAX_TOKENS,
    MAX_WALL_TIME,
    NODE_BUDGET_KEYS,
    WARN_AT,
    Budget,
    BudgetValueError,
    Spending,
    budget_from_attrs,
    check_budget,
    continue_option,
    parse_cost,
    parse_tokens,
    parse_wall_time,
)
from orchestra_core.model.money import CostTally, Money


def spent(dollars: str = "0", tokens: int = 0, seconds: float = 0.0, unknown: int = 0) -> Spending:
    return Spending(CostTally(Money.usd(dollars), unknown), tokens, seconds)


def test_later_budgets_override_earlier_ones_key_by_key() -> None:
    config = Budget(Money.usd(5), 2_000_000, 7200.0)
    graph = Budget(max_cost=Money.usd(3))
    option = Budget(max_wall_time_s=60.0)
    assert config.overridden_by(graph).overridden_by(option) == Budget(Money.usd(3), 2_000_000, 60.0)
    assert not Budget().limited and Budget(max_tokens=1).limited


def test_a_budget_is_reached_at_its_limit_and_warned_about_at_80_percent() -> None:
    budget = Budget(Money.usd(5), 1000, 100.0)
    assert check_budget(budget, spent("4.99", 999, 99.9)) == []
    assert [v.key for v in check_budget(budget, spent("5", 1000, 100.0))] == [MAX_COST, MAX_TOKENS, MAX_WALL_TIME]
    assert [v.key for v in check_budget(budget, spent("4", 799, 80.0), share=WARN_AT)] == [MAX_COST, MAX_WALL_TIME]
    [verdict] = check_budget(budget, spent("5.02"))
    assert verdict.message == "the session's budget max_cost_usd is reached: $5.02 spent of $5.00"
    assert verdict.warning() == "80% of the session's budget max_cost_usd is spent: $5.02 of $5.00"


def test_turns_of_unknown_cost_are_not_counted_against_a_cost_budget_and_the_message_says_so() -> None:
    [verdict] = check_budget(Budget(Money.usd(1)), spent("1.5", unknown=2))
    assert verdict.known_cost_only and "turns of unknown cost not counted" in verdict.reached()


def test_a_node_budget_names_the_node() -> None:
    [verdict] = check_budget(Budget(max_tokens=10), spent(tokens=12), node_id="implement")
    assert verdict.node_id == "implement" and verdict.reached().startswith("node implement's budget max_tokens")


@given(st.decimals(min_value=Decimal("0.01"), max_value=10_000, places=2), st.integers(min_value=0, max_value=10**7))
def test_the_option_that_continues_always_allows_more_than_was_spent(limit: Decimal, nanos_over: int) -> None:
    budget = Budget(Money.usd(limit))
    spending = Spending(CostTally(Money.usd(limit) + Money(nanos_over)))
    option = continue_option(MAX_COST, budget, spending)
    raised = Decimal(option.removeprefix("--max-cost "))
    assert raised >= limit * 2 and Money.usd(raised) > spending.cost.known


def test_the_continue_options_of_tokens_and_wall_time() -> None:
    assert continue_option(MAX_TOKENS, Budget(max_tokens=1000), spent(tokens=1200)) == "--max-tokens 2000"
    assert continue_option(MAX_WALL_TIME, Budget(max_wall_time_s=3600.0), spent(seconds=3700)) == "--max-wall-time 2h"
    assert continue_option(MAX_COST, Budget(Money.usd(5)), spent("5.02")) == "--max-cost 10"


@pytest.mark.parametrize("text", ["-1", "0", "abc", "", "nan", "inf", "1e999999"])
def test_a_cost_budget_is_a_positive_amount(text: str) -> None:
    with pytest.raises(BudgetValueError, match="not an amount of US dollars"):
        parse_cost(text)


def test_budget_values_parse() -> None:
    assert parse_cost("2.50") == Money.usd("2.5") and parse_tokens("2_000_000") == parse_tokens("2,000,000") == 2_000_000
    assert parse_wall_time("90m") == 5400.0 and parse_wall_time("7200") == 7200.0
    for bad in ("0", "-5", "1.5", "many"):
        with pytest.raises(BudgetValueError, match="not a number of tokens"):
            parse_tokens(bad)
    for bad in ("forever", "0s", "-1h"):
        with pytest.raises(BudgetValueError, match="not a duration"):
            parse_wall_time(bad)


def test_graph_and_node_attributes_set_budgets() -> None:
    attrs = {"max_cost_usd": "5", "max_tokens": "100", "max_wall_time": "2h"}
    assert budget_from_attrs(attrs) == Budget(Money.usd(5), 100, 7200.0)
    assert budget_from_attrs(attrs, NODE_BUDGET_KEYS) == Budget(Money.usd(5), 100, None)
    assert budget_from_attrs({}) == Budget()
    with pytest.raises(BudgetValueError):
        budget_from_attrs({"max_cost_usd": "-1"})
