"""A CLI agent's process: its own process group, the prompt on stdin, stdout by line, stderr's tail, a deadline.

The agent and everything it starts (its MCP servers included) share one process group, which dies with
Orchestra however Orchestra ends (the supervised spawn's watchdog), on the deadline, when its stage's attempt
is cancelled (`cancel`), and on any error or Ctrl-C while the agent runs.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from orchestra_adapters.process.supervised import SupervisedProcess, spawn_supervised
from orchestra_core.model.cancellation import Cancellation

STDERR_TAIL_LINES = 20


class AgentProcess:
    """One run of a CLI agent. Use as a context manager: leaving it kills whatever is left of the group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin_text: str,
        timeout_s: float | None,
        cancel: Cancellation | None = None,
    ) -> None:
        self._argv = list(argv)
        self._cwd = cwd
        self._env = dict(env)
        self._stdin_text = stdin_text
        self._timeout_s = timeout_s
        self._supervised: SupervisedProcess | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._threads: list[threading.Thread] = []
        self._deadline_timer: threading.Timer | None = None
        self._cancel = cancel
        self._forget_cancel: Callable[[], None] | None = None
        self.timed_out = False
        self.cancelled = False
        self.started_at = 0.0

    def __enter__(self) -> AgentProcess:
        self._supervised = spawn_supervised(
            self._argv,
            cwd=self._cwd,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.started_at = time.monotonic()
        self._thread(self._feed_stdin)
        self._thread(self._drain_stderr)
        if self._timeout_s is not None:
            self._deadline_timer = threading.Timer(self._timeout_s, self._on_deadline)
            self._deadline_timer.daemon = True
            self._deadline_timer.start()
        if self._cancel is not None:
            self._forget_cancel = self._cancel.on_cancel(self._on_cancel)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    @property
    def timeout_s(self) -> float | None:
        return self._timeout_s

    def lines(self) -> Iterator[str]:
        """The agent's stdout, line by line, until it closes it."""
        stdout = self._process.stdout
        assert stdout is not None
        for raw in stdout:
            yield raw.decode("utf-8", errors="replace")

    def wait(self) -> int:
        """Wait for the agent to exit (its stdout is closed by now); its exit status."""
        return self._process.wait()

    def stop(self) -> None:
        """Kill the group (if anything is left), reap the agent, and let go (idempotent)."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        if self._forget_cancel is not None:
            self._forget_cancel()
            self._forget_cancel = None
        supervised = self._supervised
        if supervised is None:
            return
        supervised.kill_group()
        with contextlib.suppress(Exception):
            supervised.process.wait(timeout=10)
        supervised.release()
        for stream in (supervised.process.stdout, supervised.process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
        for thread in self._threads:
            thread.join(timeout=2)

    def stderr_tail(self) -> str:
        """The last lines the agent wrote to stderr."""
        return "".join(self._stderr).strip()

    @property
    def _process(self) -> subprocess.Popen[bytes]:
        assert self._supervised is not None, "the agent was not started"
        return self._supervised.process

    def _thread(self, target: object) -> None:
        thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _feed_stdin(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # the agent may exit before reading all of it
            stdin.write(self._stdin_text.encode("utf-8"))
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def _drain_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        with contextlib.suppress(OSError, ValueError):
            for raw in stderr:
                self._stderr.append(raw.decode("utf-8", errors="replace"))

    def _on_cancel(self) -> None:
        self.cancelled = True
        if self._supervised is not None:
            self._supervised.kill_group()

    def _on_deadline(self) -> None:
        self.timed_out = True
        if self._supervised is not None:
            self._supervised.kill_group()
