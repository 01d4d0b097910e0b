"""StageFileWriter: a run's stage files (prompt.md, response.md, status.json, ...) written off the engine's thread.

Creating a stage directory and four small files costs a fast node more than everything else it does (each
is a metadata change the file system journals). They are logs for people and tools, not the run's durable
record (that is the session store), so the engine only queues them: a writer thread creates the directories
and writes the files in the order they were queued, each file whole in one write. Whoever needs a file on
disk asks first: `flush` returns once everything queued is written (the run directory flushes before it hands
a stage directory to a command, reads or removes a file that is still queued, and at the run's end).

The thread ends when it has been idle for IDLE_EXIT_S or is flushed with nothing left, so it never outlives
the run; it is a daemon so that an interpreter exiting abnormally does not wait for it. A failed write is
raised, naming the file, by the next `submit` or `flush`.
"""

from __future__ import annotations

import collections
import os
import threading

from orchestra_adapters.filesystem.atomic import write_file
from orchestra_core.ports.run_directory import RunDirectoryError

# How long the thread waits for the next file before it ends: a fast run keeps one thread busy (starting a
# thread per node would cost about a millisecond each), an idle run directory keeps none.
IDLE_EXIT_S = 0.5
# The thread takes what was queued in batches, at most one every POLL_S unless someone waits for a flush:
# waking it for every file cost the engine a thread hand-off per file (four per node of a fast run).
POLL_S = 0.01
# At most this many files are queued or being written: an engine that outruns the disk (a fast run on a loaded
# machine) waits for the writer rather than holding every file still to write (issue 33: the peak memory of a
# 2,000-node run grew with the machine's load).
MAX_PENDING = 256

_Item = tuple[str, str, bytes]  # directory, path, data


class StageFileWriter:
    """Writes queued stage files, in order, on a background thread."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._queue: collections.deque[_Item] = collections.deque()
        self._queued: collections.Counter[str] = collections.Counter()
        self._busy = False
        self._flushing = 0
        self._error: RunDirectoryError | None = None
        self._thread: threading.Thread | None = None
        self._writing = 0  # files of the batch being written
        self._made = ""  # the directory last made: a stage's files come one after the other

    def submit(self, directory: str, name: str, data: bytes) -> None:
        """Write `data` to `directory/name` soon (the directory is created first when missing).

        Raises:
            RunDirectoryError: An earlier write failed (raised once).
        """
        path = os.path.join(directory, name)
        with self._condition:
            self._raise_error()
            if len(self._queue) + self._writing >= MAX_PENDING and self._thread is not None:
                self._flushing += 1  # the thread takes the queue at once, without waiting for its next poll
                try:
                    self._condition.notify_all()
                    while len(self._queue) + self._writing >= MAX_PENDING and self._thread is not None:
                        self._condition.wait()
                finally:
                    self._flushing -= 1
            self._queue.append((directory, path, data))
            self._queued[path] += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="orchestra-stage-writer", daemon=True)
                self._thread.start()

    def is_queued(self, path: str) -> bool:
        """Whether a write of `path` is queued or being written."""
        with self._condition:
            return self._queued[path] > 0

    def flush(self) -> None:
        """Return once every file submitted so far is written.

        Raises:
            RunDirectoryError: A write failed (raised once).
        """
        with self._condition:
            self._flushing += 1
            try:
                self._condition.notify_all()  # the thread takes what is queued now, not at its next poll
                while self._queue or self._busy:
                    self._condition.wait()
            finally:
                self._flushing -= 1
            self._raise_error()

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _take(self) -> list[_Item] | None:
        """The next batch to write, None once the thread has been idle for IDLE_EXIT_S (it then ends)."""
        with self._condition:
            self._busy = False
            self._writing = 0
            self._condition.notify_all()  # a flush waiting for the last batch, a submit waiting for room
            if not self._flushing:
                self._condition.wait(POLL_S)  # let a batch gather; a flush wakes the thread at once
            idle = 0.0
            while not self._queue:
                if idle >= IDLE_EXIT_S:
                    self._thread = None
                    return None
                self._condition.wait(POLL_S)
                idle += POLL_S
            batch = list(self._queue)
            self._queue.clear()
            self._busy = True
            self._writing = len(batch)
            return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            failure: RunDirectoryError | None = None
            for directory, path, data in batch:
                try:
                    self._write(directory, path, data)
                except Exception as error:  # any failure is reported by the next call, never kills the thread
                    reason = error.strerror if isinstance(error, OSError) and error.strerror else repr(error)
                    failure = failure or RunDirectoryError(f"{path}: cannot write the stage file: {reason}")
            with self._condition:
                self._error = self._error or failure
                for _, path, _ in batch:
                    self._queued[path] -= 1
                    if not self._queued[path]:
                        del self._queued[path]

    def _write(self, directory: str, path: str, data: bytes) -> None:
        if directory != self._made:
            ensure_directory(directory)
            self._made = directory
        write_file(path, data)


def ensure_directory(directory: str) -> None:
    """Create `directory` (and its parents when missing); an existing one is fine."""
    try:
        os.mkdir(directory)  # usually a stage directory right under an existing root
    except FileExistsError:
        pass
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
