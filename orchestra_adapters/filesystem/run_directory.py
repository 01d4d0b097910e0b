"""FileRunDirectory: a run's logs root on disk (Attractor 5.6 and DESIGN.md).

Layout: `checkpoint.json`, `manifest.json`, `{stage}/prompt.md|response.md|status.json|context.json|...`,
`artifacts/{id}.json`; round n >= 1 of a run (after n `loop_restart`s) writes its stage directories,
artifacts and its own copy of each checkpoint under `restart-{n}/`, while the root checkpoint.json stays the
run's latest (the one resume reads).

Durability: checkpoint.json and manifest.json are replaced atomically (temporary file and rename), so a
crash of the process never leaves a torn one. A running checkpoint is handed to a background writer (see
checkpoint_writer.py) that writes the newest one pending, so checkpoint.json may lag the run by the writer's
latency (the session store is the per-node durable record). The run's final checkpoint (or any when
`durable=True`, for machines that may lose power mid-run) is written on the caller's thread after the
writer drained, and fsynced; the manifest is fsynced. `load_checkpoint` and `close` drain the writer first.
Stage files are queued to another background writer (see stage_file_writer.py) that creates the stage
directories and writes the files in order; `stage_dir` (the directory handed to a command or an agent) and
`close` flush it, and reading or removing a file still queued waits for it. Resume never reads stage files.
"""

from __future__ import annotations

import contextlib
import os
import threading

from orchestra_adapters.filesystem.artifact_store import FileBackedArtifactStore
from orchestra_adapters.filesystem.atomic import atomic_write
from orchestra_adapters.filesystem.checkpoint_codec import (
    CheckpointEncoder,
    decode_checkpoint,
    decode_manifest,
    encode_manifest,
)
from orchestra_adapters.filesystem.checkpoint_writer import CheckpointWriter
from orchestra_adapters.filesystem.stage_file_writer import StageFileWriter, ensure_directory
from orchestra_core.model.checkpoint import Checkpoint, RunManifest
from orchestra_core.model.input_files import (
    MAX_RUN_FILE_BYTES,
    InputFileError,
    InputFileMissing,
    read_text_file,
)
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import CHECKPOINT_FILE, MANIFEST_FILE, RunDirectoryError


def round_dir(root: str, round_number: int) -> str:
    """The directory of a run's round: the root for round 0, `restart-<n>/` under it after n loop restarts."""
    return root if round_number == 0 else os.path.join(root, f"restart-{round_number}")


