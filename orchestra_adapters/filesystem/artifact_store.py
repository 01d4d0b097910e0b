"""FileBackedArtifactStore: small artifacts in memory, large ones as `{base_dir}/artifacts/{id}.json`."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import Any

from orchestra_adapters.filesystem.atomic import atomic_write
from orchestra_core.ports.artifact_store import (
    FILE_BACKING_THRESHOLD,
    ArtifactInfo,
    ArtifactNotFoundError,
    check_artifact,
)
from orchestra_core.ports.clock import Clock, SystemClock

_IN_FILE = object()


class FileBackedArtifactStore:
    """The Attractor 5.5 artifact store with a filesystem directory for artifacts above the threshold."""

    def __init__(self, base_dir: str, *, clock: Clock | None = None, threshold: int = FILE_BACKING_THRESHOLD) -> None:
        self.base_dir = base_dir
        self._clock = clock or SystemClock()
        self._threshold = threshold
        self._items: dict[str, tuple[ArtifactInfo, Any]] = {}
        self._lock = threading.Lock()

    def _path(self, artifact_id: str) -> str:
        return os.path.join(self.base_dir, "artifacts", f"{artifact_id}.json")

    def store(self, artifact_id: str, name: str, data: Any) -> ArtifactInfo:
        size = check_artifact(artifact_id, data)
        file_backed = size > self._threshold
        info = ArtifactInfo(artifact_id, name, size, self._clock.now(), is_file_backed=file_backed)
        if file_backed:
            os.makedirs(os.path.dirname(self._path(artifact_id)), exist_ok=True)
            atomic_write(self._path(artifact_id), json.dumps(data, ensure_ascii=False).encode("utf-8"))
        else:
            data = json.loads(json.dumps(data))  # a private copy in the form a file round trip would give
        with self._lock:
            previous = self._items.get(artifact_id)
            self._items[artifact_id] = (info, _IN_FILE if file_backed else data)
        if previous is not None and previous[0].is_file_backed and not file_backed:
            _unlink(self._path(artifact_id))
        return info

    def retrieve(self, artifact_id: str) -> Any:
        with self._lock:
            found = self._items.get(artifact_id)
        if found is None:
            raise ArtifactNotFoundError(artifact_id)
        info, data = found
        if not info.is_file_backed:
            return json.loads(json.dumps(data))
        with open(self._path(artifact_id), encoding="utf-8") as handle:
            return json.load(handle)

    def has(self, artifact_id: str) -> bool:
        with self._lock:
            return artifact_id in self._items

    def list(self) -> list[ArtifactInfo]:
        with self._lock:
            return [info for info, _ in self._items.values()]

    def remove(self, artifact_id: str) -> None:
        with self._lock:
            found = self._items.pop(artifact_id, None)
        if found is not None and found[0].is_file_backed:
            _unlink(self._path(artifact_id))

    def clear(self) -> None:
        with self._lock:
            removed = list(self._items.items())
            self._items.clear()
        for artifact_id, (info, _) in removed:
            if info.is_file_backed:
                _unlink(self._path(artifact_id))


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
