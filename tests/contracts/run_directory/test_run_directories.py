"""The RunDirectory contracts run against the in-memory directories (the engine's and the fake) and the filesystem adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.filesystem.run_directory import FileRunDirectories, FileRunDirectory
from orchestra_core.engine.memory import MemoryRunDirectories, MemoryRunDirectory
from orchestra_core.ports.run_directory import RunDirectory, RunDirectoryError
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

    def test_stage_path_creates_nothing_and_stage_dir_puts_every_queued_file_on_disk(self) -> None:
        directory = self.make_directory()
        root = self.tmp / "runs" / "r1"
        assert not Path(directory.stage_path("plan")).exists()
        for number in range(30):
            directory.write_stage_file(f"node{number}", "prompt.md", f"prompt {number}")
        path = Path(directory.stage_dir("plan"))
        assert path.is_dir() and path == root / "plan"
        assert [(root / f"node{n}" / "prompt.md").read_text() for n in range(30)] == [f"prompt {n}" for n in range(30)]

    def test_a_file_written_by_others_in_a_stage_directory_handed_out_is_read(self) -> None:
        directory = self.make_directory()
        directory.remove_stage_file("tool", "status.json")  # the engine, before an attempt
        Path(directory.stage_dir("tool"), "status.json").write_text('{"outcome": "success"}')  # the command
        assert directory.read_stage_file("tool", "status.json") == '{"outcome": "success"}'
        directory.remove_stage_file("tool", "status.json")  # the next attempt
        assert directory.read_stage_file("tool", "status.json") is None
        Path(directory.stage_dir("tool"), "status.json").write_text("{}")
        assert directory.read_stage_file("tool", "status.json") == "{}"

    def test_a_file_left_by_an_earlier_process_is_read_until_removed(self) -> None:
        earlier = self.make_directory()
        earlier.write_stage_file("plan", "status.json", '{"outcome": "fail"}')
        earlier.close()
        directory = self.reopen(earlier)
        assert directory.read_stage_file("plan", "status.json") == '{"outcome": "fail"}'
        directory.remove_stage_file("plan", "status.json")
        assert directory.read_stage_file("plan", "status.json") is None
        assert not (self.tmp / "runs" / "r1" / "plan" / "status.json").exists()

    def test_a_stage_file_that_cannot_be_written_fails_a_later_call_naming_it(self) -> None:
        directory = self.make_directory()
        root = self.tmp / "runs" / "r1"
        root.mkdir(parents=True)
        (root / "plan").write_text("a file where the stage directory should be")
        directory.write_stage_file("plan", "prompt.md", "text")
        with pytest.raises(RunDirectoryError, match=r"plan/prompt\.md"):
            directory.close()
        directory.close()  # raised once


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
