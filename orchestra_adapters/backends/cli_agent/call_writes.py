"""Which agent turn each file write belongs to, when the agent runs on while Orchestra reads its stream.

A CLI agent calls Orchestra's tools through the tool host as it goes, and prints its turns on a stream that
Orchestra reads (and commits from) behind it: by the time a turn is read, later turns may already have written.
So the writes are kept per tool call, in the order the host ran the calls, each file's content captured when it
was written; a turn read from the stream claims the writes of the calls it shows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import evolve, frozen

from orchestra_adapters.tools.toolbox import ExecutedCall
from orchestra_core.agents.tools import TurnWrites, WriteTracker
from orchestra_core.model.turn import ToolCall


@frozen
class _HostCall:
    name: str
    arguments: str  # canonical JSON, for matching the stream's spelling of the same call
    writes: TurnWrites


class CallWrites:
    """The writes of each tool call the host ran, until a turn claims them.

    Args:
        tracker: The tracker the node's tools record into; `on_call` empties it after every call, so what it
            holds then is that call's writes (the host runs one call at a time).
    """

    def __init__(self, tracker: WriteTracker) -> None:
        self._tracker = tracker
        self._calls: list[_HostCall] = []
        self._lock = threading.Lock()

    def on_call(self, executed: ExecutedCall) -> None:
        """The host ran a call (called under the host's lock, right after the call)."""
        record = executed.record
        call = _HostCall(record.name, _canonical(record.args), self._tracker.flush_writes())
        with self._lock:
            self._calls.append(call)

    def claim(self, calls: Sequence[ToolCall]) -> TurnWrites:
        """The writes of the host's calls that the stream's `calls` (one turn's) were, matched by tool and
        arguments in call order; calls the host ran before the last of them that no turn showed come with them
        (they were made before this turn ended). Claimed calls are forgotten."""
        with self._lock:
            taken: set[int] = set()
            for call in calls:
                wanted = (call.name, _canonical(call.args))
                index = next(
                    (i for i, ran in enumerate(self._calls) if i not in taken and (ran.name, ran.arguments) == wanted),
                    None,
                )
                if index is not None:
                    taken.add(index)
            if not taken:
                return TurnWrites()
            last = max(taken)
            claimed, self._calls = self._calls[: last + 1], self._calls[last + 1 :]
        return _joined(claimed)

    def with_arguments(self, calls: Sequence[ToolCall]) -> list[ToolCall]:
        """`calls` (one turn's, in order), those shown without arguments given the arguments the host ran them
        with: each takes the next unclaimed host call of its tool that no call of the turn shows by its arguments
        (Gemini CLI's ACP updates name the MCP tool a call calls but carry no arguments)."""
        with self._lock:
            shown = {(call.name, _canonical(call.args)) for call in calls if call.args}
            free = [ran for ran in self._calls if (ran.name, ran.arguments) not in shown]
        filled: list[ToolCall] = []
        for call in calls:
            ran = None if call.args else next((ran for ran in free if ran.name == call.name), None)
            if ran is not None:
                free.remove(ran)
                call = evolve(call, args=json.loads(ran.arguments))
            filled.append(call)
        return filled

    def name_for(self, arguments: Mapping[str, Any]) -> str | None:
        """The tool of the first unclaimed call the host ran with these arguments (an agent that names the calls
        it shows its own way still shows their arguments); None when no such call."""
        wanted = _canonical(arguments)
        with self._lock:
            return next((call.name for call in self._calls if call.arguments == wanted), None)

    def unclaimed(self) -> TurnWrites:
        """The writes of every call no turn claimed (the stream never showed them); forgotten after."""
        with self._lock:
            claimed, self._calls = self._calls, []
        return _joined(claimed)

    def pending(self) -> set[str]:
        """`repo:path` of every write not yet claimed by a turn."""
        with self._lock:
            return {entry for call in self._calls for entry in call.writes.files}


def _joined(calls: Sequence[_HostCall]) -> TurnWrites:
    writes = TurnWrites()
    for call in calls:
        writes = writes + call.writes
    return writes


def _canonical(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, default=_plain, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)
