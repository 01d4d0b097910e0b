"""Budgets: what a session may spend (money, tokens, wall time), what it has spent, and when a budget is reached.

A session's budget is the one of orchestra.yaml's `budget:`, overridden key by key by the graph's attributes, then
by the run's options (`--max-cost`); a node's `max_cost_usd` / `max_tokens` attributes bound that node's share.
The engine asks a `BudgetGuard` between turns and between nodes (docs/running.md, "Budgets").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Protocol

from attrs import Factory, evolve, field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.money import CostTally, Money, format_usd
from orchestra_core.model.values import format_duration, parse_duration

MAX_COST = "max_cost_usd"
MAX_TOKENS = "max_tokens"
MAX_WALL_TIME = "max_wall_time"
BUDGET_KEYS = (MAX_COST, MAX_TOKENS, MAX_WALL_TIME)
NODE_BUDGET_KEYS = (MAX_COST, MAX_TOKENS)
WARN_AT = Decimal("0.8")  # a warning once this share of a budget is spent


class BudgetValueError(OrchestraError, ValueError):
    """A budget value that is not a positive amount, count or duration."""


@frozen
class Budget:
    """Limits on spending; None: no limit on that.

    Attributes:
        max_cost: US dollars.
        max_tokens: Prompt plus completion tokens of the agent turns.
        max_wall_time_s: Seconds the session's runs may take, added over its resumes.
    """

    max_cost: Money | None = None
    max_tokens: int | None = None
    max_wall_time_s: float | None = None

    @property
    def limited(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None or self.max_wall_time_s is not None

    def overridden_by(self, other: Budget) -> Budget:
        """This budget with every limit `other` sets replacing its own."""
        return Budget(
            other.max_cost if other.max_cost is not None else self.max_cost,
            other.max_tokens if other.max_tokens is not None else self.max_tokens,
            other.max_wall_time_s if other.max_wall_time_s is not None else self.max_wall_time_s,
        )


@frozen
class Spending:
    """What was spent: the cost of the agent turns (and the commit messages written for them), their tokens, and
    wall time."""

    cost: CostTally = field(factory=CostTally)
    tokens: int = 0
    wall_time_s: float = 0.0

    def __add__(self, other: Spending) -> Spending:
        return Spending(self.cost + other.cost, self.tokens + other.tokens, self.wall_time_s + other.wall_time_s)

    def with_wall_time(self, seconds: float) -> Spending:
        return evolve(self, wall_time_s=seconds)


@frozen
class BudgetVerdict:
    """A budget reached (or, for a warning, 80% of it spent).

    Attributes:
        key: `max_cost_usd`, `max_tokens` or `max_wall_time`.
        spent: What was spent, as text (`$5.02`, `2,000,117 tokens`, `2h 00m`).
        limit: The limit, as text.
        node_id: The node whose own budget it is; None for the session's.
        known_cost_only: A cost budget compared with the known costs while some were unknown.
        message: What to tell the user (default: `reached()`; the run's meter adds how to continue).
    """

    key: str
    spent: str
    limit: str
    node_id: str | None = None
    known_cost_only: bool = False
    message: str = field(default=Factory(lambda self: self.reached(), takes_self=True))

    @property
    def owner(self) -> str:
        return f"node {self.node_id}'s budget" if self.node_id else "the session's budget"

    def reached(self) -> str:
        """`the session's budget max_cost_usd is reached: $5.02 spent of $5.00`."""
        unknown = " (turns of unknown cost not counted)" if self.known_cost_only else ""
        return f"{self.owner} {self.key} is reached: {self.spent} spent of {self.limit}{unknown}"

    def warning(self) -> str:
        """`80% of the session's budget max_cost_usd is spent: $4.01 of $5.00`."""
        unknown = " (turns of unknown cost not counted)" if self.known_cost_only else ""
        return f"80% of {self.owner} {self.key} is spent: {self.spent} of {self.limit}{unknown}"


def check_budget(budget: Budget, spending: Spending, *, share: Decimal = Decimal(1), node_id: str | None = None) -> list[BudgetVerdict]:
    """The budgets of which at least `share` is spent (1: reached; WARN_AT: the warning), in BUDGET_KEYS order."""
    found = []
    cost = spending.cost
    if budget.max_cost is not None and Decimal(cost.known.nanos) >= share * budget.max_cost.nanos:
        found.append(BudgetVerdict(MAX_COST, format_usd(cost.known), format_usd(budget.max_cost), node_id, not cost.complete))
    if budget.max_tokens is not None and spending.tokens >= share * budget.max_tokens:
        found.append(BudgetVerdict(MAX_TOKENS, f"{spending.tokens:,} tokens", f"{budget.max_tokens:,}", node_id))
    wall = budget.max_wall_time_s
    if wall is not None and Decimal(repr(spending.wall_time_s)) >= share * Decimal(repr(wall)):
        found.append(BudgetVerdict(MAX_WALL_TIME, format_duration(spending.wall_time_s, "readable"), format_duration(wall, "readable"), node_id))
    return found


def continue_option(key: str, budget: Budget, spending: Spending) -> str:
    """The option that lets a resumed run go on after `key` was reached: twice the limit, at least half again
    what was spent (`--max-cost 10`)."""
    if key == MAX_COST and budget.max_cost is not None:
        limit = max(budget.max_cost.amount * 2, spending.cost.known.amount * Decimal("1.5"))
        return f"--max-cost {math.ceil(limit)}"
    if key == MAX_TOKENS and budget.max_tokens is not None:
        return f"--max-tokens {max(budget.max_tokens * 2, math.ceil(spending.tokens * 1.5))}"
    seconds = max((budget.max_wall_time_s or 0) * 2, spending.wall_time_s * 1.5)
    return f"--max-wall-time {format_duration(math.ceil(seconds / 60) * 60.0)}"


# Parsing ----------------------------------------------------------------------------------------------------------
def parse_cost(text: str) -> Money:
    """A positive number of US dollars (`5`, `2.50`).

    Raises:
        BudgetValueError: Not a positive number.
    """
    message = f"{text!r} is not an amount of US dollars (a positive number such as 5 or 2.50)"
    try:
        value = Decimal(text.strip())
        if value > 0:
            return Money.usd(value)
    except (InvalidOperation, ValueError):
        pass
    raise BudgetValueError(message)


def parse_tokens(text: str) -> int:
    """A positive whole number of tokens (`2000000`, `2_000_000`).

    Raises:
        BudgetValueError: Not a positive whole number.
    """
    cleaned = text.strip().replace("_", "").replace(",", "")
    if not cleaned.isdigit() or int(cleaned) <= 0:
        raise BudgetValueError(f"{text!r} is not a number of tokens (a whole number of 1 or more)")
    return int(cleaned)


def parse_wall_time(text: str) -> float:
    """A positive duration (`90m`, `2h`, `7200`).

    Raises:
        BudgetValueError: Not a positive duration.
    """
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise BudgetValueError(f"{text!r} is not a duration (such as 90m, 2h or 7200)") from None
    if seconds <= 0:
        raise BudgetValueError(f"{text!r} is not a duration (such as 90m, 2h or 7200)")
    return seconds


def budget_from_attrs(attrs: Mapping[str, str], keys: tuple[str, ...] = BUDGET_KEYS) -> Budget:
    """The budget a graph's (or a node's) attributes set (`compile` refuses values that do not parse).

    Raises:
        BudgetValueError: A value does not parse.
    """
    cost, tokens, wall = (attrs.get(key, "").strip() if key in keys else "" for key in BUDGET_KEYS)
    return Budget(
        parse_cost(cost) if cost else None,
        parse_tokens(tokens) if tokens else None,
        parse_wall_time(wall) if wall else None,
    )


# The engine's view --------------------------------------------------------------------------------------------------
class BudgetGuard(Protocol):
    """What the engine asks between nodes and attempts (a run's spending meter answers)."""

    def session_stop(self) -> BudgetVerdict | None:
        """The session's budget that is reached (None: none is); nothing new may start once one is."""
        ...

    def node_stop(self, node_id: str) -> BudgetVerdict | None:
        """The node's own budget that is reached (None: none is, or it has none); the node fails then."""
        ...
