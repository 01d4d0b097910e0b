"""The run's end closes its run directory (writing what its background writer still holds): also when the run
raises; a checkpoint that could not be written then fails the run, naming the file."""

from __future__ import annotations

import pytest

from orchestra_core.engine.execution import StageCrashed
from orchestra_core.engine.memory import MemoryRunDirectories, MemoryRunDirectory
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.ports.run_directory import RunDirectoryError
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph

PIPELINE = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        plan; build
        start -> plan -> build -> done
    }
    """
)


class ClosingDirectory(MemoryRunDirectory):
    """Counts closes; `failure` is what close raises (a background write that failed)."""

    def __init__(self, root: str, failure: str = "") -> None:
        super().__init__(root)
        self.failure = failure
        self.closed = 0

    def close(self) -> None:
        self.closed += 1
        if self.failure:
            raise RunDirectoryError(self.failure)


class ClosingDirectories(MemoryRunDirectories):
    def __init__(self, failure: str = "") -> None:
        super().__init__()
        self.failure = failure

    def open(self, root: str) -> ClosingDirectory:
        if root not in self.opened:
            self.opened[root] = ClosingDirectory(root, self.failure)
        directory = self.opened[root]
        assert isinstance(directory, ClosingDirectory)
        return directory


def test_a_run_closes_its_directory_once_at_its_end() -> None:
    directories = ClosingDirectories()
    result = Harness(run_directory=directories).run(PIPELINE, root="/r")
    assert result.status is RunStatus.SUCCESS
    directory = directories.open("/r")
    assert directory.closed == 1


def test_a_checkpoint_the_directory_could_not_write_fails_the_run_naming_the_file() -> None:
    directories = ClosingDirectories("/r/checkpoint.json: cannot write the checkpoint: No space left on device")
    result = Harness(run_directory=directories).run(PIPELINE, root="/r")
    assert result.status is RunStatus.FAIL
    assert "/r/checkpoint.json: cannot write the checkpoint: No space left on device" in result.failure_reason


def test_a_run_that_raises_still_closes_its_directory() -> None:
    class Crashing(ScriptedCodergenBackend):
        def run(
            self, node: Node, prompt: str, context: Context, on_turn: OnTurn | None = None, **_: object
        ) -> str | Outcome:
            raise AssertionError("a bug in the backend")

    directories = ClosingDirectories()
    with pytest.raises(StageCrashed):
        Harness(backend=Crashing({}), run_directory=directories).run(PIPELINE, root="/r")
    assert directories.open("/r").closed == 1