class FileRunDirectory:
    """A RunDirectory on the filesystem; directories are created on first write."""

    def __init__(self, root: str, *, clock: Clock | None = None, durable: bool = False) -> None:
        self.root = root
        self.durable = durable
        self.artifacts = FileBackedArtifactStore(root, clock=clock)
        self._clock = clock
        self._round = 0
        self._round_root = root
        self._encoder = CheckpointEncoder()
        self._writer = CheckpointWriter(self._encode)
        self._stage_files = StageFileWriter()
        self._made: set[str] = set()
        # Stage directories handed to others (stage_dir), who may write files there; and stage files removed
        # here and not written since: unless their directory was handed out, they are known not to exist.
        self._handed_out: set[str] = set()
        self._removed: set[str] = set()
        # The stages of this round written to, and whether the round's directory was empty when the run began:
        # a file of a stage never written to nor handed out in a new round cannot exist (no unlink to remove it).
        self._written_stages: set[str] = set()
        self._new_round = _empty_or_missing(root)
        self._lock = threading.Lock()

    def _ensure(self, directory: str) -> str:
        if directory not in self._made:
            try:
                ensure_directory(directory)
            except OSError as error:
                raise RunDirectoryError(f"{directory}: cannot create the directory: {error.strerror or error}") from None
            self._made.add(directory)
        return directory

    def stage_path(self, stage_key: str) -> str:
        return os.path.join(self._round_root, stage_key)

    def stage_dir(self, stage_key: str) -> str:
        self._stage_files.flush()
        directory = self._ensure(self.stage_path(stage_key))
        self._handed_out.add(directory)
        return directory

    def write_stage_file(self, stage_key: str, name: str, text: str) -> None:
        directory = self.stage_path(stage_key)
        self._removed.discard(os.path.join(directory, name))
        self._written_stages.add(stage_key)
        self._stage_files.submit(directory, name, text.encode("utf-8", "surrogateescape"))

    def read_stage_file(self, stage_key: str, name: str) -> str | None:
        directory = self.stage_path(stage_key)
        path = os.path.join(directory, name)
        if path in self._removed and directory not in self._handed_out:
            return None  # the engine's usual question, "did the stage write status.json?", without a failing open
        self._settled(path)
        try:
            with open(path, "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except (FileNotFoundError, NotADirectoryError):
            return None

    def remove_stage_file(self, stage_key: str, name: str) -> None:
        path = os.path.join(self._round_root, stage_key, name)
        if not self._new_round or stage_key in self._written_stages or os.path.dirname(path) in self._handed_out:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                os.unlink(self._settled(path))
        self._removed.add(path)

    def _settled(self, path: str) -> str:
        """`path`, once a queued write of it is on disk."""
        if self._stage_files.is_queued(path):
            self._stage_files.flush()
        return path

    def save_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._lock:
            paths: tuple[str, ...] = (os.path.join(self._ensure(self.root), CHECKPOINT_FILE),)
            if self._round:  # the round's own copy, for readers; resume reads the root's
                paths = (os.path.join(self._ensure(self._round_root), CHECKPOINT_FILE), *paths)
            if self.durable or checkpoint.finished:
                self._writer.write_now(checkpoint, paths, fsync=True)
            else:
                self._writer.submit(checkpoint, paths)

    def _encode(self, checkpoint: Checkpoint) -> bytes:
        return self._encoder.encode(checkpoint).encode("utf-8")

    def close(self) -> None:
        try:
            self._stage_files.flush()
        finally:
            self._writer.drain()

    def load_checkpoint(self) -> Checkpoint | None:
        self._writer.drain()
        path = os.path.join(self.root, CHECKPOINT_FILE)
        text = _read(path)
        return None if text is None else decode_checkpoint(text, path)

    def write_manifest(self, manifest: RunManifest) -> None:
        path = os.path.join(self._ensure(self.root), MANIFEST_FILE)
        try:
            atomic_write(path, encode_manifest(manifest).encode("utf-8"), fsync=True)
        except OSError as error:
            raise RunDirectoryError(f"{path}: cannot write the manifest: {error.strerror or error}") from None

    def read_manifest(self) -> RunManifest | None:
        path = os.path.join(self.root, MANIFEST_FILE)
        text = _read(path)
        return None if text is None else decode_manifest(text, path)

    def start_round(self, round_number: int) -> None:
        if round_number == self._round:
            return
        self._round = round_number
        self._round_root = round_dir(self.root, round_number)
        self._written_stages = set()
        self._new_round = _empty_or_missing(self._round_root)
        self.artifacts = FileBackedArtifactStore(self._round_root, clock=self._clock)


class FileRunDirectories:
    """Opens FileRunDirectory objects (the RunDirectoryFactory the CLI uses)."""

    def __init__(self, *, clock: Clock | None = None, durable: bool = False) -> None:
        self._clock = clock
        self._durable = durable

    def open(self, root: str) -> FileRunDirectory:
        return FileRunDirectory(root, clock=self._clock, durable=self._durable)


def _empty_or_missing(directory: str) -> bool:
    """Whether `directory` holds nothing (a new run directory, made by `run`'s checks or not at all)."""
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is None
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _read(path: str) -> str | None:
    """checkpoint.json or manifest.json; never blocks on a FIFO or reads a device without end."""
    try:
        return read_text_file(path, limit=MAX_RUN_FILE_BYTES)
    except InputFileMissing:
        return None
    except InputFileError as error:
        raise RunDirectoryError(str(error)) from None
