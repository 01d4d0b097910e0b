"""In-memory run directories for tests: the engine's, with artifacts timed by a manual clock."""

from __future__ import annotations

from orchestra_core.engine.memory import MemoryRunDirectories, MemoryRunDirectory
from orchestra_core.ports.clock import Clock
from orchestra_core.testing.clock import ManualClock


class InMemoryRunDirectory(MemoryRunDirectory):
    """A RunDirectory in memory: `files` (the current round's), `rounds`, `checkpoints` (every one saved, in
    order), `round_checkpoints` and `manifest` are there to assert on."""

    def __init__(self, root: str, clock: Clock | None = None) -> None:
        super().__init__(root, clock or ManualClock())


class InMemoryRunDirectories(MemoryRunDirectories):
    """A RunDirectoryFactory handing out InMemoryRunDirectory objects, one per root, kept in `opened`."""

    opened: dict[str, InMemoryRunDirectory]  # type: ignore[assignment]

    def open(self, root: str) -> InMemoryRunDirectory:
        with self._lock:
            if root not in self.opened:
                self.opened[root] = InMemoryRunDirectory(root, self._clock)
            return self.opened[root]
