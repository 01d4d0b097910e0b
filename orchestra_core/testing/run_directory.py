"""In-memory run directories for tests: stage files, checkpoints and manifests kept as objects."""

from __future__ import annotations

import posixpath
import threading

from orchestra_core.model.checkpoint import Checkpoint, RunManifest
from orchestra_core.ports.clock import Clock
from orchestra_core.testing.artifact_store import InMemoryArtifactStore


class InMemoryRunDirectory:
    """A RunDirectory in memory. `checkpoints` keeps every checkpoint saved, in order."""

    def __init__(self, root: str, clock: Clock | None = None) -> None:
        self.root = root
        self.artifacts = InMemoryArtifactStore(clock)
        self.files: dict[tuple[str, str], str] = {}
        self.checkpoints: list[Checkpoint] = []
        self.manifest: RunManifest | None = None
        self.archives: dict[str, dict[tuple[str, str], str]] = {}
        self._lock = threading.Lock()

    def stage_dir(self, stage_key: str) -> str:
        return posixpath.join(self.root, stage_key)

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

    def load_checkpoint(self) -> Checkpoint | None:
        with self._lock:
            return self.checkpoints[-1] if self.checkpoints else None

    def write_manifest(self, manifest: RunManifest) -> None:
        self.manifest = manifest

    def read_manifest(self) -> RunManifest | None:
        return self.manifest

    def archive_stages(self, name: str) -> None:
        with self._lock:
            self.archives[name] = dict(self.files)
            self.files.clear()
        self.artifacts.clear()

    def stage_files(self, stage_key: str) -> dict[str, str]:
        """Every file of one stage, by name (for assertions)."""
        with self._lock:
            return {name: text for (key, name), text in self.files.items() if key == stage_key}


class InMemoryRunDirectories:
    """A RunDirectoryFactory handing out InMemoryRunDirectory objects, one per root, kept for inspection."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock
        self.opened: dict[str, InMemoryRunDirectory] = {}
        self._lock = threading.Lock()

    def open(self, root: str) -> InMemoryRunDirectory:
        with self._lock:
            if root not in self.opened:
                self.opened[root] = InMemoryRunDirectory(root, self._clock)
            return self.opened[root]
