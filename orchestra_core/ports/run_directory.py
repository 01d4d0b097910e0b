"""RunDirectory port: a run's logs root (Attractor 5.6): checkpoint, manifest, stage files, artifacts."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.checkpoint import Checkpoint, RunManifest
from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.artifact_store import ArtifactStore

CHECKPOINT_FILE = "checkpoint.json"
MANIFEST_FILE = "manifest.json"
STATUS_FILE = "status.json"


class RunDirectoryError(OrchestraError):
    """The run directory holds something unreadable (a malformed checkpoint or manifest) or cannot be
    written; the message names the file."""


@runtime_checkable
class RunDirectory(Protocol):
    """One run's directory. Stage keys are node ids (a node reached by two parallel branches gets
    `node@branch`); stage file names are plain names such as `prompt.md`. A new directory is in round 0.

    Attributes:
        root: The logs root, as given.
        artifacts: The run's artifact store (file-backed under `artifacts/`).
    """

    @property
    def root(self) -> str: ...

    @property
    def artifacts(self) -> ArtifactStore: ...

    def stage_path(self, stage_key: str) -> str:
        """Where the stage's directory is (or will be), without creating it."""
        ...

    def stage_dir(self, stage_key: str) -> str:
        """The stage's directory path, created if missing, with every stage file written so far on disk:
        the directory to hand to a command or an agent that reads or writes there."""
        ...

    def write_stage_file(self, stage_key: str, name: str, text: str) -> None:
        """Write a stage file whole. It may reach the disk shortly after this returns (`stage_dir`, `close`
        and a read or removal of the same file wait for it); a failed write is raised by a later call."""
        ...

    def read_stage_file(self, stage_key: str, name: str) -> str | None:
        """A stage file's text (the last written), or None when it does not exist."""
        ...

    def remove_stage_file(self, stage_key: str, name: str) -> None:
        """Delete a stage file (no error when absent), after any write of it still pending."""
        ...

    def save_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Replace `checkpoint.json` atomically (a crash leaves the old or the new one, never a mix).

        A running checkpoint may be written in the background, shortly after this returns (a newer one
        may replace it before it is written); a finished one is written, and made durable, before this
        returns. `load_checkpoint` and `close` see every checkpoint saved before them.

        Raises:
            RunDirectoryError: It, or an earlier checkpoint written in the background, cannot be written.
        """
        ...

    def close(self) -> None:
        """The run's end: write whatever is pending and stop background work. Saving again later is allowed.

        Raises:
            RunDirectoryError: A checkpoint or stage file saved earlier could not be written (the message names
                the file).
        """
        ...

    def load_checkpoint(self) -> Checkpoint | None:
        """The saved checkpoint, or None when there is none.

        Raises:
            RunDirectoryError: `checkpoint.json` exists but is malformed.
        """
        ...

    def write_manifest(self, manifest: RunManifest) -> None:
        """Replace `manifest.json` atomically."""
        ...

    def read_manifest(self) -> RunManifest | None:
        """The manifest, or None when there is none.

        Raises:
            RunDirectoryError: `manifest.json` exists but is malformed.
        """
        ...

    def start_round(self, round_number: int) -> None:
        """Write the stage files, artifacts and checkpoints of round `round_number` (the run after that many
        `loop_restart`s) apart from earlier rounds: under `restart-<n>/` for n >= 1, the root for 0.

        Stage files are then read from and written to that round only, with no artifacts at first; each
        checkpoint is saved in the round's directory as well, while the root's `checkpoint.json` stays the
        run's latest (the one `load_checkpoint` returns) and the manifest stays at the root. Calling it
        for the current round changes nothing (a resumed run calls it for the round it continues).
        """
        ...


@runtime_checkable
class RunDirectoryFactory(Protocol):
    """Opens run directories (the engine opens one per run, and one per supervised child run)."""

    def open(self, root: str) -> RunDirectory:
        """The run directory at `root` (created lazily on first write)."""
        ...
