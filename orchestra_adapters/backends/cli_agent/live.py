"""A CLI agent's stream, as it is read, told to the backend's `on_activity`: its text, its tool calls and their
results, each the moment its line arrives (before the turn it belongs to ends)."""

from __future__ import annotations

import json
from collections.abc import Callable

from orchestra_adapters.backends.cli_agent.events import AgentEvent, TextOutput, ToolFinished, ToolStarted
from orchestra_core.model.activity import TEXT, TOOL_CALL, TOOL_RESULT, Activity, OnActivity


class LiveActivity:
    """Turns the agent's events into Activities for `on_activity`.

    Args:
        on_activity: The backend's callback (None: nothing is told).
        name_of: The Orchestra name of a tool as the agent names it.
        turn_of: The number of the agent turn in progress.
    """

    def __init__(
        self, on_activity: OnActivity | None, name_of: Callable[[str], str], turn_of: Callable[[], int]
    ) -> None:
        self._on_activity = on_activity
        self._name_of = name_of
        self._turn_of = turn_of
        self._tools: dict[str, str] = {}  # call id -> tool name, for the results (which do not name theirs)

    def feed(self, event: AgentEvent) -> None:
        """Tell the event, when it is text, a tool call or a tool's result."""
        if self._on_activity is None:
            return
        activity = self._activity(event)
        if activity is not None:
            self._on_activity(activity)

    def _activity(self, event: AgentEvent) -> Activity | None:
        turn = self._turn_of()
        if isinstance(event, TextOutput):
            return Activity(kind=TEXT, text=event.text, turn=turn)
        if isinstance(event, ToolStarted):
            name = self._tools[event.call_id] = self._name_of(event.name)
            arguments = json.dumps(dict(event.arguments), ensure_ascii=False, default=str)
            return Activity(kind=TOOL_CALL, tool=name, text=arguments, call_id=event.call_id, turn=turn)
        if isinstance(event, ToolFinished):
            name = self._tools.pop(event.call_id, "")
            return Activity(
                kind=TOOL_RESULT,
                tool=name,
                text=event.result,
                call_id=event.call_id,
                error=event.is_error,
                turn=turn,
            )
        return None
