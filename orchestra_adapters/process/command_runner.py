"""SubprocessCommandRunner: shell commands in their own process group, killed whole on timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping

from orchestra_core.ports.command_runner import CommandResult


class SubprocessCommandRunner:
    """Runs commands with `/bin/sh -c` in a new session so a timeout can kill every child."""

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self._base_env = dict(base_env) if base_env is not None else None

    def run(
        self,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
    ) -> CommandResult:
        merged = dict(self._base_env if self._base_env is not None else os.environ)
        merged.update(env or {})
        started = time.monotonic()
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            env=merged,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(process)
            out, err = process.communicate()
            timed_out = True
        except BaseException:  # Ctrl-C or a stop: leave nothing of the command running behind us
            _kill_group(process)
            process.wait()
            raise
        return CommandResult(
            exit_code=None if timed_out else process.returncode,
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
        )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
