"""DOT attribute values: typed parsing (integers, floats, booleans, durations, lists); durations as text."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Literal

_NUMBER_RE = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)\s*$")
_DURATION_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})
DurationStyle = Literal["exact", "readable", "seconds"]


def parse_duration(text: str) -> float:
    """Parse `250ms`, `900s`, `15m`, `2h`, `1d` (or a bare number of seconds) into seconds.

    Raises:
        ValueError: The text is not a duration.
    """
    match = _DURATION_RE.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    amount, unit = match.groups()
    return float(amount) * _UNIT_SECONDS[unit]


def format_duration(seconds: float | None, style: DurationStyle = "exact") -> str:
    """Render a duration; empty for None (not known).

    Args:
        seconds: The duration.
        style: `exact`, the shortest form that parses back to the same value, as DOT attributes and
            messages take it (`1500ms`, `90s`, `15m`); `readable`, rounded for tables (`840ms`, `4.2s`,
            `3m 05s`, `2h 01m`); `seconds`, rounded but never past seconds, for progress lines (`840ms`,
            `4.2s`, `185.0s`).
    """
    if seconds is None:
        return ""
    if style == "exact":
        return _exact_duration(seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60 or style == "seconds":
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _exact_duration(seconds: float) -> str:
    millis = round(seconds * 1000)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if millis and millis % size == 0:
            return f"{millis // size}{unit}"
    return f"{millis}ms"


def parse_bool(text: str) -> bool:
    """Parse `true`/`false` (also yes/no, on/off, 1/0; case-insensitive).

    Raises:
        ValueError: The text is not a boolean.
    """
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"not a boolean: {text!r}")


def parse_int(text: str) -> int:
    """Parse an optionally signed decimal integer.

    Raises:
        ValueError: The text is not an integer.
    """
    return int(text.strip(), 10)


def parse_number(text: str) -> Fraction:
    """Parse a decimal number (`2`, `-3`, `2.0`, `0.5`, `.5`) exactly: `2.0` is 2, `0.1` is one tenth.

    Exponents, `nan` and `inf` are not numbers here (DOT writes none of them).

    Raises:
        ValueError: The text is not a decimal number.
    """
    if _NUMBER_RE.match(text) is None:
        raise ValueError(f"not a number: {text!r}")
    return Fraction(text.strip())


def parse_float(text: str) -> float:
    """Parse a decimal number (see `parse_number`).

    Raises:
        ValueError: The text is not a number.
    """
    return float(parse_number(text))


def parse_list(text: str) -> tuple[str, ...]:
    """Split a comma (or whitespace) separated list, dropping empty items."""
    return tuple(item for item in re.split(r"[,\s]+", text) if item)

