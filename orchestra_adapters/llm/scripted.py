"""The scripted provider: a real LangChain chat model that plays a cassette, so agents run offline."""

from __future__ import annotations

import json
import math
import re
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

from orchestra_adapters.llm.cassette import Cassette, CassetteError, ScriptedReply
from orchestra_core.agents.tools import provider_safe_name

_CHARS_PER_TOKEN = 4
_NODE_KEY = "scripted_node"  # which node's list a reply came from, kept in saved conversations
_WORDS = re.compile(r"\s*\S+|\s+")  # streamed chunks: each word with the blank before it
_HOLD_LIMIT_S = 600.0  # a held reply goes on after this long even if its file never appears
_HOLD_POLL_S = 0.02


class ScriptedProviderError(Exception):
    """A provider failure the cassette asked for (`error:`), shaped like the SDKs' errors."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class CassettePlayer:
    """One run's position in a cassette, shared by every scripted model of the run (thread-safe).

    Each node has its own list of replies, consumed in call order across all of the node's visits;
    commit-message calls consume `commit_messages`; when a list runs out, `default` answers.
    """

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self._positions: dict[str, int] = {}
        self._lock = threading.Lock()

    def next_reply(self, purpose: str, node_id: str, *, held: int = 0) -> ScriptedReply:
        """The reply for the next call of `purpose` on `node_id`; `held` is how many of the node's replies the
        conversation already holds (a continued one, with `continue_conversations`): the list goes on after them.

        Raises:
            CassetteError: The list is used up and the cassette has no `default`.
        """
        if purpose == "commit_message":
            key, replies = "commit_messages", self.cassette.commit_message_replies()
        else:
            key, replies = f"nodes.{node_id}", self.cassette.nodes.get(node_id, ())
        with self._lock:
            position = max(self._positions.get(key, 0), held)
            self._positions[key] = position + 1
        if position < len(replies):
            return replies[position]
        if self.cassette.default is not None:
            return ScriptedReply(self.cassette.default)
        raise CassetteError(
            self.cassette.path,
            f"no reply left for call {position + 1} ({len(replies)} scripted) and the cassette has no default",
            key=key,
        )

    def calls(self, key: str) -> int:
        """How many calls the list `key` (`nodes.<id>` or `commit_messages`) has answered so far."""
        with self._lock:
            return self._positions.get(key, 0)


class ScriptedChatModel(BaseChatModel):
    """Plays a node's replies from a cassette; tool calls come out under provider-safe names."""

    player: CassettePlayer
    node_id: str = ""
    purpose: str = "agent"
    model_name: str = Field(default="scripted")

    @property
    def _llm_type(self) -> str:
        return "orchestra-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "node_id": self.node_id, "purpose": self.purpose}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any) -> Runnable:
        """Bind tools the way real providers do (the tool list is passed to every call)."""
        return self.bind(tools=list(tools), **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        message, _ = self._answer(messages, kwargs)
        return ChatResult(
            generations=[ChatGeneration(message=message)], llm_output={"model_name": self.model_name}
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The same reply as `_generate`, in chunks: its text word by word (`chunk_delay` apart; a reply's `hold`
        file is waited for after the first word), then each tool call as a tool call chunk, then the usage and
        response metadata on the last chunk, as providers stream them."""
        message, reply = self._answer(messages, kwargs)
        words = _WORDS.findall(message.content) if isinstance(message.content, str) else []
        for index, word in enumerate(words):
            if index == 1 and reply.hold:
                _wait_for(self.player.cassette.path.parent / reply.hold)
            elif index and self.player.cassette.chunk_delay_s:
                time.sleep(self.player.cassette.chunk_delay_s)
            yield _chunk(AIMessageChunk(content=word), run_manager)
        for index, call in enumerate(message.tool_calls):
            args = json.dumps(call["args"], ensure_ascii=False, default=str)  # as JSON, as providers send them
            piece = tool_call_chunk(name=call["name"], args=args, id=call["id"], index=index)
            yield _chunk(AIMessageChunk(content="", tool_call_chunks=[piece]), run_manager)
        last = AIMessageChunk(
            content="", usage_metadata=message.usage_metadata, response_metadata=message.response_metadata
        )
        yield _chunk(last, run_manager)

    def _answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[AIMessage, ScriptedReply]:
        """The next reply of the cassette as the AIMessage a provider returns (raises a scripted `error:`)."""
        continuing = self.player.cassette.continue_conversations
        held = _replies_held(messages, self.node_id) if continuing else 0
        reply = self.player.next_reply(self.purpose, self.node_id, held=held)
        if self.player.cassette.delay_s:
            time.sleep(self.player.cassette.delay_s)
        if reply.error is not None:
            raise ScriptedProviderError(reply.error, reply.status_code)
        tool_calls = [
            {
                "name": provider_safe_name(call.name),
                "args": dict(call.args),
                "id": _call_id(),
                "type": "tool_call",
            }
            for call in reply.tool_calls
        ]
        prompt_texts = [_message_text(message) for message in messages]
        if kwargs.get("tools"):
            prompt_texts.append(json.dumps(kwargs["tools"], default=str))
        message = AIMessage(
            content=reply.content,
            tool_calls=tool_calls,
            usage_metadata=_usage_metadata(reply, prompt_texts, tool_calls),
            response_metadata={
                "model_name": self.model_name,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                **({_NODE_KEY: self.node_id} if continuing else {}),
            },
        )
        return message, reply


def _chunk(message: AIMessageChunk, run_manager: Any) -> ChatGenerationChunk:
    chunk = ChatGenerationChunk(message=message)
    if run_manager is not None and isinstance(message.content, str) and message.content:
        run_manager.on_llm_new_token(message.content, chunk=chunk)
    return chunk


def _wait_for(path: Path) -> None:
    """Hold a streamed reply until `path` exists (a test releases it), at most `_HOLD_LIMIT_S`."""
    deadline = time.monotonic() + _HOLD_LIMIT_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(_HOLD_POLL_S)


def _usage_metadata(reply: ScriptedReply, prompt_texts: list[str], tool_calls: list[dict[str, Any]]) -> Any:
    """LangChain's usage metadata: the reply's scripted `usage`, else estimated from the texts."""
    usage = reply.usage
    if usage is None:
        input_tokens = _estimate_tokens(prompt_texts)
        output_tokens = _estimate_tokens([reply.content, *(json.dumps(call["args"]) for call in tool_calls)])
        return {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "input_token_details": {"cache_read": usage.cache_read_tokens, "cache_creation": usage.cache_write_tokens},
    }


def _replies_held(messages: Sequence[BaseMessage], node_id: str) -> int:
    """How many replies of `node_id`'s list the conversation holds (a resumed conversation holds earlier ones)."""
    return sum(
        1
        for message in messages
        if isinstance(message, AIMessage) and message.response_metadata.get(_NODE_KEY) == node_id
    )


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _message_text(message: BaseMessage) -> str:
    calls = getattr(message, "tool_calls", None) or []
    return str(message.content) + "".join(json.dumps(call.get("args", {})) for call in calls)


def _estimate_tokens(texts: Any) -> int:
    """About four characters a token, at least one: plausible enough to exercise token accounting."""
    return max(1, math.ceil(sum(len(text) for text in texts) / _CHARS_PER_TOKEN))
