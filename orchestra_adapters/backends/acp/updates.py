"""ACP `session/update` notifications read as the agent events every CLI agent's stream becomes (cli_agent/events.py).

ACP marks no model response: a response is taken to begin with the first message, thought or tool call after the
tool calls of the one before have all finished (as with Codex), so one model response with its tool calls and
their results is one turn. The updates are the agent's and read, never trusted: anything of the wrong shape is
taken as absent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from orchestra_adapters.backends.cli_agent.events import (
    AgentEvent,
    ModelCall,
    TextOutput,
    ToolFinished,
    ToolStarted,
)
from orchestra_adapters.backends.cli_agent.streams import items, mapping

# Tool kinds that change nothing on disk: their calls need no look for untracked writes after the turn.
READ_ONLY_KINDS = ("read", "search", "think", "fetch", "switch_mode")
FINISHED = ("completed", "failed")

ToolNamer = Callable[[Mapping[str, Any]], str | None]
"""Orchestra's name (`project:write-file`) of the tool an ACP tool call is a call of; None: one of the agent's own."""


class UpdateMapper:
    """Turns one session's updates, in order, into agent events.

    Args:
        name_of: Names the Orchestra tool a tool call calls (through the MCP server), if it calls one.
    """

    def __init__(self, name_of: ToolNamer) -> None:
        self._name_of = name_of
        self._responses = 0
        self._after_tools = True
        self._open: set[str] = set()  # calls started and not finished
        self._seen: dict[str, Mapping[str, Any]] = {}  # every call started: its latest fields
        self._reply: list[str] = []
        self.cost_usd: float | None = (
            None  # the session's cost so far, when the agent reports it in US dollars
        )
        self.plan: list[dict[str, str]] = []

    @property
    def reply(self) -> str:
        """The text of the latest model response."""
        return "".join(self._reply)

    def knows(self, call_id: str) -> bool:
        """Whether a tool call of this id was started."""
        return call_id in self._seen

    def map(self, update: Mapping[str, Any]) -> Iterator[AgentEvent]:
        """The events of one update (the `update` of a `session/update`)."""
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            yield from self._respond()
            text = content_text(update.get("content"))
            if text:
                self._reply.append(text)
                yield TextOutput(text)
        elif kind == "agent_thought_chunk":
            yield from self._respond()
        elif kind in ("tool_call", "tool_call_update"):
            yield from self._tool(update)
        elif kind == "plan":
            self.plan = [
                _plan_entry(entry) for entry in items(update.get("entries")) if isinstance(entry, Mapping)
            ]
        elif kind == "usage_update":
            self._cost(mapping(update.get("cost")))

    def tool_started(self, call: Mapping[str, Any]) -> ToolStarted:
        """The start event of a tool call (`tool_call` fields, or a permission request's `toolCall`)."""
        name = self._name_of(call)
        kind = str(call.get("kind") or "")
        label = name or str(call.get("title") or kind or "tool")
        return ToolStarted(
            str(call.get("toolCallId") or ""),
            label,
            arguments(call.get("rawInput")),
            native=name is None and kind not in READ_ONLY_KINDS,
        )

    def _respond(self) -> Iterator[AgentEvent]:
        if self._after_tools:
            self._after_tools = False
            self._responses += 1
            self._reply = []
            yield ModelCall(f"response-{self._responses}")

    def _tool(self, update: Mapping[str, Any]) -> Iterator[AgentEvent]:
        call_id = str(update.get("toolCallId") or "")
        if not call_id:
            return
        fields = {**self._seen.get(call_id, {}), **{k: v for k, v in update.items() if v is not None}}
        status = str(update.get("status") or "")
        if call_id not in self._seen or (call_id in self._open and "rawInput" in update):
            if call_id not in self._seen:
                yield from self._respond()
                self._open.add(call_id)
            self._seen[call_id] = fields
            yield self.tool_started(
                fields
            )  # again when its input is known later: the same call, now complete
        self._seen[call_id] = fields
        if status in FINISHED and call_id in self._open:
            self._open.discard(call_id)
            yield ToolFinished(call_id, tool_result(fields), is_error=status == "failed")
            if not self._open:
                self._after_tools = True

    def _cost(self, cost: Mapping[str, Any]) -> None:
        amount = cost.get("amount")
        if (
            str(cost.get("currency") or "").upper() == "USD"
            and isinstance(amount, int | float)
            and _is_amount(amount)
        ):
            self.cost_usd = float(amount)


def content_text(block: Any) -> str:
    """The text of a content block (images, audio and resources have none)."""
    block = mapping(block)
    text = block.get("text")
    return text if block.get("type") == "text" and isinstance(text, str) else ""


def tool_result(call: Mapping[str, Any]) -> str:
    """A finished tool call's result as text: its text content, the files its diffs change, else its raw output."""
    parts: list[str] = []
    for entry in items(call.get("content")):
        entry = mapping(entry)
        if entry.get("type") == "content":
            parts.append(content_text(entry.get("content")))
        elif entry.get("type") == "diff":
            parts.append(f"changed {entry.get('path')}")
        elif entry.get("type") == "terminal":
            parts.append(f"terminal {entry.get('terminalId')}")
    text = "\n".join(part for part in parts if part)
    if text:
        return text
    raw = call.get("rawOutput")
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, default=str)


def arguments(raw: Any) -> Mapping[str, Any]:
    """A tool call's arguments: its raw input when an object, else under `input`."""
    if isinstance(raw, Mapping):
        return raw
    return {} if raw is None else {"input": raw}


def _plan_entry(entry: Mapping[str, Any]) -> dict[str, str]:
    return {key: str(entry.get(key) or "") for key in ("content", "status", "priority")}


def _is_amount(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value < 1e9
    )
