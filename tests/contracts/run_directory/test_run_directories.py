"""The RunDirectory contracts run against the in-memory directories (the engine's and the fake) and the filesystem adapter."""

from __future__ import annotations

from orchestra_adapters.filesystem.run_directory import FileRunDirectories, FileRunDirectory
from orchestra_core.engine.memory import MemoryRunDirectories, MemoryRunDirectory
from orchestra_core.ports.run_directory import RunDirectory
from orchestra_core.testing.contracts.run_directory import (
    RunDirectoryContract,
    RunDirectoryFactoryContract,
    checkpoint,
)
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

    def test_a_later_round_is_under_restart_n_with_its_own_checkpoint(self) -> None:
        directory = self.make_directory()
        directory.write_stage_file("plan", "prompt.md", "round 0")
        directory.save_checkpoint(checkpoint(current_node="plan"))
        directory.start_round(1)
        directory.write_stage_file("plan", "prompt.md", "round 1")
        directory.save_checkpoint(checkpoint(current_node="", completed_nodes=(), loop_restarts=1))
        directory.close()
        root = self.tmp / "runs" / "r1"
        assert (root / "plan" / "prompt.md").read_text() == "round 0"
        assert (root / "restart-1" / "plan" / "prompt.md").read_text() == "round 1"
        assert (root / "restart-1" / "checkpoint.json").read_bytes() == (root / "checkpoint.json").read_bytes()
        assert not (root / "restart-1" / "manifest.json").exists()


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
