"""CommandRunner port: runs a shell command from the pipeline or config (never from LLM text)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from attrs import frozen

from orchestra_core.model.cancellation import Cancellation


@frozen
class CommandResult:
    """What a finished command produced. `exit_code` is None when it was killed (on timeout, or cancelled)."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled


@runtime_checkable
class CommandRunner(Protocol):
    """Runs shell commands, each in a process group that ends with it (and with the runner)."""

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
        """Run `command` through the shell in `cwd`.

        Args:
            command: Shell command text.
            cwd: Working directory.
            env: Variables added to (overriding) the current environment.
            timeout: Seconds before the whole process group is killed.
            stdin: Text fed to the command's standard input.
            writable: Directories the command is meant to write (the session's worktrees, its stage
                directory). A runner that confines commands (a sandbox) lets them write only there and in a
                private temporary directory; a runner that does not confine ignores it.
            cancel: When it is cancelled (the stage's attempt timed out), the whole process group is killed
                at once and the result says `cancelled`; a command is not started once it is cancelled.
                None: the thread's current cancellation (`current_cancellation()`), if any.
            protected: Directories that stay read-only even where they lie inside a `writable` one
                (Orchestra's own state: the project's `.orchestra/`, the run directory); a runner that
                confines commands keeps them so, one that does not ignores it (as it ignores `writable`).
        """
        ...
