"""ScriptedCommandRunner: a CommandRunner fake that records commands and plays scripted results."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from attrs import frozen

from orchestra_core.model.cancellation import Cancellation
from orchestra_core.ports.command_runner import CommandResult


@frozen
class CommandCall:
    """One command the runner received."""

    command: str
    cwd: str
    env: Mapping[str, str]
    timeout: float | None
    stdin: str | None
    writable: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()


Reply = CommandResult | Callable[[CommandCall], CommandResult]


class ScriptedCommandRunner:
    """Answers each command with the reply scripted for it (exact command text), else `default`.

    A reply is a CommandResult or a function of the CommandCall (to look at the environment, or to
    write files the way a real command would).
    """

    def __init__(self, replies: Mapping[str, Reply] | None = None, default: Reply | None = None) -> None:
        self._replies = dict(replies or {})
        self._default = default or CommandResult(0, "", "", 0.0)
        self.calls: list[CommandCall] = []
        self._lock = threading.Lock()

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
        call = CommandCall(command, cwd, dict(env or {}), timeout, stdin, tuple(writable), tuple(protected))
        with self._lock:
            self.calls.append(call)
        reply = self._replies.get(command, self._default)
        return reply(call) if callable(reply) else reply
