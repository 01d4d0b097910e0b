"""Subprocesses whose whole process group dies with the process that started them (or when it lets go).

`spawn_supervised(argv, ...)` starts `argv` as the leader of a new session and process group, with a watchdog
inside that group: a tiny `sh` that waits for end-of-file on a pipe whose only write end this process holds,
then SIGKILLs the group. The kernel closes the write end when this process dies, however it dies (SIGKILL
included), so the group goes with it; `SupervisedProcess.release()` closes it on purpose once the command has
ended, which stops whatever the command left running in the background.

Why not PR_SET_PDEATHSIG: it kills only the direct child, and it fires when the *thread* that forked dies
(Orchestra runs stages in worker threads); the pipe is tied to the process and reaches the whole group.
What the watchdog cannot reach: a descendant that leaves the group (`setsid`, a daemon that double-forks into
a new session). A pid namespace (the bubblewrap sandbox) closes that gap.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from typing import Any

# The watchdog is forked with HUP, INT, TERM and QUIT already ignored, so a command that signals its own group
# (`kill 0`) cannot end it, not even at once; the command gets the default dispositions back. "$@" is the command.
_SIGNALS = "HUP INT TERM QUIT"
_PROLOGUE = (
    f"trap '' {_SIGNALS}; "
    "(exec </dev/null >/dev/null 2>&1; read _ < /dev/fd/{fd}; kill -s KILL 0) & "
    f"trap - {_SIGNALS}; "
    'exec "$@"'
)
WATCHDOG_NAME = "orchestra-watchdog"


class SupervisedProcess:
    """A started command and the lifeline of its process group (its pid is the group id)."""

    def __init__(self, process: subprocess.Popen[bytes], lifeline: int) -> None:
        self.process = process
        self._lifeline: int | None = lifeline

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill_group(self) -> None:
        """SIGKILL every process of the group now."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def release(self) -> None:
        """Let go of the group: its watchdog kills whatever is still in it (idempotent)."""
        lifeline, self._lifeline = self._lifeline, None
        if lifeline is not None:
            os.close(lifeline)

    def __del__(self) -> None:  # a forgotten release must not keep the pipe open until this process exits
        with contextlib.suppress(Exception):
            self.release()


def supervised_argv(argv: Sequence[str], watchdog_fd: int) -> list[str]:
    """`argv` behind the watchdog prologue that reads `watchdog_fd` (the pipe's read end, inherited)."""
    return ["/bin/sh", "-c", _PROLOGUE.replace("{fd}", str(int(watchdog_fd))), WATCHDOG_NAME, *argv]


def spawn_supervised(argv: Sequence[str], **popen: Any) -> SupervisedProcess:
    """Start `argv` in a new session whose process group dies with this process.

    Args:
        argv: The program and its arguments (exec'd in place of the prologue's shell, so its pid is the
            group's id and `$$` of a `sh -c` command names the group).
        **popen: Passed to `subprocess.Popen` (not `start_new_session`, `pass_fds` or `close_fds`).

    Raises:
        OSError: The program could not start (e.g. a missing working directory); nothing is left open.
    """
    read_end, write_end = os.pipe()  # both close-on-exec; only the read end is passed on
    try:
        process = subprocess.Popen(
            supervised_argv(argv, read_end),
            start_new_session=True,
            pass_fds=(read_end,),
            close_fds=True,
            **popen,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return SupervisedProcess(process, write_end)
