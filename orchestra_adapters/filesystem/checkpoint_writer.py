"""CheckpointWriter: checkpoint.json written off the engine's thread, newest first.

Replacing checkpoint.json costs milliseconds on ext4 (a file renamed over an existing one is flushed), far
more than a fast node. So `submit` only hands the newest checkpoint to a writer thread and returns; the
thread encodes and writes the newest one pending (older pending ones are skipped: coalescing), at most
one write every MIN_INTERVAL_S (or COST_FACTOR times as long as the last write took, when that is longer),
always by temporary file and rename, so readers never see a torn file.
When nodes take longer than that, as real ones do, every checkpoint reaches the file within milliseconds
of its node.

The thread runs while checkpoints keep coming and ends when it has been idle for IDLE_EXIT_S or is
drained, so it never outlives the run (the run's end drains it); it is a daemon so that an interpreter
exiting abnormally does not wait for it. `drain` waits until everything submitted is on disk; a failed
write is raised by the next `submit` or `drain`, naming the file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from orchestra_adapters.filesystem.atomic import atomic_write
from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.ports.run_directory import RunDirectoryError

Encode = Callable[[Checkpoint], bytes]
# The least time between two writes: a fast run's checkpoints coalesce to at most 1 / MIN_INTERVAL_S writes a
# second (each costs milliseconds of disk time the store's commits wait behind); a node that takes longer
# than this has its checkpoint written at once.
MIN_INTERVAL_S = 0.05
# The thread also waits this many times as long as its last write took: encoding a checkpoint holds the
# interpreter's lock for a time that grows with the run (it restates every completed node), so on long runs the
# writes get rarer and their share of the engine's time stays flat (at most 1 / (1 + COST_FACTOR)).
COST_FACTOR = 20
# How long the thread waits for the next checkpoint before it ends: a fast run's nodes keep one thread busy
# (starting a thread per node would cost about a millisecond each), an idle directory keeps none.
IDLE_EXIT_S = 0.5


class CheckpointWriter:
    """Writes the newest submitted checkpoint to its files on a background thread."""

    def __init__(self, encode: Encode) -> None:
        self._encode = encode
        self._condition = threading.Condition()
        self._pending: tuple[Checkpoint, tuple[str, ...]] | None = None
        self._error: RunDirectoryError | None = None
        self._thread: threading.Thread | None = None
        self._draining = 0

    def submit(self, checkpoint: Checkpoint, paths: tuple[str, ...]) -> None:
        """Write `checkpoint` to each of `paths` soon, replacing any checkpoint still pending.

        Raises:
            RunDirectoryError: An earlier write failed (raised once).
        """
        with self._condition:
            self._raise_error()
            waiting, self._pending = self._pending is not None, (checkpoint, paths)
            if not waiting:  # else the thread is writing or holding the older one: it takes this one next
                self._condition.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="orchestra-checkpoint-writer", daemon=True)
                self._thread.start()

    def drain(self) -> None:
        """Return once everything submitted is written and the thread has ended.

        Raises:
            RunDirectoryError: A write failed (raised once).
        """
        with self._condition:
            self._draining += 1
            try:
                self._condition.notify_all()
                while self._thread is not None:
                    self._condition.wait()
            finally:
                self._draining -= 1
            self._raise_error()

    def write_now(self, checkpoint: Checkpoint, paths: tuple[str, ...], *, fsync: bool) -> None:
        """Drain, then write `checkpoint` on the calling thread (fsynced when asked).

        Raises:
            RunDirectoryError: This write or an earlier one failed.
        """
        self.drain()
        _write(self._encode(checkpoint), paths, fsync=fsync)

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _wait_for_interval(self, last_write: float, interval: float) -> None:
        """Hold a pending checkpoint until `interval` after the last write (newer ones replace it meanwhile);
        a drain or an error ends the wait."""
        while self._pending is not None and self._error is None and not self._draining:
            rest = last_write + interval - time.monotonic()
            if rest <= 0:
                return
            self._condition.wait(rest)

    def _run(self) -> None:
        last_write, interval = -MIN_INTERVAL_S, MIN_INTERVAL_S
        while True:
            with self._condition:
                if self._pending is None and self._error is None and not self._draining:
                    self._condition.wait(IDLE_EXIT_S)
                self._wait_for_interval(last_write, interval)
                if self._pending is None or self._error is not None:
                    self._pending = None
                    self._thread = None
                    self._condition.notify_all()
                    return
                checkpoint, paths = self._pending
                self._pending = None
            try:
                started = time.monotonic()
                _write(self._encode(checkpoint), paths, fsync=False)
                last_write = time.monotonic()
                interval = max(MIN_INTERVAL_S, (last_write - started) * COST_FACTOR)
            except RunDirectoryError as error:
                with self._condition:
                    self._error = error
            except Exception as error:  # an encoding bug must still fail the run, not vanish with the thread
                with self._condition:
                    self._error = RunDirectoryError(f"{paths[-1]}: cannot write the checkpoint: {error!r}")


def _write(data: bytes, paths: tuple[str, ...], *, fsync: bool) -> None:
    for path in paths:
        try:
            atomic_write(path, data, fsync=fsync)
        except OSError as error:
            raise RunDirectoryError(f"{path}: cannot write the checkpoint: {error.strerror or error}") from None
