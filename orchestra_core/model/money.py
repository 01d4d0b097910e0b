"""Money in US dollars as a whole number of nanodollars, so that totals never drift; and totals of costs some of
which are unknown."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_CEILING, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

from attrs import frozen

NANOS_PER_USD = 1_000_000_000
_NANO = Decimal(1) / NANOS_PER_USD
_LARGEST = Decimal(10) ** 12  # dollars: no cost or budget comes near it; larger is a mistake


@frozen(order=True)
class Money:
    """An amount of US dollars, exact to the nanodollar (a billionth of a dollar).

    Sums of Money are integer sums: adding the costs of a million turns in any order or grouping gives the same
    total. A float enters only through `usd()`, read as its shortest decimal form (`0.1` is one tenth).
    """

    nanos: int = 0

    @classmethod
    def usd(cls, amount: Decimal | int | float | str) -> Money:
        """The amount in dollars, rounded half-even to the nanodollar.

        Raises:
            ValueError: Not a finite number, or beyond a trillion dollars.
        """
        value = Decimal(repr(amount)) if isinstance(amount, float) else Decimal(amount)
        if not value.is_finite() or abs(value) > _LARGEST:
            raise ValueError(f"not an amount of money: {amount!r}")
        return cls(int((value * NANOS_PER_USD).to_integral_value(ROUND_HALF_EVEN)))

    @property
    def amount(self) -> Decimal:
        """The amount in dollars, exactly."""
        return Decimal(self.nanos) * _NANO

    def to_float(self) -> float:
        """The nearest float (for JSON and stored records; never summed as floats)."""
        return float(self.amount)

    def __add__(self, other: Money) -> Money:
        return Money(self.nanos + other.nanos)

    def __sub__(self, other: Money) -> Money:
        return Money(self.nanos - other.nanos)

    def __bool__(self) -> bool:
        return self.nanos != 0

    def __str__(self) -> str:
        return format_usd(self)

    @staticmethod
    def sum(amounts: Iterable[Money]) -> Money:
        """The exact total."""
        return Money(sum(amount.nanos for amount in amounts))


ZERO = Money()


def format_usd(money: Money) -> str:
    """`$12.35` from a dollar up, `$0.0123` from a cent (four decimals), `$0.000123` below, `$0.00` for nothing."""
    if money.nanos == 0:
        return "$0.00"
    sign, amount = ("-", -money.amount) if money.nanos < 0 else ("", money.amount)
    if amount >= 1:
        return f"{sign}${amount.quantize(Decimal('0.01'), ROUND_HALF_UP):,.2f}"
    if amount >= Decimal("0.01"):
        return f"{sign}${_trimmed(amount, 4)}"
    text = _trimmed(amount, 6)
    return f"{sign}${text}" if Decimal(text) else f"{sign}<$0.000001"


def _trimmed(amount: Decimal, places: int) -> str:
    """`amount` with `places` decimals, trailing zeros dropped down to two decimals."""
    text = f"{amount:.{places}f}".rstrip("0")
    whole, _, fraction = text.partition(".")
    return f"{whole}.{fraction.ljust(2, '0')}"


def whole_dollars_above(money: Money) -> int:
    """The smallest whole number of dollars at or above the amount (at least 1)."""
    return max(1, int(money.amount.to_integral_value(ROUND_CEILING)))


@frozen
class CostTally:
    """A total of costs, some of which may be unknown (a model without a price): the known part, and how many
    costs it lacks. Unknown costs are never counted as zero; `complete` says whether the total is whole.

    Attributes:
        known: The sum of the known costs.
        unknown: How many costs were unknown.
    """

    known: Money = ZERO
    unknown: int = 0

    @property
    def complete(self) -> bool:
        return self.unknown == 0

    def add(self, cost: Money | None) -> CostTally:
        """This tally with one more cost (None: unknown)."""
        if cost is None:
            return CostTally(self.known, self.unknown + 1)
        return CostTally(self.known + cost, self.unknown)

    def __add__(self, other: CostTally) -> CostTally:
        return CostTally(self.known + other.known, self.unknown + other.unknown)

    def json_value(self, *, counted: int | None = None) -> float | None:
        """`cost_usd` in JSON: the known part in dollars; null when nothing of it is known (every cost unknown)."""
        if self.unknown and not self.known and (counted is None or counted <= self.unknown):
            return None
        return self.known.to_float()

    def text(self) -> str:
        """`$1.23`, `$1.23 + unknown (2 turns)`, or `unknown`."""
        if self.complete:
            return format_usd(self.known)
        turns = f"{self.unknown} turn{'s' if self.unknown != 1 else ''}"
        if not self.known:
            return f"unknown ({turns})"
        return f"{format_usd(self.known)} + unknown ({turns})"


def money_json(money: Money | None) -> Any:
    """A cost as JSON: dollars as a number, null when unknown."""
    return None if money is None else money.to_float()
