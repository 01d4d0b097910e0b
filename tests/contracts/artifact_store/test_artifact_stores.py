"""The ArtifactStore contract run against the in-memory stores (the engine's and the fake) and the file-backed one."""

from __future__ import annotations

from orchestra_adapters.filesystem.artifact_store import FileBackedArtifactStore
from orchestra_core.engine.memory import MemoryArtifactStore
from orchestra_core.testing.artifact_store import InMemoryArtifactStore
from orchestra_core.testing.contracts.artifact_store import ArtifactStoreContract


class TestInMemoryArtifactStore(ArtifactStoreContract):
    def make_store(self) -> InMemoryArtifactStore:
        return InMemoryArtifactStore()


class TestMemoryArtifactStore(ArtifactStoreContract):
    def make_store(self) -> MemoryArtifactStore:
        return MemoryArtifactStore()


class TestFileBackedArtifactStore(ArtifactStoreContract):
    def make_store(self) -> FileBackedArtifactStore:
        return FileBackedArtifactStore(str(self.tmp))

    def test_only_large_artifacts_go_to_files(self) -> None:
        store = self.make_store()
        assert not store.store("small", "s", "x").is_file_backed
        assert store.store("big", "b", "x" * 200_000).is_file_backed
        assert sorted(p.name for p in (self.tmp / "artifacts").iterdir()) == ["big.json"]
        store.store("big", "b", "now small")
        assert list((self.tmp / "artifacts").iterdir()) == []
