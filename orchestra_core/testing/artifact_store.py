"""InMemoryArtifactStore: the engine's in-memory ArtifactStore on a manual clock (the file-backed one is
in orchestra_adapters.filesystem)."""

from __future__ import annotations

from orchestra_core.engine.memory import MemoryArtifactStore
from orchestra_core.ports.clock import Clock
from orchestra_core.testing.clock import ManualClock


class InMemoryArtifactStore(MemoryArtifactStore):
    """Keeps every artifact in memory (deep copies); `stored_at` comes from a ManualClock unless a clock is given."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock or ManualClock())
