"""An agent turn as spans: the turn (a GenAI `chat` span), its tool calls and its commits, with their real times."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from attrs import frozen

from orchestra_core.model.spans import AttributeValue, Span, SpanContext, SpanKind, SpanStatus
from orchestra_core.model.turn import AgentTurn, ToolCall, TurnCommit

MESSAGE_CHARS = 500  # of an error in a span's status message


@frozen
class CommitSeen:
    """A commit as the workspace announced it (AgentCommitCreated): when, and what it holds."""

    at: datetime
    files: tuple[str, ...] = ()
    message_source: str = ""
    untracked: bool = False


@frozen
class TurnPlace:
    """Where a turn's spans go and what names them: its stage's span, the session, the parallel branch."""

    parent: SpanContext
    session_id: str
    branch: str | None
    completed_at: datetime


def turn_spans(
    turn: AgentTurn, place: TurnPlace, commits: Mapping[str, CommitSeen], new_id: Callable[[], int]
) -> list[Span]:
    """The spans of one turn: the model's turn (a `chat` span) with a child per tool call and per commit; a tool
    stage's command as an `execute_tool` span with its commits; a safety-net commit of writes no tool reported
    as commit spans alone.

    Times: the agent worked `duration_s` up to `ended_at` (when it handed the turn over; the event's time when
    that is unknown); each commit ends when the workspace announced it; the turn ends when it was recorded.
    """
    agent_end = turn.ended_at or place.completed_at
    agent_start = agent_end - timedelta(seconds=max(turn.duration_s, 0.0))
    end = max(place.completed_at, agent_end)
    trace = place.parent.trace_id
    if turn.untracked:
        return _commit_spans(turn, place.parent, place, agent_end, commits, new_id)
    context = SpanContext(trace, new_id())
    if turn.by_tool_stage:
        name, kind, attributes = _command(turn, place)
        children: list[Span] = []
    else:
        name, kind, attributes = f"chat {turn.model}", SpanKind.CLIENT, _chat_attributes(turn, place)
        children = [_tool_span(call, context, agent_end, new_id) for call in turn.tool_calls]
    children += _commit_spans(turn, context, place, agent_end, commits, new_id)
    span = Span(
        name=name, context=context, parent=place.parent, start=min(agent_start, end), end=end,
        attributes=attributes, kind=kind,
    )  # fmt: skip
    return [*children, span]


def _chat_attributes(turn: AgentTurn, place: TurnPlace) -> dict[str, AttributeValue]:
    """The GenAI semantic conventions' attributes of a model turn, then Orchestra's own."""
    usage = turn.token_usage
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": turn.provider,
        "gen_ai.system": turn.provider,  # the name before gen_ai.provider.name, still read by many backends
        "gen_ai.request.model": turn.requested_model or turn.model,
        "gen_ai.response.model": turn.model,
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
    }
    if usage.cache_read_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
    attributes.update(_orchestra_attributes(turn, place))
    attributes["orchestra.tool_calls"] = len(turn.tool_calls)
    attributes["orchestra.files_written"] = len(turn.files_written)
    if turn.cost_usd is not None:
        attributes["orchestra.cost_usd"] = turn.cost_usd
    if turn.fallback_reason:
        attributes["orchestra.fallback_reason"] = turn.fallback_reason
    return attributes


def _orchestra_attributes(turn: AgentTurn, place: TurnPlace) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        "orchestra.session_id": place.session_id,
        "orchestra.node_id": turn.node_id,
        "orchestra.turn_number": turn.turn_number,
    }
    if place.branch:
        attributes["orchestra.branch"] = place.branch
    return attributes


def _command(turn: AgentTurn, place: TurnPlace) -> tuple[str, SpanKind, dict[str, AttributeValue]]:
    """A tool stage's command: the turn is the command (its one `shell` call)."""
    call = turn.tool_calls[0] if turn.tool_calls else ToolCall("shell")
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        **_orchestra_attributes(turn, place),
        "orchestra.files_written": len(turn.files_written),
    }
    if call.result:
        attributes["orchestra.command.ended"] = call.result
    return f"execute_tool {call.name}", SpanKind.INTERNAL, attributes


def _tool_span(call: ToolCall, parent: SpanContext, agent_end: datetime, new_id: Callable[[], int]) -> Span:
    """A tool call, when the backend timed it; one it did not time is a moment at the end of the agent's turn."""
    duration = timedelta(seconds=max(call.duration_s or 0.0, 0.0))
    start = call.started_at or (agent_end - duration)
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.type": "function",
    }
    if call.call_id:
        attributes["gen_ai.tool.call.id"] = call.call_id
    status, message = SpanStatus.UNSET, ""
    if call.error is not None:
        attributes["error.type"] = "tool_error"
        status, message = SpanStatus.ERROR, _short(call.error)
    return Span(
        name=f"execute_tool {call.name}", context=SpanContext(parent.trace_id, new_id()), parent=parent,
        start=start, end=start + duration, attributes=attributes, status=status, status_message=message,
    )  # fmt: skip


def _commit_spans(
    turn: AgentTurn,
    parent: SpanContext,
    place: TurnPlace,
    agent_end: datetime,
    commits: Mapping[str, CommitSeen],
    new_id: Callable[[], int],
) -> list[Span]:
    """The turn's commits one after the other, from the end of the agent's work to each announcement."""
    spans = []
    cursor = agent_end
    files = turn.writes_by_repo()
    for commit in turn.commits:
        seen = commits.get(commit.sha)
        end = max(seen.at, cursor) if seen is not None else max(place.completed_at, cursor)
        attributes = _commit_attributes(commit, seen, files.get(commit.repo, []), turn, place)
        span = Span(
            name=f"commit {commit.repo}" if commit.repo else "commit", context=SpanContext(parent.trace_id, new_id()),
            parent=parent, start=cursor, end=end, attributes=attributes,
        )  # fmt: skip
        spans.append(span)
        cursor = end
    return spans


def _commit_attributes(
    commit: TurnCommit, seen: CommitSeen | None, written: list[str], turn: AgentTurn, place: TurnPlace
) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        "orchestra.commit_sha": commit.sha,
        "orchestra.repo": commit.repo,
        "orchestra.git_branch": commit.branch,
        "orchestra.commit.files": seen.files if seen is not None and seen.files else tuple(written),
        **_orchestra_attributes(turn, place),
    }
    if seen is not None and seen.message_source:
        attributes["orchestra.commit.message_source"] = seen.message_source
    if turn.untracked:
        attributes["orchestra.commit.untracked"] = True
    return attributes


def _short(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."
