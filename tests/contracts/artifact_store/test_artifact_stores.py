"""The ArtifactStore contract run against the in-memory fake and the file-backed store."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.filesystem.artifact_store import FileBackedArtifactStore
from orchestra_core.testing.artifact_store import InMemoryArtifactStore
from tests.contracts.artifact_store.contract import ArtifactStoreContract


class TestInMemoryArtifactStore(ArtifactStoreContract):
    def make_store(self) -> InMemoryArtifactStore:
        return InMemoryArtifactStore()


class TestFileBackedArtifactStore(ArtifactStoreContract):
    @pytest.fixture(autouse=True)
    def _base(self, tmp_path: Path) -> None:
        self.base = tmp_path

    def make_store(self) -> FileBackedArtifactStore:
        return FileBackedArtifactStore(str(self.base))

    def test_only_large_artifacts_go_to_files(self) -> None:
        store = self.make_store()
        assert not store.store("small", "s", "x").is_file_backed
        assert store.store("big", "b", "x" * 200_000).is_file_backed
        assert sorted(p.name for p in (self.base / "artifacts").iterdir()) == ["big.json"]
        store.store("big", "b", "now small")
        assert list((self.base / "artifacts").iterdir()) == []
