"""The RunDirectory contract run against the in-memory fake and the filesystem adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.filesystem.run_directory import FileRunDirectory
from orchestra_core.ports.run_directory import RunDirectory
from orchestra_core.testing.run_directory import InMemoryRunDirectory
from tests.contracts.run_directory.contract import RunDirectoryContract


class TestInMemoryRunDirectory(RunDirectoryContract):
    def make_directory(self) -> InMemoryRunDirectory:
        return InMemoryRunDirectory("/runs/r1")

    def reopen(self, directory: RunDirectory) -> RunDirectory:
        return directory


class TestFileRunDirectory(RunDirectoryContract):
    @pytest.fixture(autouse=True)
    def _root(self, tmp_path: Path) -> None:
        self.root = tmp_path / "runs" / "r1"

    def make_directory(self) -> FileRunDirectory:
        return FileRunDirectory(str(self.root))

    def reopen(self, directory: RunDirectory) -> RunDirectory:
        return FileRunDirectory(directory.root)
