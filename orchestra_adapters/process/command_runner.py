"""SubprocessCommandRunner: shell commands in their own process group, which dies with the command's end, its
timeout, an interrupt, or the runner itself (see `supervised`)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence

from orchestra_adapters.process.supervised import SupervisedProcess, spawn_supervised
from orchestra_core.model.cancellation import Cancellation, current_cancellation, on_cancel
from orchestra_core.ports.command_runner import CommandResult


class SubprocessCommandRunner:
    """Runs commands with `/bin/sh -c` as the leader of a new session and process group.

    The group is SIGKILLed on timeout, when the run cancels the command (`cancel`, else the thread's current
    cancellation: its stage timed out), on an interrupt (Ctrl-C, a stop), and by its watchdog when this process
    dies; once the shell has exited, whatever it left running in the background is stopped too, so nothing a
    command starts outlives it. `writable` and `protected` are accepted and ignored: nothing here confines a
    command.
    """

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self._base_env = dict(base_env) if base_env is not None else None

    def argv(self, command: str, *, cwd: str, writable: Sequence[str], protected: Sequence[str] = ()) -> list[str]:
        """The program that runs `command` (a confining runner wraps it)."""
        return ["/bin/sh", "-c", command]

    def run(
        self,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
        writable: Sequence[str] = (),
        cancel: Cancellation | None = None,
        protected: Sequence[str] = (),
    ) -> CommandResult:
        cancel = cancel if cancel is not None else current_cancellation()
        if cancel is not None and cancel.is_set():
            return CommandResult(None, "", f"not started: {cancel.reason}\n", 0.0, cancelled=True)
        merged = dict(self._base_env if self._base_env is not None else os.environ)
        merged.update(env or {})
        started = time.monotonic()
        supervised = spawn_supervised(
            self.argv(command, cwd=cwd, writable=writable, protected=protected),
            cwd=cwd,
            env=merged,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            with on_cancel(cancel, supervised.kill_group):
                out, err, timed_out = _communicate(supervised, stdin, timeout)
        finally:
            supervised.release()
        process = supervised.process
        cancelled = cancel is not None and cancel.is_set() and not timed_out and process.returncode != 0
        return CommandResult(
            exit_code=None if timed_out or cancelled else process.returncode,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            cancelled=cancelled,
        )


def _communicate(
    supervised: SupervisedProcess, stdin: str | None, timeout: float | None
) -> tuple[bytes, bytes, bool]:
    process = supervised.process
    try:
        out, err = process.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
        return out, err, False
    except subprocess.TimeoutExpired:
        supervised.kill_group()
        out, err = process.communicate()
        return out, err, True
    except BaseException:  # Ctrl-C or a stop: leave nothing of the command running behind us
        supervised.kill_group()
        process.wait()
        raise
