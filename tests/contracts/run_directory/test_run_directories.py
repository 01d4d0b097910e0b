"""The RunDirectory contracts run against the in-memory directories (the engine's and the fake) and the filesystem adapter."""

from __future__ import annotations

from orchestra_adapters.filesystem.run_directory import FileRunDirectories, FileRunDirectory
from orchestra_core.engine.memory import MemoryRunDirectories, MemoryRunDirectory
from orchestra_core.ports.run_directory import RunDirectory
from orchestra_core.testing.contracts.run_directory import RunDirectoryContract, RunDirectoryFactoryContract
from orchestra_core.testing.run_directory import InMemoryRunDirectories, InMemoryRunDirectory


class TestInMemoryRunDirectory(RunDirectoryContract):
    def make_directory(self) -> InMemoryRunDirectory:
        return InMemoryRunDirectory("/runs/r1")


class TestMemoryRunDirectory(RunDirectoryContract):
    def make_directory(self) -> MemoryRunDirectory:
        return MemoryRunDirectory("/runs/r1")


class TestFileRunDirectory(RunDirectoryContract):
    def make_directory(self) -> FileRunDirectory:
        return FileRunDirectory(str(self.tmp / "runs" / "r1"))

    def reopen(self, directory: RunDirectory) -> RunDirectory:
        return FileRunDirectory(directory.root)


class TestDurableFileRunDirectory(TestFileRunDirectory):
    """fsync'd writes behave the same."""

    def make_directory(self) -> FileRunDirectory:
        return FileRunDirectory(str(self.tmp / "runs" / "r1"), durable=True)


class TestInMemoryRunDirectories(RunDirectoryFactoryContract):
    def make_directories(self) -> InMemoryRunDirectories:
        return InMemoryRunDirectories()


class TestMemoryRunDirectories(RunDirectoryFactoryContract):
    def make_directories(self) -> MemoryRunDirectories:
        return MemoryRunDirectories()


class TestFileRunDirectories(RunDirectoryFactoryContract):
    def make_directories(self) -> FileRunDirectories:
        return FileRunDirectories()
