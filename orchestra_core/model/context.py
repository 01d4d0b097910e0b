"""The run Context (Attractor 5.1): a thread-safe key-value store shared by all stages."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from orchestra_core.model.conditions import stringify

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})  # values a snapshot can share, not copy


class Context:
    """Thread-safe key-value store plus an append-only run log."""

    def __init__(self, values: Mapping[str, Any] | None = None, logs: list[str] | None = None) -> None:
        self._values: dict[str, Any] = dict(values or {})
        self._logs: list[str] = list(logs or [])
        self._lock = threading.RLock()

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            self._values[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._values.get(key, default)

    def get_string(self, key: str, default: str = "") -> str:
        """The value as conditions see it (booleans lower-case); `default` when missing."""
        value = self.get(key)
        return default if value is None else stringify(value)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def append_log(self, entry: str) -> None:
        with self._lock:
            self._logs.append(entry)

    @property
    def logs(self) -> list[str]:
        with self._lock:
            return list(self._logs)

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of all values, safe to serialize."""
        with self._lock:
            return {k: v if type(v) in _IMMUTABLE else copy.deepcopy(v) for k, v in self._values.items()}

    def clone(self) -> Context:
        """An independent deep copy (for parallel branches)."""
        with self._lock:
            return Context(copy.deepcopy(self._values), list(self._logs))

    def remove(self, *keys: str) -> None:
        """Drop these keys (missing ones are ignored)."""
        with self._lock:
            for key in keys:
                self._values.pop(key, None)

    def apply_updates(self, updates: Mapping[str, Any]) -> None:
        with self._lock:
            self._values.update(updates)
