"""Prices of models per million tokens, the cost of a model call from its token usage, and how model names
find their price.

A turn's cost is `uncached input × input + cache reads × cache_read + cache writes × cache_write + output ×
output`, per million tokens, where the uncached input is the prompt tokens less the cached ones (providers count
cached tokens in the prompt and bill them apart).

Which price a model name gets (the first that exists, names compared without case):

1. the name as given (`claude-sonnet-4-20250514`);
2. without where it is served from: a provider prefix up to the last `/` (`anthropic/claude-sonnet-4-5`), a
   Bedrock region and vendor (`us.anthropic.`), a Bedrock version (`-v1:0`), a Vertex version (`@20250929`), a
   context variant (`[1m]`);
3. then without a date or `latest` suffix: `-20250514`, `-2024-08-06`, `-latest`.

Nothing else is guessed (no prefix matching: `gpt-4o-audio` is not `gpt-4o`); a model no step finds has no price,
and its cost is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.money import NANOS_PER_USD, Money
from orchestra_core.model.turn import TokenUsage

_PER_MILLION = 1_000_000
_PROVIDER_PREFIX = re.compile(r"^(?:(?:us|eu|apac|jp|au|global)\.)?(?:anthropic|openai)\.", re.IGNORECASE)
_SERVING_SUFFIX = re.compile(r"(?:-v\d+(?::\d+)?|@[\w.-]+|\[[^\]]*\])$", re.IGNORECASE)
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$", re.IGNORECASE)


def _decimal(value: Decimal | int | str) -> Decimal:
    return Decimal(value)


def _optional_decimal(value: Decimal | int | str | None) -> Decimal | None:
    return None if value is None else Decimal(value)


def _lower_keys(prices: Mapping[str, ModelPrice]) -> Mapping[str, ModelPrice]:
    return frozen_map({name.lower(): price for name, price in prices.items()})


@frozen
class ModelPrice:
    """What a model costs in US dollars per million tokens.

    Attributes:
        input: Uncached input (prompt) tokens.
        output: Output (completion) tokens, reasoning included.
        cache_read: Input tokens read from the provider's prompt cache (None: as `input`).
        cache_write: Input tokens written to the prompt cache (None: as `input`).
    """

    input: Decimal = field(converter=_decimal)
    output: Decimal = field(converter=_decimal)
    cache_read: Decimal | None = field(default=None, converter=_optional_decimal)
    cache_write: Decimal | None = field(default=None, converter=_optional_decimal)

    def cost(self, usage: TokenUsage) -> Money:
        """The cost of a model call that used `usage`, exact to the nanodollar."""
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        uncached = max(usage.prompt_tokens - cached, 0)
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        per_million = (
            uncached * self.input
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
            + usage.completion_tokens * self.output
        )
        return Money.usd(per_million / _PER_MILLION)

    def per_million_nanos(self) -> tuple[int, int]:
        """Input and output prices in nanodollars per million tokens (for messages and tests)."""
        return int(self.input * NANOS_PER_USD), int(self.output * NANOS_PER_USD)


def name_candidates(model: str) -> Iterator[str]:
    """The names a model is looked up under, in order (see the module docstring)."""
    name = model.strip().lower()
    yield name
    served = name.rsplit("/", 1)[-1]
    served = _PROVIDER_PREFIX.sub("", served)
    while True:
        shorter = _SERVING_SUFFIX.sub("", served)
        if shorter == served:
            break
        served = shorter
    if served != name:
        yield served
    undated = _DATE_SUFFIX.sub("", served)
    if undated != served:
        yield undated


@frozen
class PriceTable:
    """Prices by model name (lower case), with how names find them (`name_candidates`).

    Attributes:
        prices: Model name -> price.
        as_of: When the prices were read (the built-in table's date), "" when not known.
    """

    prices: Mapping[str, ModelPrice] = field(factory=dict, converter=_lower_keys)
    as_of: str = ""

    def price_for(self, model: str) -> ModelPrice | None:
        """The model's price, None when no name it goes by has one."""
        for name in name_candidates(model):
            price = self.prices.get(name)
            if price is not None:
                return price
        return None

    def cost(self, model: str, usage: TokenUsage) -> Money | None:
        """What a call of `model` that used `usage` cost; nothing for a call that used no tokens; None when the
        model has no price."""
        if not (usage.prompt_tokens or usage.completion_tokens or usage.cache_read_tokens or usage.cache_write_tokens):
            return Money()
        price = self.price_for(model)
        return price.cost(usage) if price is not None else None

    def overridden_by(self, prices: Mapping[str, ModelPrice]) -> PriceTable:
        """This table with `prices` added; a name in both takes the new price."""
        return PriceTable({**self.prices, **{name.lower(): price for name, price in prices.items()}}, self.as_of)


def recorded_cost(cost_usd: float | None, usage: TokenUsage) -> Money | None:
    """What a recorded turn counts for in totals: its `cost_usd`; nothing for a turn that used no tokens (a tool
    stage, changes made outside the agent's tools); None (unknown) otherwise."""
    if cost_usd is not None:
        return Money.usd(cost_usd)
    if usage.prompt_tokens or usage.completion_tokens:
        return None
    return Money()


@frozen
class ModelUsage:
    """One model call outside an agent's turns (a commit message): which model answered and the tokens it used."""

    model: str
    provider: str = ""
    tokens: TokenUsage = field(factory=TokenUsage)
