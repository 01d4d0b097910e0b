"""LangChain messages as AgentTurn records, token usage, and references to LangGraph checkpoints."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from attrs import frozen
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from orchestra_core.model.turn import ToolCall

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_REF_PREFIX = "langgraph:"


@frozen
class AgentStateRef:
    """Where a turn's agent state is: a LangGraph thread and the checkpoint taken after the turn.

    Rendered as `langgraph:<thread_id>:<checkpoint_id>` (checkpoint ids never contain `:`).
    """

    thread_id: str
    checkpoint_id: str

    def render(self) -> str:
        return f"{_REF_PREFIX}{self.thread_id}:{self.checkpoint_id}"

    @classmethod
    def parse(cls, text: str) -> AgentStateRef:
        """Read a rendered reference.

        Raises:
            ValueError: Not a LangGraph agent state reference.
        """
        thread_id, _, checkpoint_id = text.removeprefix(_REF_PREFIX).rpartition(":")
        if not text.startswith(_REF_PREFIX) or not thread_id or not checkpoint_id:
            raise ValueError(
                f"{text!r} is not a LangGraph agent state reference (langgraph:<thread>:<checkpoint>)"
            )
        return cls(thread_id, checkpoint_id)

    def config(self) -> RunnableConfig:
        """The LangGraph config addressing this checkpoint."""
        return {
            "configurable": {
                "thread_id": self.thread_id,
                "checkpoint_ns": "",
                "checkpoint_id": self.checkpoint_id,
            }
        }


def content_text(content: Any) -> str:
    """A message's text: plain strings as they are, content blocks joined by their text parts."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def message_record(message: BaseMessage, tool_name: Callable[[str], str]) -> dict[str, Any]:
    """A message as the role/content dict stored in an AgentTurn; tool names in Orchestra form."""
    record: dict[str, Any] = {
        "role": _ROLES.get(message.type, message.type),
        "content": content_text(message.content),
    }
    if isinstance(message, AIMessage) and message.tool_calls:
        record["tool_calls"] = [
            {"id": call["id"], "name": tool_name(call["name"]), "args": call["args"]}
            for call in message.tool_calls
        ]
    if isinstance(message, ToolMessage):
        record["name"] = _artifact(message).get("tool") or tool_name(message.name or "")
        record["tool_call_id"] = message.tool_call_id
        if message.status == "error":
            record["status"] = "error"
    return record


def tool_call_records(
    reply: AIMessage, results: Sequence[ToolMessage], tool_name: Callable[[str], str]
) -> list[ToolCall]:
    """The turn's tool calls with their arguments and results (or errors), in the model's order."""
    by_id = {result.tool_call_id: result for result in results}
    records = []
    for call in reply.tool_calls:
        result = by_id.get(call["id"] or "")
        name = tool_name(call["name"])
        if result is None:
            records.append(ToolCall(name, call["args"], call["id"] or ""))
            continue
        artifact = _artifact(result)
        error = artifact.get("error")
        text = content_text(result.content)
        started_at, duration = _timing(artifact)
        record = ToolCall(
            name, call["args"], call["id"] or "", result=None if error else text, error=error,
            started_at=started_at, duration_s=duration,
        )  # fmt: skip
        records.append(record)
    return records


def _timing(artifact: Mapping[str, Any]) -> tuple[datetime | None, float | None]:
    """When a tool call ran, as its tool message recorded it (older conversations did not)."""
    started, duration = artifact.get("started_at"), artifact.get("duration_s")
    if not isinstance(started, int | float) or not isinstance(duration, int | float):
        return None, None
    return datetime.fromtimestamp(started, UTC), float(duration)


def unanswered_tool_calls(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """Tool messages closing the last reply's calls when a thread ended before they ran.

    Providers reject a conversation whose tool calls have no results, so a reused thread (full fidelity)
    is repaired before the next prompt is added.
    """
    if not messages or not isinstance(messages[-1], AIMessage):
        return []
    note = "Not run: the stage ended before this tool call was executed."
    return [
        ToolMessage(
            note,
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
            artifact={"tool": call["name"], "error": note},
        )
        for call in messages[-1].tool_calls
    ]


def _artifact(message: ToolMessage) -> dict[str, Any]:
    return message.artifact if isinstance(message.artifact, dict) else {}
