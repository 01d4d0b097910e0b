"""Turn records, agent state references, provider error classification and usage totals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from orchestra_adapters.backends.model_errors import model_failure
from orchestra_adapters.backends.turn_records import (
    AgentStateRef,
    content_text,
    message_record,
    tool_call_records,
    unanswered_tool_calls,
)
from orchestra_adapters.backends.usage import NodeUsage, UsageLedger
from orchestra_adapters.llm.provider_errors import is_transient, status_code_of
from orchestra_adapters.llm.replies import token_usage
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.turn import TokenUsage, ToolCall


def _names(safe: str) -> str:
    return safe.replace("__", ":")


REPLY = AIMessage(
    "Reading.",
    tool_calls=[
        {"name": "repo__read-file", "args": {"path": "a"}, "id": "c1", "type": "tool_call"},
        {"name": "repo__write-file", "args": {"path": "b"}, "id": "c2", "type": "tool_call"},
    ],
    usage_metadata={"input_tokens": 120, "output_tokens": 30, "total_tokens": 150},
)
RESULTS = [
    ToolMessage(
        "contents",
        tool_call_id="c1",
        name="repo__read-file",
        artifact={"tool": "repo:read-file", "error": None},
    ),
    ToolMessage(
        "Error: no",
        tool_call_id="c2",
        name="repo__write-file",
        status="error",
        artifact={"tool": "repo:write-file", "error": "no"},
    ),
]


def test_messages_become_role_content_dicts_with_orchestra_tool_names() -> None:
    assert message_record(SystemMessage("rules"), _names) == {"role": "system", "content": "rules"}
    assert message_record(HumanMessage("task"), _names) == {"role": "user", "content": "task"}
    assert message_record(REPLY, _names) == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {"id": "c1", "name": "repo:read-file", "args": {"path": "a"}},
            {"id": "c2", "name": "repo:write-file", "args": {"path": "b"}},
        ],
    }
    assert message_record(RESULTS[1], _names) == {
        "role": "tool",
        "content": "Error: no",
        "name": "repo:write-file",
        "tool_call_id": "c2",
        "status": "error",
    }


def test_tool_call_records_carry_the_time_each_call_ran_when_its_message_has_it() -> None:
    from datetime import UTC, datetime

    timed = ToolMessage(
        "contents", tool_call_id="c1", name="repo__read-file",
        artifact={"tool": "repo:read-file", "error": None, "started_at": 1767225600.25, "duration_s": 0.5},
    )  # fmt: skip
    first, second = tool_call_records(REPLY, [timed, RESULTS[1]], _names)
    assert (first.started_at, first.duration_s) == (datetime(2026, 1, 1, 0, 0, 0, 250000, tzinfo=UTC), 0.5)
    assert (second.started_at, second.duration_s) == (None, None)  # a conversation from before calls were timed


def test_tool_call_records_pair_calls_with_results_or_errors() -> None:
    assert tool_call_records(REPLY, list(reversed(RESULTS)), _names) == [
        ToolCall("repo:read-file", {"path": "a"}, "c1", result="contents"),
        ToolCall("repo:write-file", {"path": "b"}, "c2", error="no"),
    ]
    assert tool_call_records(REPLY, [], _names)[0] == ToolCall("repo:read-file", {"path": "a"}, "c1")


def test_content_blocks_and_token_usage() -> None:
    assert content_text([{"type": "text", "text": "a"}, {"type": "tool_use", "id": "x"}, "b"]) == "ab"
    assert content_text(None) == ""
    assert token_usage(REPLY) == TokenUsage(120, 30)
    assert token_usage(AIMessage("no usage reported")) == TokenUsage(0, 0)


def test_unanswered_tool_calls_are_closed_before_a_thread_continues() -> None:
    closing = unanswered_tool_calls([HumanMessage("go"), REPLY])
    assert [(m.tool_call_id, m.status) for m in closing] == [("c1", "error"), ("c2", "error")]
    assert "Not run" in str(closing[0].content)
    assert unanswered_tool_calls([HumanMessage("go"), REPLY, *RESULTS]) == []
    assert unanswered_tool_calls([HumanMessage("go"), AIMessage("done")]) == []
    assert unanswered_tool_calls([]) == []


@given(
    thread=st.text(min_size=1).filter(lambda t: t.strip()),
    checkpoint=st.text(min_size=1).filter(lambda c: ":" not in c),
)
def test_state_refs_round_trip(thread: str, checkpoint: str) -> None:
    ref = AgentStateRef(thread, checkpoint)
    assert AgentStateRef.parse(ref.render()) == ref
    assert ref.config()["configurable"] == {
        "thread_id": thread,
        "checkpoint_ns": "",
        "checkpoint_id": checkpoint,
    }


@pytest.mark.parametrize("text", ["", "langgraph:", "langgraph:thread", "langgraph::cp", "other:t:c"])
def test_malformed_state_refs_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        AgentStateRef.parse(text)


class _SdkError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class _Response:
    status_code = 502


class _HttpError(Exception):
    response = _Response()


class RateLimitError(Exception):
    pass


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (_SdkError("slow down", 429), True),
        (_SdkError("conflict", 409), True),
        (_SdkError("oops", 500), True),
        (_HttpError("bad gateway"), True),
        (TimeoutError("read timed out"), True),
        (ConnectionResetError("reset"), True),
        (RateLimitError("no status attribute"), True),
        (_SdkError("bad key", 401), False),
        (_SdkError("forbidden", 403), False),
        (_SdkError("bad request", 400), False),
        (ValueError("context too long"), False),
    ],
)
def test_transient_errors_retry_and_others_fail(error: Exception, transient: bool) -> None:
    assert is_transient(error) is transient
    outcome = model_failure(error, "anthropic", "claude-x")
    assert outcome.status == (StageStatus.RETRY if transient else StageStatus.FAIL)
    assert outcome.failure_reason.startswith("anthropic model claude-x failed")
    assert str(error) in outcome.failure_reason


def test_status_codes_are_read_from_the_error_or_its_response() -> None:
    assert status_code_of(_SdkError("x", 418)) == 418
    assert status_code_of(_HttpError()) == 502
    assert status_code_of(ValueError()) is None
    assert model_failure(_SdkError("x", 418), "p", "m").failure_reason == "p model m failed (HTTP 418): x"


def test_usage_ledger_sums_every_visit_per_node() -> None:
    ledger = UsageLedger()
    ledger.add("a", NodeUsage(1, 1, TokenUsage(10, 2), 0.5))
    ledger.add("b", NodeUsage().with_call(TokenUsage(3, 1)))
    ledger.add("a", NodeUsage(2, 2, TokenUsage(5, 5), 1.0))
    assert ledger.for_node("a") == NodeUsage(3, 3, TokenUsage(15, 7), 1.5)
    assert ledger.for_node("b") == NodeUsage(1, 0, TokenUsage(3, 1), 0.0)
    assert ledger.for_node("never") == NodeUsage()
    assert list(ledger.totals()) == ["a", "b"]
