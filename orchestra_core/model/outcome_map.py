"""OutcomeMap: the node -> Outcome map of a checkpoint, immutable, derived from its predecessor in O(1)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any

from orchestra_core.model.outcome import Outcome


class _Line:
    """The storage a line of maps shares, each derived from the newest one: every key's values by version,
    the keys in the order they were first set, and which key each version changed.

    Version 0 is the map the line started from; version v > 0 set the key `changes[v - 1]`.
    """

    __slots__ = ("born", "changes", "order", "values")

    def __init__(self, data: Mapping[str, Outcome]) -> None:
        self.values: dict[str, list[tuple[int, Outcome]]] = {key: [(0, value)] for key, value in data.items()}
        self.order: list[str] = list(self.values)
        self.born: list[int] = [0] * len(self.order)  # the version at which order[i] was first set
        self.changes: list[str] = []

    @property
    def newest(self) -> int:
        return len(self.changes)

    def add(self, key: str, value: Outcome) -> int:
        version = self.newest + 1
        entries = self.values.get(key)
        if entries is None:
            self.values[key] = [(version, value)]
            self.order.append(key)
            self.born.append(version)
        else:
            entries.append((version, value))
        self.changes.append(key)
        return version


class OutcomeMap(Mapping[str, Outcome]):
    """An immutable node -> Outcome map that names what changed since an earlier map it was derived from.

    A run derives one map per node (`with_outcome`), so deriving must not copy: maps derived one from the
    newest share a `_Line` that keeps each key's values by version, and a map is a line and a version. Setting a
    key of the newest map costs O(1); reading one is O(1) in the map a run holds (the newest, or nearly),
    O(log visits of that node) in older ones; deriving from an older map copies it into a line of its own.
    `changes_since` names the keys set since an earlier map of the same line, so a writer that encoded that
    map re-encodes only those (issue 16: copying the map, and re-encoding it whole, made the cost per node
    grow with the run).
    """

    __slots__ = ("_line", "_version")

    def __init__(self, data: Mapping[str, Outcome] | None = None) -> None:
        self._line = _Line(data or {})
        self._version = 0

    def with_outcome(self, node_id: str, outcome: Outcome) -> OutcomeMap:
        """A new map with one entry set; insertion order is kept for existing keys."""
        line = self._line
        if self._version != line.newest:  # deriving from an older map: it starts a line of its own
            line = _Line(self)
        derived = OutcomeMap.__new__(OutcomeMap)
        derived._version = line.add(node_id, outcome)
        derived._line = line
        return derived

    def changes_since(self, earlier: OutcomeMap) -> list[str] | None:
        """The keys set since `earlier`, oldest first (a key set twice is named twice), when this map was derived
        from it through maps of the same line; None when it was not (then compare the maps whole)."""
        if earlier._line is not self._line or earlier._version > self._version:
            return None
        return self._line.changes[earlier._version : self._version]

    def __getitem__(self, key: str) -> Outcome:
        entries = self._line.values[key]
        version, value = entries[-1]
        if version <= self._version:
            return value
        index = bisect_right(entries, self._version, key=lambda entry: entry[0])
        if index == 0:
            raise KeyError(key)
        return entries[index - 1][1]

    def __contains__(self, key: object) -> bool:
        entries = self._line.values.get(key)  # type: ignore[call-overload]
        return entries is not None and entries[0][0] <= self._version

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return islice(self._line.order, len(self))

    def __len__(self) -> int:
        line = self._line
        if self._version == line.newest:
            return len(line.order)
        return bisect_right(line.born, self._version)

    def __repr__(self) -> str:
        return f"OutcomeMap({dict(self.items())!r})"
