"""The built-in list prices of the common Anthropic and OpenAI models, in US dollars per million tokens.

Read on PRICES_AS_OF from the providers' pricing pages (SOURCES): standard tier, short-context rates. Cache writes
are Anthropic's 5-minute writes; OpenAI models without a cache-write price bill writes as input. Prices change:
`pricing:` in orchestra.yaml overrides or adds entries (docs/configuration.md). Not represented: batch, flex and
priority tiers, long-context surcharges (Anthropic Haiku 5.5 above 100K prompt tokens, OpenAI GPT-6 models above
272K input tokens), 1-hour cache writes, data-residency premiums.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from orchestra_core.model.pricing import ModelPrice, PriceTable

PRICES_AS_OF = "2026-11-27"
SOURCES = (
    "https://platform.claude.com/docs/en/about-claude/pricing",
    "https://developers.openai.com/api/docs/pricing",
)

# name: (input, output, cache read, cache write); None: as input
_ANTHROPIC: dict[str, tuple[str, str, str | None, str | None]] = {
    "claude-fable-5-2": ("8", "40", "0.20", "10"),
    "claude-fable-5-1": ("10", "50", "0.25", "12.50"),
    "claude-mythos-5-1": ("10", "50", "0.25", "12.50"),
    "claude-fable-5": ("10", "50", "1", "12.50"),
    "claude-mythos-5": ("10", "50", "1", "12.50"),
    "claude-opus-5-5": ("4", "20", "0.20", "5"),
    "claude-opus-5": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-8": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-7": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-6": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-5": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-1": ("15", "75", "1.50", "18.75"),
    "claude-opus-4-0": ("15", "75", "1.50", "18.75"),
    "claude-opus-4": ("15", "75", "1.50", "18.75"),
    "claude-sonnet-5-5": ("2", "10", "0.10", "2.50"),
    "claude-sonnet-5": ("2", "10", "0.20", "2.50"),
    "claude-sonnet-4-6": ("3", "15", "0.30", "3.75"),
    "claude-sonnet-4-5": ("3", "15", "0.30", "3.75"),
    "claude-sonnet-4-0": ("3", "15", "0.30", "3.75"),
    "claude-sonnet-4": ("3", "15", "0.30", "3.75"),
    "claude-3-7-sonnet": ("3", "15", "0.30", "3.75"),
    "claude-haiku-5-5": ("0.10", "0.50", "0.01", "0.125"),
    "claude-haiku-4-5": ("1", "5", "0.10", "1.25"),
    "claude-3-5-haiku": ("0.80", "4", "0.08", "1"),
    "claude-3-haiku": ("0.25", "1.25", "0.03", "0.30"),
}
# Orchestra's scripted provider plays a cassette offline: its own model costs nothing (give the names a cassette
# run uses prices under `pricing:` to try budgets out).
_ORCHESTRA: dict[str, tuple[str, str, str | None, str | None]] = {"scripted": ("0", "0", "0", "0")}
_OPENAI: dict[str, tuple[str, str, str | None, str | None]] = {
    "gpt-6.1-sol": ("2", "10", "0.10", "2.50"),
    "gpt-6.1-terra": ("1", "5", "0.05", "1.25"),
    "gpt-6-sol": ("2", "10", "0.20", "2.50"),
    "gpt-6-luna": ("0.10", "0.50", "0.01", "0.125"),
    "gpt-5.4": ("2.50", "15", "0.25", None),
    "gpt-5.4-mini": ("0.75", "4.50", "0.075", None),
    "gpt-5.1": ("1.25", "10", "0.125", None),
    "gpt-5": ("1.25", "10", "0.125", None),
    "gpt-5-mini": ("0.25", "2", "0.025", None),
    "gpt-5-nano": ("0.05", "0.40", "0.005", None),
    "gpt-4.1": ("2", "8", "0.50", None),
    "gpt-4.1-mini": ("0.40", "1.60", "0.10", None),
    "gpt-4.1-nano": ("0.10", "0.40", "0.025", None),
    "gpt-4o": ("2.50", "10", "1.25", None),
    "gpt-4o-mini": ("0.15", "0.60", "0.075", None),
    "o3": ("2", "8", "0.50", None),
    "o4-mini": ("1.10", "4.40", "0.275", None),
    "o3-mini": ("1.10", "4.40", "0.55", None),
    "o1": ("15", "60", "7.50", None),
}


@cache
def builtin_price_table() -> PriceTable:
    """The built-in prices (see the module docstring for their date, sources and limits)."""
    prices = {
        name: ModelPrice(input_, output, cache_read, cache_write)
        for table in (_ANTHROPIC, _OPENAI, _ORCHESTRA)
        for name, (input_, output, cache_read, cache_write) in table.items()
    }
    return PriceTable(prices, PRICES_AS_OF)


def price_table(overrides: Mapping[str, ModelPrice] | None = None) -> PriceTable:
    """The built-in table with orchestra.yaml's `pricing:` entries over it."""
    table = builtin_price_table()
    return table.overridden_by(overrides) if overrides else table
