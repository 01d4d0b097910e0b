"""CheckpointSink port: somewhere besides the run directory that must receive every checkpoint."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.checkpoint import Checkpoint


@runtime_checkable
class CheckpointSink(Protocol):
    """Receives each checkpoint as the engine saves it (the session store is one).

    A sink that raises aborts the run with a clear error: a checkpoint that could not be kept would make
    the run impossible to resume from there.
    """

    def save(self, checkpoint: Checkpoint) -> None:
        """Persist one checkpoint durably."""
        ...
