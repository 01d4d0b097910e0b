"""What an agent does while its node runs: the text it writes, the tools it calls and their results, as they
happen. Transient: shown live (the web view's event stream), never recorded (the agent turns are the record)."""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

TEXT, TOOL_CALL, TOOL_RESULT = "text", "tool_call", "tool_result"
ACTIVITY_KINDS = (TEXT, TOOL_CALL, TOOL_RESULT)
MAX_ACTIVITY_TEXT = (
    4000  # a tool call's arguments or result longer than this is cut (the turn keeps it whole)
)


@frozen(kw_only=True)
class Activity:
    """One thing an agent did, as a backend reports it through `on_activity` (ports/codergen_backend.py).

    Attributes:
        kind: `text` (a piece of the model's reply: the whole message, or a chunk when the model streams),
            `tool_call` (the model called `tool`; `text` is its arguments as JSON) or `tool_result` (`text`
            is the call's result; `error` when it failed).
        text: The text, the arguments or the result.
        tool: The tool's name (tool calls and results).
        call_id: The tool call's id, pairing a result with its call (empty when the agent gives none).
        error: The tool call failed.
        turn: The agent turn it belongs to (its `turn_number`), when the backend knows it.
    """

    kind: str
    text: str = ""
    tool: str = ""
    call_id: str = ""
    error: bool = False
    turn: int | None = None


OnActivity = Callable[[Activity], None]
