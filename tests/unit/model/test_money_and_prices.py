"""Money adds up exactly, a turn's cost counts cached tokens at their prices, and model names find their price by
the documented rule (exact first, then without where the model is served from, then without a date)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.model.builtin_prices import PRICES_AS_OF, SOURCES, builtin_price_table, price_table
from orchestra_core.model.money import CostTally, Money, format_usd
from orchestra_core.model.pricing import ModelPrice, PriceTable, name_candidates, recorded_cost
from orchestra_core.model.turn import TokenUsage

SONNET = ModelPrice("3", "15", "0.30", "3.75")
_amounts = st.decimals(min_value=0, max_value=1000, places=9, allow_nan=False, allow_infinity=False)


@given(st.lists(_amounts, max_size=60), st.randoms())
def test_a_total_of_many_costs_is_their_exact_sum_in_any_order_and_grouping(amounts: list[Decimal], rng) -> None:
    costs = [Money.usd(amount) for amount in amounts]
    shuffled = list(costs)
    rng.shuffle(shuffled)
    split = rng.randint(0, len(shuffled))
    grouped = Money.sum(shuffled[:split]) + Money.sum(shuffled[split:])
    assert Money.sum(costs) == grouped == Money.usd(sum(amounts, Decimal(0)))


@given(st.lists(st.integers(min_value=0, max_value=10**15 - 1), max_size=60))
def test_costs_stored_as_floats_read_back_exactly_so_stored_totals_equal_the_meters(nanos: list[int]) -> None:
    # a turn's cost_usd is a float in the store; read through its shortest repr it is the same Money again
    costs = [Money(n) for n in nanos]
    assert [Money.usd(cost.to_float()) for cost in costs] == costs
    assert Money.sum(Money.usd(cost.to_float()) for cost in costs) == Money.sum(costs)


def test_a_float_is_read_as_the_decimal_it_prints_as() -> None:
    assert Money.usd(0.1) + Money.usd(0.2) == Money.usd("0.3")
    assert Money.usd(0.003495).nanos == 3_495_000
    with pytest.raises(ValueError):
        Money.usd(float("nan"))


@pytest.mark.parametrize(
    ("amount", "text"),
    [("0", "$0.00"), ("12.345", "$12.35"), ("1234.5", "$1,234.50"), ("0.5", "$0.50"), ("0.01234", "$0.0123"),
     ("0.003495", "$0.003495"), ("0.0000001", "<$0.000001"), ("-2", "-$2.00")],
)
def test_amounts_are_shown_to_the_cent_from_a_dollar_and_finer_below(amount: str, text: str) -> None:
    assert format_usd(Money.usd(amount)) == text


def test_a_tally_keeps_unknown_costs_apart_and_never_counts_them_as_zero() -> None:
    tally = CostTally().add(Money.usd("1.5")).add(None).add(Money.usd("0.25")).add(None)
    assert (tally.known, tally.unknown, tally.complete) == (Money.usd("1.75"), 2, False)
    assert tally.text() == "$1.75 + unknown (2 turns)" and tally.json_value() == 1.75
    assert CostTally().add(None).json_value() is None and CostTally().add(None).text() == "unknown (1 turn)"
    assert CostTally().json_value() == 0.0 and CostTally().complete


def test_a_turn_pays_uncached_input_cache_reads_cache_writes_and_output_each_at_its_price() -> None:
    # 1,000 prompt tokens of which 400 read from and 100 written to the cache, 100 output tokens
    usage = TokenUsage(1000, 100, cache_read_tokens=400, cache_write_tokens=100)
    expected = (500 * Decimal("3") + 400 * Decimal("0.30") + 100 * Decimal("3.75") + 100 * Decimal("15")) / 10**6
    assert SONNET.cost(usage) == Money.usd(expected) == Money.usd("0.003495")


def test_cache_prices_left_out_are_the_input_price() -> None:
    usage = TokenUsage(1000, 0, cache_read_tokens=600, cache_write_tokens=400)
    assert ModelPrice("2", "8").cost(usage) == Money.usd("0.002")


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("Claude-Haiku-4-5", "claude-haiku-4-5"),
        ("anthropic/claude-opus-4-1", "claude-opus-4-1"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-opus-5-5[1m]", "claude-opus-5-5"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai/gpt-5-mini", "gpt-5-mini"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_dated_ids_and_where_a_model_is_served_from_find_the_base_price(model: str, key: str) -> None:
    table = builtin_price_table()
    assert table.price_for(model) == table.prices[key]


@pytest.mark.parametrize("model", ["gpt-4o-audio-preview", "sonnet", "claude-sonnet", "my-local-llama", ""])
def test_nothing_is_guessed_from_a_prefix_or_a_family_name(model: str) -> None:
    assert builtin_price_table().price_for(model) is None


def test_the_exact_name_wins_over_its_dated_base() -> None:
    table = PriceTable({"m": ModelPrice("1", "1"), "m-20250101": ModelPrice("9", "9")})
    assert table.price_for("m-20250101") == ModelPrice("9", "9") and table.price_for("m-20260101") == ModelPrice("1", "1")
    assert list(name_candidates("us.anthropic.m-20250101-v1:0")) == ["us.anthropic.m-20250101-v1:0", "m-20250101", "m"]


def test_orchestra_yaml_prices_override_the_built_in_ones_and_add_models() -> None:
    table = price_table({"Claude-Sonnet-4": ModelPrice("1", "2"), "house-model": ModelPrice("0.5", "1")})
    assert table.price_for("claude-sonnet-4-20250514") == ModelPrice("1", "2")
    assert table.price_for("house-model") == ModelPrice("0.5", "1")
    assert table.price_for("claude-haiku-4-5") == builtin_price_table().prices["claude-haiku-4-5"]


def test_a_model_without_a_price_costs_unknown_and_a_call_without_tokens_costs_nothing() -> None:
    table = builtin_price_table()
    assert table.cost("no-such-model", TokenUsage(10, 10)) is None
    assert table.cost("no-such-model", TokenUsage()) == Money()
    assert recorded_cost(None, TokenUsage(1, 0)) is None and recorded_cost(None, TokenUsage()) == Money()
    assert recorded_cost(0.25, TokenUsage(1, 1)) == Money.usd("0.25")


def test_the_built_in_table_is_dated_sourced_and_sane() -> None:
    assert PRICES_AS_OF.count("-") == 2 and all(source.startswith("https://") for source in SOURCES)
    prices = builtin_price_table().prices
    assert {"claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "gpt-4o", "gpt-4o-mini", "gpt-5", "o3"} <= set(prices)
    for name, price in prices.items():
        read = price.input if price.cache_read is None else price.cache_read
        assert price.input >= 0 and price.output >= 0 and read <= price.input, name
