"""ScriptedCommitMessages: a commit message generator that answers from a script and records requests."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from orchestra_core.model.pricing import ModelUsage
from orchestra_core.ports.commit_messages import CommitMessageRequest, OnUsage


class ScriptExhaustedError(RuntimeError):
    """The script has no answer left for a request."""


class ScriptedCommitMessages:
    """Returns the scripted messages in order; an Exception in the script is raised instead.

    With `repeat_last`, the last entry answers every request once the script runs out; otherwise a
    request past the end raises ScriptExhaustedError (so the caller's fallback is exercised). With `usage`, every
    answer reports it to the caller's `on_usage` (as a generator that calls a model does).
    """

    def __init__(
        self, script: Iterable[str | Exception] = (), *, repeat_last: bool = False, usage: ModelUsage | None = None
    ) -> None:
        self._script = list(script)
        self._repeat_last = repeat_last
        self._usage = usage
        self._lock = threading.Lock()
        self.requests: list[CommitMessageRequest] = []

    def generate(self, request: CommitMessageRequest, *, on_usage: OnUsage | None = None) -> str:
        with self._lock:
            position = len(self.requests)
            self.requests.append(request)
        if position < len(self._script):
            answer = self._script[position]
        elif self._repeat_last and self._script:
            answer = self._script[-1]
        else:
            raise ScriptExhaustedError(f"no scripted commit message for request {position + 1}")
        if isinstance(answer, Exception):
            raise answer
        if on_usage is not None and self._usage is not None:
            on_usage(self._usage)
        return answer
