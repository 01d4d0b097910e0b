"""Commit message generators: the scripted fake and the LangChain chat-model adapter."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from orchestra_adapters.llm.commit_messages import SYSTEM_PROMPT, ChatModelCommitMessages, content_text
from orchestra_core.model.pricing import ModelUsage
from orchestra_core.model.turn import TokenUsage
from orchestra_core.ports.commit_messages import CommitMessageGenerator, CommitMessageRequest
from orchestra_core.testing.commit_messages import ScriptedCommitMessages, ScriptExhaustedError

REQUEST = CommitMessageRequest(
    diff="diff --git a/a.py b/a.py\n+print('x')\n",
    intent="Adding a print.",
    files=["a.py"],
    repo="backend",
    node_id="code",
)


class _RecordingModel(GenericFakeChatModel):
    """The fake chat model from langchain_core, keeping what it was asked."""

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 - pydantic field default

    def invoke(self, messages: Any, *args: Any, **kwargs: Any) -> BaseMessage:
        self.seen.append(list(messages))
        return super().invoke(messages, *args, **kwargs)


def test_scripted_messages_answer_in_order_and_record_requests() -> None:
    scripted = ScriptedCommitMessages(["first", RuntimeError("boom")])
    assert isinstance(scripted, CommitMessageGenerator)
    assert scripted.generate(REQUEST) == "first"
    with pytest.raises(RuntimeError, match="boom"):
        scripted.generate(REQUEST)
    with pytest.raises(ScriptExhaustedError):
        scripted.generate(REQUEST)
    assert scripted.requests == [REQUEST, REQUEST, REQUEST]
    repeating = ScriptedCommitMessages(["same"], repeat_last=True)
    assert [repeating.generate(REQUEST) for _ in range(3)] == ["same"] * 3


def test_chat_model_adapter_sends_intent_files_and_diff() -> None:
    model = _RecordingModel(messages=iter([AIMessage(content="Add print\n\nShow x.")]), seen=[])
    generator = ChatModelCommitMessages(model)
    assert isinstance(generator, CommitMessageGenerator)
    assert generator.generate(REQUEST) == "Add print\n\nShow x."
    [[system, user]] = model.seen
    assert system.content == SYSTEM_PROMPT and "72 characters" in system.content
    assert "Agent intent: Adding a print." in user.content and "Files changed: a.py" in user.content
    assert user.content.endswith(REQUEST.diff) and "shortened" not in user.content


def test_chat_model_adapter_mentions_truncation_and_propagates_errors() -> None:
    truncated = CommitMessageRequest(diff="...", intent="", files=["a"], diff_truncated=True)
    model = _RecordingModel(messages=iter([AIMessage(content="x")]), seen=[])
    ChatModelCommitMessages(model).generate(truncated)
    assert (
        "The diff was shortened" in model.seen[0][1].content
        and "(the agent did not say)" in model.seen[0][1].content
    )
    with pytest.raises(StopIteration):
        ChatModelCommitMessages(_RecordingModel(messages=iter([]), seen=[])).generate(REQUEST)


def test_content_text_handles_blocks() -> None:
    assert content_text("plain") == "plain"
    assert content_text([{"type": "text", "text": "a"}, {"type": "tool_use"}, "b"]) == "ab"


def test_chat_model_adapter_reports_the_model_and_tokens_each_message_used() -> None:
    reply = AIMessage(
        content="Add print",
        usage_metadata={
            "input_tokens": 900, "output_tokens": 12, "total_tokens": 912,
            "input_token_details": {"cache_read": 800},
        },
        response_metadata={"model_name": "claude-haiku-4-5-20251001"},
    )
    generator = ChatModelCommitMessages(_RecordingModel(messages=iter([reply]), seen=[]), provider="anthropic")
    used: list[ModelUsage] = []
    assert generator.generate(REQUEST, on_usage=used.append) == "Add print"
    assert used == [ModelUsage("claude-haiku-4-5-20251001", "anthropic", TokenUsage(900, 12, cache_read_tokens=800))]
