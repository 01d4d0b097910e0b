"""The RunDirectory contract (Attractor 5.6): stage files, checkpoints, manifests, archives; and its factory."""

from __future__ import annotations

from datetime import UTC, datetime

from orchestra_core.model.checkpoint import Checkpoint, OutcomeMap, RunManifest, RunStatus
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.artifact_store import ArtifactStore
from orchestra_core.ports.run_directory import RunDirectory, RunDirectoryFactory
from orchestra_core.testing.contracts._base import PortContract, cases

MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def checkpoint(**changes: object) -> Checkpoint:
    """A checkpoint with every field filled in; `changes` replace fields."""
    outcomes = (
        OutcomeMap()
        .with_outcome("plan", Outcome.success("planned"))
        .with_outcome(
            "gate", Outcome(StageStatus.SUCCESS, preferred_label="[A] Approve", suggested_next_ids=("ship",))
        )
    )
    fields: dict[str, object] = {
        "current_node": "gate",
        "completed_nodes": ("start", "plan", "gate"),
        "node_outcomes": outcomes,
        "node_retries": {"plan": 2},
        "context": {"graph.goal": "g", "count": 3, "flag": True, "items": [1, "two"], "nested": {"a": None}},
        "timestamp": MOMENT,
        "next_node": "ship",
        "logs": ("one", "two"),
        "workspace_snapshot": {"backend": "abc123"},
        "node_visits": 3,
    }
    fields.update(changes)
    return Checkpoint(**fields)  # type: ignore[arg-type]


