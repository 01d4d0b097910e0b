"""Converters that make attrs fields immutable: maps become read-only views, sequences tuples."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

EMPTY_MAP: Mapping[Any, Any] = MappingProxyType({})


def frozen_map(value: Mapping[Any, Any] | None) -> Mapping[Any, Any]:
    """A read-only copy of `value` (None gives an empty map); a read-only view is kept as it is, and every
    empty map is one shared empty view (a long run's outcomes mostly have no context updates)."""
    if isinstance(value, MappingProxyType):
        return value
    return MappingProxyType(dict(value)) if value else EMPTY_MAP


def str_tuple(items: Iterable[str]) -> tuple[str, ...]:
    """The strings as a tuple."""
    return items if type(items) is tuple else tuple(items)


def any_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    """The items as a tuple."""
    return items if type(items) is tuple else tuple(items)
