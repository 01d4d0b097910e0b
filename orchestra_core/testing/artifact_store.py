"""An in-memory ArtifactStore (never file-backed); the file-backed one is in orchestra_adapters.filesystem."""

from __future__ import annotations

import copy
import threading
from typing import Any

from orchestra_core.ports.artifact_store import ArtifactInfo, ArtifactNotFoundError, check_artifact
from orchestra_core.ports.clock import Clock
from orchestra_core.testing.clock import ManualClock


class InMemoryArtifactStore:
    """Keeps every artifact in memory (deep copies, so callers cannot change what was stored)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or ManualClock()
        self._items: dict[str, tuple[ArtifactInfo, Any]] = {}
        self._lock = threading.Lock()

    def store(self, artifact_id: str, name: str, data: Any) -> ArtifactInfo:
        size = check_artifact(artifact_id, data)
        info = ArtifactInfo(artifact_id, name, size, self._clock.now(), is_file_backed=False)
        with self._lock:
            self._items[artifact_id] = (info, copy.deepcopy(data))
        return info

    def retrieve(self, artifact_id: str) -> Any:
        with self._lock:
            if artifact_id not in self._items:
                raise ArtifactNotFoundError(artifact_id)
            return copy.deepcopy(self._items[artifact_id][1])

    def has(self, artifact_id: str) -> bool:
        with self._lock:
            return artifact_id in self._items

    def list(self) -> list[ArtifactInfo]:
        with self._lock:
            return [info for info, _ in self._items.values()]

    def remove(self, artifact_id: str) -> None:
        with self._lock:
            self._items.pop(artifact_id, None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
