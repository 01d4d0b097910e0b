"""A CommandRunner that lets every command write the directories a run (or a served workspace) works in, and
keeps the run's own state read-only where it lies inside them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestra_core.model.cancellation import Cancellation, takes_cancel, takes_keyword
from orchestra_core.ports.command_runner import CommandResult, CommandRunner


class WritableRoots:
    """Adds `roots()` (asked at each call: worktrees come and go) to the directories each command may write,
    and `protected()` to those it may not write even inside them."""

    def __init__(
        self,
        runner: CommandRunner,
        roots: Callable[[], Sequence[str]],
        protected: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        self._runner = runner
        self._roots = roots
        self._protected = protected

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
        """Run `command` through the wrapped runner, with the roots added to `writable`."""
        extra: dict[str, Any] = {"cancel": cancel} if cancel is not None and takes_cancel(self._runner.run) else {}
        if takes_keyword(self._runner.run, "protected"):
            extra["protected"] = [*self._protected(), *protected]
        allowed = [*self._roots(), *writable]
        return self._runner.run(command, cwd=cwd, env=env, timeout=timeout, stdin=stdin, writable=allowed, **extra)
