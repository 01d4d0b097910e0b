"""Run directories kept in memory, for runs that need no files on disk (a library call, a test).

Stage files, checkpoints, the manifest and artifacts are kept as objects. Stage directories are only
names: tool nodes that write files into their stage directory need a run directory on disk
(`orchestra_adapters.filesystem.FileRunDirectories`).
"""

from __future__ import annotations

import copy
import posixpath
import threading
from typing import Any

from orchestra_core.model.checkpoint import Checkpoint, RunManifest
from orchestra_core.ports.artifact_store import ArtifactInfo, ArtifactNotFoundError, check_artifact
from orchestra_core.ports.clock import Clock, SystemClock


class MemoryArtifactStore:
    """Keeps every artifact in memory (deep copies, so callers cannot change what was stored)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
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


class MemoryRunDirectory:
    """A RunDirectory in memory. `checkpoints` keeps every checkpoint saved, in order; `files` holds the
    current round's stage files and `rounds` every round's (by round number), `round_checkpoints` each round's
    checkpoints."""

    def __init__(self, root: str, clock: Clock | None = None) -> None:
        self.root = root
        self.artifacts = MemoryArtifactStore(clock)
        self.files: dict[tuple[str, str], str] = {}
        self.rounds: dict[int, dict[tuple[str, str], str]] = {0: self.files}
        self.round = 0
        self.checkpoints: list[Checkpoint] = []
        self.round_checkpoints: dict[int, list[Checkpoint]] = {}
        self.manifest: RunManifest | None = None
        self._lock = threading.Lock()

    def stage_path(self, stage_key: str) -> str:
        base = self.root if self.round == 0 else posixpath.join(self.root, f"restart-{self.round}")
        return posixpath.join(base, stage_key)

    def stage_dir(self, stage_key: str) -> str:
        return self.stage_path(stage_key)

    def write_stage_file(self, stage_key: str, name: str, text: str) -> None:
        with self._lock:
            self.files[(stage_key, name)] = text

    def read_stage_file(self, stage_key: str, name: str) -> str | None:
        with self._lock:
            return self.files.get((stage_key, name))

    def remove_stage_file(self, stage_key: str, name: str) -> None:
        with self._lock:
            self.files.pop((stage_key, name), None)

    def save_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._lock:
            self.checkpoints.append(checkpoint)
            if self.round:
                self.round_checkpoints.setdefault(self.round, []).append(checkpoint)

    def load_checkpoint(self) -> Checkpoint | None:
        with self._lock:
            return self.checkpoints[-1] if self.checkpoints else None

    def close(self) -> None:
        """Nothing is pending in memory."""

    def write_manifest(self, manifest: RunManifest) -> None:
        self.manifest = manifest

    def read_manifest(self) -> RunManifest | None:
        return self.manifest

    def start_round(self, round_number: int) -> None:
        with self._lock:
            if round_number == self.round:
                return
            self.round = round_number
            self.files = self.rounds.setdefault(round_number, {})
        self.artifacts.clear()

    def stage_files(self, stage_key: str) -> dict[str, str]:
        """Every file of one stage, by name."""
        with self._lock:
            return {name: text for (key, name), text in self.files.items() if key == stage_key}


class MemoryRunDirectories:
    """A RunDirectoryFactory handing out MemoryRunDirectory objects, one per root, kept for inspection."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock
        self.opened: dict[str, MemoryRunDirectory] = {}
        self._lock = threading.Lock()

    def open(self, root: str) -> MemoryRunDirectory:
        with self._lock:
            if root not in self.opened:
                self.opened[root] = MemoryRunDirectory(root, self._clock)
            return self.opened[root]
