"""Agent turns from a CLI agent's event stream: one model response plus the results of the tools it called."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from attrs import define, field

from orchestra_adapters.backends.cli_agent.events import (
    AgentEvent,
    AgentResult,
    AgentStarted,
    ModelCall,
    TextOutput,
    ToolFinished,
    ToolStarted,
    UsageReport,
)
from orchestra_core.model.turn import TokenUsage, ToolCall


@define
class TurnDraft:
    """One turn as the stream describes it; the backend adds the files written and reports it."""

    message_id: str = ""
    model: str = ""  # the model that gave the response, when the agent says
    text: list[str] = field(factory=list)
    calls: dict[str, ToolCall] = field(factory=dict)  # by call id, in call order
    finished: set[str] = field(factory=set)
    natives: set[str] = field(factory=set)  # ids of calls to the agent's own tools
    usage: TokenUsage = field(factory=TokenUsage)
    started: float = field(factory=time.monotonic)
    call_started: dict[str, float] = field(factory=dict)  # monotonic, by call id: each call's duration
    notes: list[dict[str, Any]] = field(factory=list)  # records the backend adds after the turn's (ACP: a plan)

    @property
    def empty(self) -> bool:
        return not self.text and not self.calls

    @property
    def used_native_tools(self) -> bool:
        """Whether the agent used tools of its own in this turn (so files may have changed outside ours)."""
        return bool(self.natives)

    @property
    def all_answered(self) -> bool:
        return bool(self.calls) and self.finished >= set(self.calls)

    def tool_calls(self) -> list[ToolCall]:
        return list(self.calls.values())

    def messages(self) -> list[dict[str, Any]]:
        """The turn's messages in the role/content shape every AgentTurn uses."""
        reply: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            reply["tool_calls"] = [
                {"id": c.call_id, "name": c.name, "args": dict(c.args)} for c in self.calls.values()
            ]
        records = [reply]
        for call in self.calls.values():
            if call.call_id in self.finished:
                record = {"role": "tool", "name": call.name, "tool_call_id": call.call_id}
                record["content"] = call.error if call.error is not None else call.result or ""
                if call.error is not None:
                    record["status"] = "error"
                records.append(record)
        return records + self.notes


class TurnAssembler:
    """Feeds on normalised agent events; calls `on_turn` with each turn as soon as it is complete.

    A turn is complete when every tool it called has its result, when the next model response begins, or
    when the agent gives its final answer. `tool_name` maps the agent's tool names to Orchestra's
    (`mcp__orchestra__project__write-file` → `project:write-file`).
    """

    def __init__(self, on_turn: Callable[[TurnDraft], None], tool_name: Callable[[str], str]) -> None:
        self._on_turn = on_turn
        self._tool_name = tool_name
        self._draft: TurnDraft | None = None
        self.started: AgentStarted | None = None
        self.result: AgentResult | None = None
        self.usage = TokenUsage()
        self._reported = TokenUsage()
        self.last_text = ""

    def feed(self, event: AgentEvent) -> None:
        """Take one event (in stream order)."""
        if isinstance(event, AgentStarted):
            self.started = event
        elif isinstance(event, ModelCall):
            self._begin(event.message_id, event.model)
        elif isinstance(event, TextOutput):
            if event.text:
                self._current().text.append(event.text)
                self.last_text = event.text
        elif isinstance(event, ToolStarted):
            self._start_tool(event)
        elif isinstance(event, ToolFinished):
            self._finish_tool(event)
        elif isinstance(event, UsageReport):
            self._count(event)
        elif isinstance(event, AgentResult):
            self.result = event
            if event.usage is not None:
                self._settle_usage(event.usage)
            self.close()

    def close(self) -> None:
        """End the turn in progress (the stream ended)."""
        draft, self._draft = self._draft, None
        if draft is not None and not draft.empty:
            self._reported = self._reported + draft.usage
            self._on_turn(draft)

    def _settle_usage(self, total: TokenUsage) -> None:
        """Agents print a response before its final token count; the run's total settles the last turn's."""
        self.usage = total
        draft = self._draft
        if draft is not None and not draft.empty:
            reported, own = self._reported, draft.usage
            draft.usage = TokenUsage(
                max(total.prompt_tokens - reported.prompt_tokens, own.prompt_tokens),
                max(total.completion_tokens - reported.completion_tokens, own.completion_tokens),
                max(total.cache_read_tokens - reported.cache_read_tokens, own.cache_read_tokens),
                max(total.cache_write_tokens - reported.cache_write_tokens, own.cache_write_tokens),
            )

    def _begin(self, message_id: str, model: str = "") -> None:
        if self._draft is not None and message_id and self._draft.message_id == message_id:
            return
        if self._draft is not None and (not self._draft.message_id or self._draft.message_id != message_id):
            self.close()
        self._draft = TurnDraft(message_id=message_id, model=model)

    def _current(self) -> TurnDraft:
        if self._draft is None:
            self._draft = TurnDraft()
        return self._draft

    def _start_tool(self, event: ToolStarted) -> None:
        draft = self._current()
        draft.calls[event.call_id] = ToolCall(
            self._tool_name(event.name), event.arguments, event.call_id, started_at=datetime.now(UTC)
        )
        draft.call_started[event.call_id] = time.monotonic()
        if event.native:
            draft.natives.add(event.call_id)

    def _finish_tool(self, event: ToolFinished) -> None:
        draft = self._draft
        if draft is None or event.call_id not in draft.calls:
            return  # a result for a call this stream never showed: nothing to attach it to
        call = draft.calls[event.call_id]
        started = draft.call_started.get(event.call_id)
        draft.calls[event.call_id] = ToolCall(
            call.name,
            call.args,
            call.call_id,
            result=None if event.is_error else event.result,
            error=(event.result or "the tool failed") if event.is_error else None,
            started_at=call.started_at,
            duration_s=time.monotonic() - started if started is not None else None,
        )
        draft.finished.add(event.call_id)
        if draft.all_answered:
            self.close()

    def _count(self, event: UsageReport) -> None:
        draft = self._current()
        if event.replace:
            draft.usage = event.usage
        else:
            draft.usage = draft.usage + event.usage