class RunDirectoryContract(PortContract):
    """A runner implements `make_directory()` (a fresh, empty run directory) and, for a directory that
    outlives its process, `reopen(directory)` (the same root as a new process would see it)."""

    def make_directory(self) -> RunDirectory:
        """A fresh, empty run directory (under `self.tmp` for one on disk)."""
        raise NotImplementedError

    def reopen(self, directory: RunDirectory) -> RunDirectory:
        """The same run directory as a new process would open it; by default the object itself."""
        return directory

    def _loaded(self, directory: RunDirectory) -> Checkpoint:
        directory.close()
        loaded = self.reopen(directory).load_checkpoint()
        assert loaded is not None
        return loaded

    def test_is_a_run_directory_with_artifacts(self) -> None:
        directory = self.make_directory()
        assert isinstance(directory, RunDirectory)
        assert isinstance(directory.artifacts, ArtifactStore)

    def test_stage_files_round_trip(self) -> None:
        directory = self.make_directory()
        assert directory.read_stage_file("plan", "prompt.md") is None
        directory.write_stage_file("plan", "prompt.md", "Plan ✓\nline two")
        directory.write_stage_file("plan", "status.json", "{}")
        directory.close()  # stage files may be written in the background: another reader sees them after close
        assert self.reopen(directory).read_stage_file("plan", "prompt.md") == "Plan ✓\nline two"
        directory.write_stage_file("plan", "prompt.md", "replaced")
        assert directory.read_stage_file("plan", "prompt.md") == "replaced"
        directory.remove_stage_file("plan", "status.json")
        directory.remove_stage_file("plan", "status.json")
        assert directory.read_stage_file("plan", "status.json") is None

    def test_stage_dirs_are_under_the_root_and_named_by_stage_key(self) -> None:
        directory = self.make_directory()
        assert directory.stage_path("shared@a") == directory.stage_dir("shared@a")
        path = directory.stage_dir("shared@a")
        assert path.startswith(directory.root) and path.endswith("shared@a")

    def test_a_stage_file_removed_after_it_was_written_stays_removed(self) -> None:
        directory = self.make_directory()
        for round_trip in range(20):  # a write still pending must not land after the removal
            directory.write_stage_file("check", "status.json", f'{{"n": {round_trip}}}')
            directory.remove_stage_file("check", "status.json")
            assert directory.read_stage_file("check", "status.json") is None
        directory.close()
        assert self.reopen(directory).read_stage_file("check", "status.json") is None

    def test_the_last_write_of_a_stage_file_wins(self) -> None:
        directory = self.make_directory()
        for number in range(50):
            directory.write_stage_file("loop", "response.md", f"visit {number}")
        assert directory.read_stage_file("loop", "response.md") == "visit 49"
        directory.close()
        assert self.reopen(directory).read_stage_file("loop", "response.md") == "visit 49"

    def test_no_checkpoint_or_manifest_at_first(self) -> None:
        directory = self.make_directory()
        assert directory.load_checkpoint() is None
        assert directory.read_manifest() is None

    def test_checkpoint_round_trip_keeps_routing_data(self) -> None:
        directory = self.make_directory()
        directory.save_checkpoint(checkpoint())
        loaded = self._loaded(directory)
        expected = checkpoint()
        for name in (
            "current_node",
            "completed_nodes",
            "node_retries",
            "context",
            "timestamp",
            "next_node",
            "status",
            "failure_reason",
            "logs",
            "workspace_snapshot",
            "node_visits",
            "loop_restarts",
        ):
            assert getattr(loaded, name) == getattr(expected, name), name
        gate = loaded.node_outcomes["gate"]
        assert (gate.status, gate.preferred_label, gate.suggested_next_ids) == (
            StageStatus.SUCCESS,
            "[A] Approve",
            ("ship",),
        )
        assert loaded.node_outcomes["plan"].notes == "planned"
        assert list(loaded.node_outcomes) == ["plan", "gate"]

    def test_the_latest_checkpoint_wins(self) -> None:
        directory = self.make_directory()
        directory.save_checkpoint(checkpoint())
        final = checkpoint(next_node=None, status=RunStatus.FAIL, failure_reason="boom", current_node="ship")
        directory.save_checkpoint(final)
        loaded = self._loaded(directory)
        assert (loaded.current_node, loaded.status, loaded.failure_reason, loaded.next_node) == (
            "ship",
            RunStatus.FAIL,
            "boom",
            None,
        )

    def test_the_directory_itself_sees_each_checkpoint_at_once_and_stays_usable_after_close(self) -> None:
        directory = self.make_directory()
        for node in ("plan", "gate", "ship"):
            directory.save_checkpoint(checkpoint(current_node=node))
            loaded = directory.load_checkpoint()
            assert loaded is not None and loaded.current_node == node
        directory.close()
        directory.close()
        directory.save_checkpoint(checkpoint(current_node="again"))
        assert self._loaded(directory).current_node == "again"

    def test_a_finished_checkpoint_is_there_for_a_new_reader_without_close(self) -> None:
        directory = self.make_directory()
        directory.save_checkpoint(checkpoint(current_node="plan"))
        directory.save_checkpoint(checkpoint(current_node="ship", next_node=None, status=RunStatus.SUCCESS))
        loaded = self.reopen(directory).load_checkpoint()
        assert loaded is not None and (loaded.current_node, loaded.status) == ("ship", RunStatus.SUCCESS)

    def test_manifest_round_trip(self) -> None:
        directory = self.make_directory()
        manifest = RunManifest(
            "s-1", "pipe", "goal", "label", "/p/pipe.dot", directory.root, MOMENT, {"k": "v"}, (MOMENT,)
        )
        directory.write_manifest(manifest)
        assert self.reopen(directory).read_manifest() == manifest

    def test_a_new_round_starts_with_no_stage_files_or_artifacts(self) -> None:
        directory = self.make_directory()
        directory.write_stage_file("plan", "prompt.md", "old")
        directory.artifacts.store("a1", "notes", {"v": 1})
        directory.save_checkpoint(checkpoint())
        directory.start_round(1)
        assert directory.read_stage_file("plan", "prompt.md") is None
        assert not directory.artifacts.has("a1")
        assert directory.load_checkpoint() is not None
        directory.write_stage_file("plan", "prompt.md", "new")
        assert directory.read_stage_file("plan", "prompt.md") == "new"
        assert "restart-1" in directory.stage_dir("plan") and directory.stage_dir("plan").endswith("plan")

    def test_the_root_checkpoint_stays_the_latest_across_rounds(self) -> None:
        directory = self.make_directory()
        directory.save_checkpoint(checkpoint())
        directory.start_round(2)
        directory.save_checkpoint(checkpoint(current_node="", completed_nodes=(), loop_restarts=2))
        loaded = self._loaded(directory)
        assert (loaded.current_node, loaded.loop_restarts) == ("", 2)

    def test_starting_the_current_round_again_keeps_its_files(self) -> None:
        directory = self.make_directory()
        directory.start_round(1)
        directory.write_stage_file("plan", "prompt.md", "round one")
        directory.start_round(1)
        assert directory.read_stage_file("plan", "prompt.md") == "round one"
        reopened = self.reopen(directory)
        reopened.start_round(1)
        assert reopened.read_stage_file("plan", "prompt.md") == "round one"

    @cases(**{str(size): (size,) for size in (0, 1, 500)})
    def test_growing_checkpoints_stay_exact(self, size: int) -> None:
        directory = self.make_directory()
        outcomes = OutcomeMap()
        completed: list[str] = []
        for index in range(size + 1):
            node = f"n{index % 7}"
            outcomes = outcomes.with_outcome(node, Outcome(StageStatus.SUCCESS, notes=f"visit {index}"))
            completed.append(node)
            directory.save_checkpoint(
                checkpoint(node_outcomes=outcomes, completed_nodes=tuple(completed), current_node=node)
            )
        loaded = self._loaded(directory)
        assert loaded.completed_nodes == tuple(completed)
        assert {k: v.notes for k, v in loaded.node_outcomes.items()} == {
            k: v.notes for k, v in outcomes.items()
        }


class RunDirectoryFactoryContract(PortContract):
    """A runner implements `make_directories()`: a factory opening run directories under `self.tmp`."""

    def make_directories(self) -> RunDirectoryFactory:
        """A new factory; roots passed to it lie under `self.tmp`."""
        raise NotImplementedError

    def test_is_a_run_directory_factory(self) -> None:
        assert isinstance(self.make_directories(), RunDirectoryFactory)

    def test_opens_a_run_directory_at_the_root(self) -> None:
        root = str(self.tmp / "runs" / "r1")
        directory = self.make_directories().open(root)
        assert isinstance(directory, RunDirectory) and directory.root == root
        assert directory.load_checkpoint() is None

    def test_one_root_is_one_directory_and_roots_are_apart(self) -> None:
        factory = self.make_directories()
        one, two = str(self.tmp / "runs" / "one"), str(self.tmp / "runs" / "two")
        writing = factory.open(one)
        writing.write_stage_file("plan", "prompt.md", "first")
        writing.close()  # stage files may be written in the background: another opener sees them after close
        saving = factory.open(one)
        saving.save_checkpoint(checkpoint())
        saving.close()
        assert factory.open(one).read_stage_file("plan", "prompt.md") == "first"
        assert factory.open(one).load_checkpoint() is not None
        assert factory.open(two).read_stage_file("plan", "prompt.md") is None
        assert factory.open(two).load_checkpoint() is None
